import { sign, type KeyObject } from "node:crypto";
import {
  BasicOCSPResponse,
  CertStatus,
  id_pkix_ocsp_basic,
  id_pkix_ocsp_nonce,
  OCSPRequest,
  OCSPResponse,
  OCSPResponseStatus,
  ResponderID,
  ResponseBytes,
  ResponseData,
  RevokedInfo,
  SingleResponse,
  KeyHash,
} from "@peculiar/asn1-ocsp";
import { AsnConvert, OctetString } from "@peculiar/asn1-schema";
import { AlgorithmIdentifier, Certificate, CRLReason, type Extension } from "@peculiar/asn1-x509";
import type { CertificateIdentity, CertIdHash } from "../certificates/ocsp/certificate-identity.ts";
import { hashAlgorithmOids } from "../certificates/ocsp/ocsp-request.ts";
import { normalizeSerialNumberHex } from "../certificates/x509/serial-number.ts";
import { sameBytes } from "../certificates/same-bytes.ts";

/** What the responder says of one serial number the mock CA issued. */
export type MockOcspState =
  | { status: "good" | "unknown"; thisUpdate: number }
  | { status: "revoked"; thisUpdate: number; revokedAt: number; reason: number }
  /** The certificate's source offers no OCSP: the responder refuses the query (RFC 6960 §2.3 unauthorized). */
  | { status: "unauthorized" };

/** The states of these serial numbers (canonical hex); a serial the mock CA never issued is missing. */
export type MockOcspLookup = (serialNumbers: readonly string[]) => Promise<Map<string, MockOcspState>>;

export interface MockOcspSigner {
  /** The mock CA's certificate (DER): CertIDs name it. */
  ca: CertificateIdentity;
  /** The delegated responder certificate (DER) and its key. */
  responder: CertificateIdentity;
  responderDer: Uint8Array;
  responderKey: KeyObject;
}

/** Requests answered in one response, at most; more is malformedRequest. */
const maxRequests = 16;
/** How long an answer may be used: changes reach checks at once anyway (the mock drops cached answers). */
export const mockOcspValidityMs = 60 * 60 * 1000;
const sha256WithRsa = "1.2.840.113549.1.1.11";
const certIdHashes = new Map<string, CertIdHash>(Object.entries(hashAlgorithmOids).map(([name, oid]) => [oid, name as CertIdHash]));

const seconds = (ms: number) => new Date(Math.floor(ms / 1000) * 1000);

/**
 * The mock CA's OCSP responder (RFC 6960, RFC 5019 profile): answers an
 * OCSPRequest (DER) with a BasicOCSPResponse signed by the delegated
 * responder certificate, which it carries; ResponderID byKey. Per request:
 * a CertID (SHA-1 or SHA-256) naming the mock CA and a serial it issued is
 * good / revoked (time and reason) / unknown as its state says; any other
 * CertID is unknown. thisUpdate is the state's sourceUpdatedAt (or the time
 * of the change, or now for a certificate never changed), producedAt the
 * latest thisUpdate of the answers (the answer is presented as pre-produced
 * when the state was set), nextUpdate an hour past the later of thisUpdate
 * and now. A nonce (RFC 8954) is echoed. Unreadable requests, none or more
 * than 16 requests: malformedRequest; a certificate whose source offers no
 * OCSP: unauthorized. Times are whole seconds.
 */
export async function answerOcspRequest(requestDer: Uint8Array, signer: MockOcspSigner, lookup: MockOcspLookup, now: number): Promise<Uint8Array> {
  let request: OCSPRequest;
  try {
    request = AsnConvert.parse(requestDer, OCSPRequest);
  } catch {
    return statusOnly(OCSPResponseStatus.malformedRequest);
  }
  const list = request.tbsRequest.requestList;
  if (list.length === 0 || list.length > maxRequests) return statusOnly(OCSPResponseStatus.malformedRequest);

  const serials = list.map(({ reqCert }) => {
    const hash = certIdHashes.get(reqCert.hashAlgorithm.algorithm);
    const ours =
      hash !== undefined &&
      sameBytes(reqCert.issuerNameHash.buffer, signer.ca.nameHash(hash)) &&
      sameBytes(reqCert.issuerKeyHash.buffer, signer.ca.keyHash(hash));
    return ours ? normalizeSerialNumberHex(Buffer.from(reqCert.serialNumber).toString("hex")) : undefined;
  });
  const states = await lookup(serials.filter((s): s is string => s !== undefined));
  const answers = serials.map((serial) => (serial === undefined ? undefined : states.get(serial)));
  if (answers.some((a) => a?.status === "unauthorized")) return statusOnly(OCSPResponseStatus.unauthorized);

  const responses = list.map(({ reqCert }, i) => {
    const state = answers[i] as Exclude<MockOcspState, { status: "unauthorized" }> | undefined;
    const thisUpdate = seconds(state?.thisUpdate ?? now);
    const certStatus =
      state?.status === "good"
        ? new CertStatus({ good: null })
        : state?.status === "revoked"
          ? new CertStatus({ revoked: new RevokedInfo({ revocationTime: seconds(state.revokedAt), revocationReason: new CRLReason(state.reason) }) })
          : new CertStatus({ unknown: null });
    return new SingleResponse({
      certID: reqCert,
      certStatus,
      thisUpdate,
      nextUpdate: seconds(Math.max(thisUpdate.getTime(), now) + mockOcspValidityMs),
    });
  });
  const producedAt = new Date(Math.max(...responses.map((r) => r.thisUpdate.getTime())));
  const nonce = request.tbsRequest.requestExtensions?.find((e: Extension) => e.extnID === id_pkix_ocsp_nonce);
  const data = new ResponseData({
    responderID: new ResponderID({ byKey: new KeyHash(signer.responder.keyHash("sha1")) }),
    producedAt,
    responses,
    ...(nonce ? { responseExtensions: [nonce] } : {}),
  });
  const tbs = new Uint8Array(AsnConvert.serialize(data));
  const basic = new BasicOCSPResponse({
    tbsResponseData: data,
    signatureAlgorithm: new AlgorithmIdentifier({ algorithm: sha256WithRsa, parameters: null }),
    signature: toArrayBuffer(sign("sha256", tbs, signer.responderKey)),
    certs: [AsnConvert.parse(signer.responderDer, Certificate)],
  });
  const outer = new OCSPResponse({
    responseStatus: OCSPResponseStatus.successful,
    responseBytes: new ResponseBytes({ responseType: id_pkix_ocsp_basic, response: new OctetString(AsnConvert.serialize(basic)) }),
  });
  return new Uint8Array(AsnConvert.serialize(outer));
}

function statusOnly(status: OCSPResponseStatus): Uint8Array {
  return new Uint8Array(AsnConvert.serialize(new OCSPResponse({ responseStatus: status })));
}


function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}
