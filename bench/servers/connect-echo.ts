/**
 * The baselines: a bare connect-node server on the project's generated code.
 * CheckCertificateStatus answers every call at once with a response of the
 * shape shomei answers (the certificate asked about, a GOOD liveness check by
 * CRL with a new status record id): what the RPC stack alone costs, with no
 * authentication, database or revocation source. Verify does only what the
 * cryptography needs: parse the certificate (node:crypto), check it with the
 * key of the CA in BENCH_CA_CERTIFICATE, check the RSA PKCS#1 v1.5 signature
 * over the digest, answer OK. Connect (JSON and binary) over HTTP/1.1 on one
 * port, gRPC over h2c on another; prints `ready <http1 port> <h2c port>`.
 */
import { randomUUID, verify, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { Certificate_Type, CertificateStatus_CheckMethod, CertificateStatus_CheckPurpose, CertificateStatus_Status } from "../../gen/service/verify/v2/certificate_pb.ts";
import { CertificateService, CheckCertificateStatusResponseSchema } from "../../gen/service/verify/v2/certificate_service_pb.ts";
import { HashAlgorithm, Verification_Result, VerificationService, VerifyResponseSchema } from "../../gen/service/verify/v2/verification_service_pb.ts";

const issued = Date.parse("2026-11-01T09:00:00Z");
const caKey = process.env.BENCH_CA_CERTIFICATE ? new X509Certificate(readFileSync(process.env.BENCH_CA_CERTIFICATE)).publicKey : undefined;
/** DER of DigestInfo's AlgorithmIdentifier for SHA-256 and the OCTET STRING header of the digest (RFC 8017 §9.2). */
const sha256DigestInfo = Buffer.from("3031300d060960864801650304020105000420", "hex");

function routes(router: ConnectRouter): void {
  router.service(CertificateService, {
    checkCertificateStatus(req) {
      const now = Date.now();
      return create(CheckCertificateStatusResponseSchema, {
        certificate: { id: req.certificateId, type: Certificate_Type.JPKI_CARD_DIGITAL_SIGNATURE, createdAt: timestampFromMs(issued) },
        certificateStatus: {
          id: randomUUID(),
          status: CertificateStatus_Status.GOOD,
          checkMethod: CertificateStatus_CheckMethod.CRL,
          checkPurpose: CertificateStatus_CheckPurpose.LIVENESS_CHECK,
          sourceUpdatedAt: timestampFromMs(Math.floor(now / 1000) * 1000),
          createdAt: timestampFromMs(now),
        },
      });
    },
  });
  router.service(VerificationService, {
    verify(req) {
      const certificate = new X509Certificate(req.certificate);
      if (!caKey || !certificate.verify(caKey) || req.hashAlgorithm !== HashAlgorithm.SHA256) throw new Error("not a certificate of the bench CA");
      // With no digest named, OpenSSL checks the PKCS#1 v1.5 padding and compares the DigestInfo as given.
      const ok = verify(null, Buffer.concat([sha256DigestInfo, req.digest]), certificate.publicKey, req.signature);
      return create(VerifyResponseSchema, {
        verification: { id: randomUUID(), result: ok ? Verification_Result.OK : Verification_Result.SIGNATURE_MISMATCH, hashAlgorithm: req.hashAlgorithm, createdAt: timestampFromMs(Date.now()) },
      });
    },
  });
}

const handler = connectNodeAdapter({ routes });
const listen = (server: http.Server | http2.Http2Server) =>
  new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));
const http1Port = await listen(http.createServer(handler));
const h2cPort = await listen(http2.createServer(handler));
console.log(`ready ${http1Port} ${h2cPort}`);
