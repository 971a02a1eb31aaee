import { createHash, verify, type KeyObject, type X509Certificate } from "node:crypto";
import {
  BasicOCSPResponse,
  id_kp_OCSPSigning,
  id_pkix_ocsp_basic,
  id_pkix_ocsp_nonce,
  OCSPResponse,
  OCSPResponseStatus,
  type SingleResponse,
} from "@peculiar/asn1-ocsp";
import { AsnConvert } from "@peculiar/asn1-schema";
import type { Extension } from "@peculiar/asn1-x509";
import { isRevocationReasonCode } from "../model.ts";
import { normalizeSerialNumberHex } from "../x509/serial-number.ts";
import { CertificateIdentity, type CertIdHash } from "./certificate-identity.ts";
import { hashAlgorithmOids } from "./ocsp-request.ts";
import { signatureAlgorithmsByOid } from "../signature-algorithms.ts";
import { sameBytes } from "../same-bytes.ts";
import { OcspRejectedError, type OcspRejection, type VerifiedOcspResponse } from "./verified-ocsp-response.ts";

const successful: number = OCSPResponseStatus.successful;
const statusNames = new Map<number, string>(
  Object.entries(OCSPResponseStatus)
    .filter(([, v]) => typeof v === "number")
    .map(([k, v]) => [v as number, k]),
);

const certIdHashes = new Map<string, CertIdHash>(Object.entries(hashAlgorithmOids).map(([name, oid]) => [oid, name as CertIdHash]));

function rejected(rejection: OcspRejection, message: string): OcspRejectedError {
  return new OcspRejectedError(rejection, message);
}


function parse<T>(bytes: ArrayBuffer | Uint8Array, type: new () => T, what: string): T {
  try {
    return AsnConvert.parse(bytes, type);
  } catch (error) {
    throw rejected("malformed", `${what} is not valid DER (${(error as Error).message})`);
  }
}

/**
 * Reads and checks an OCSPResponse (RFC 6960 §4.2, RFC 5019 §2.2) for the
 * certificate with `serialHex` issued by `issuer`:
 * - responseStatus successful, of type id-pkix-ocsp-basic;
 * - signed by the issuer itself, or by a responder certificate carried in the
 *   response that the issuer issued (name and signature) with
 *   id-kp-OCSPSigning in its extendedKeyUsage (§4.2.2.2): anyone else's
 *   signature is refused;
 * - a SingleResponse whose CertID (SHA-1 or SHA-256) names this certificate;
 * - no critical extension it does not understand.
 * Signatures: RSA PKCS#1 v1.5 or ECDSA with SHA-256/384/512. Throws OcspRejectedError.
 */
export function readOcspResponse(der: Uint8Array, issuer: CertificateIdentity, serialHex: string): VerifiedOcspResponse {
  const outer = parse(der, OCSPResponse, "the response");
  if (outer.responseStatus !== successful) {
    const name = statusNames.get(outer.responseStatus) ?? String(outer.responseStatus);
    throw rejected(outer.responseStatus === OCSPResponseStatus.tryLater ? "try_later" : "error_status", `the responder answered ${name}`);
  }
  if (!outer.responseBytes) throw rejected("malformed", "a successful response without responseBytes");
  if (outer.responseBytes.responseType !== id_pkix_ocsp_basic) {
    throw rejected("malformed", `unsupported response type ${outer.responseBytes.responseType}`);
  }
  const basic = parse(outer.responseBytes.response.buffer, BasicOCSPResponse, "the basic response");
  const data = basic.tbsResponseData;
  if (!basic.tbsResponseDataRaw) throw rejected("malformed", "the signed part of the response could not be read");
  const signer = findSigner(basic, issuer);
  checkSignature(basic, signer.key);
  refuseUnknownCritical(data.responseExtensions, "response");

  const single = data.responses.find((r) => names(r, issuer, serialHex));
  if (!single) throw rejected("no_matching_response", "the response holds no answer for this certificate");
  refuseUnknownCritical(single.singleExtensions, "single response");
  const status = single.certStatus;
  let answer: Pick<VerifiedOcspResponse, "status" | "revokedAt" | "revokedReason">;
  if (status.good !== undefined) answer = { status: "good", revokedAt: null, revokedReason: null };
  else if (status.revoked) {
    const reason = status.revoked.revocationReason?.reason ?? 0;
    if (!isRevocationReasonCode(reason) || reason === 8) throw rejected("malformed", `revocation reason ${reason} is not a CRLReason for a certificate`);
    answer = { status: "revoked", revokedAt: status.revoked.revocationTime.getTime(), revokedReason: reason };
  } else answer = { status: "unknown", revokedAt: null, revokedReason: null };
  return {
    sha256: createHash("sha256").update(der).digest("hex"),
    ...answer,
    producedAt: data.producedAt.getTime(),
    thisUpdate: single.thisUpdate.getTime(),
    nextUpdate: single.nextUpdate?.getTime(),
    signerValidity: signer.validity,
    nonceValue: nonceOf(data.responseExtensions),
  };
}

function nonceOf(extensions: Extension[] | undefined): Uint8Array | undefined {
  const nonce = extensions?.find((e) => e.extnID === id_pkix_ocsp_nonce);
  return nonce && new Uint8Array(nonce.extnValue.buffer);
}

interface Signer {
  key: KeyObject;
  validity: VerifiedOcspResponse["signerValidity"];
}

function matchesResponder(identity: CertificateIdentity, basic: BasicOCSPResponse): boolean {
  const id = basic.tbsResponseData.responderID;
  if (id.byKey) return sameBytes(id.byKey.buffer, identity.keyHash("sha1"));
  if (id.byName) return sameBytes(AsnConvert.serialize(id.byName), identity.subject);
  return false;
}

/** The issuer, or the delegated responder certificate the response names and carries (RFC 6960 §4.2.2.2). */
function findSigner(basic: BasicOCSPResponse, issuer: CertificateIdentity): Signer {
  if (matchesResponder(issuer, basic)) return { key: issuer.certificate.publicKey, validity: undefined };
  for (const carried of basic.certs ?? []) {
    let responder: CertificateIdentity;
    try {
      responder = new CertificateIdentity(new Uint8Array(AsnConvert.serialize(carried)));
    } catch {
      throw rejected("malformed", "a certificate in the response cannot be read");
    }
    if (!matchesResponder(responder, basic)) continue;
    const native: X509Certificate = responder.certificate;
    if (!native.checkIssued(issuer.certificate) || !native.verify(issuer.certificate.publicKey)) {
      throw rejected("unauthorized_signer", "the responder certificate was not issued by the certificate's issuer");
    }
    if (!(native.keyUsage ?? []).includes(id_kp_OCSPSigning)) {
      throw rejected("unauthorized_signer", "the responder certificate does not allow OCSP signing (id-kp-OCSPSigning)");
    }
    return { key: native.publicKey, validity: { notBefore: Date.parse(native.validFrom), notAfter: Date.parse(native.validTo) } };
  }
  throw rejected("unauthorized_signer", "the response is signed neither by the issuer nor by a responder certificate it carries");
}

function checkSignature(basic: BasicOCSPResponse, key: KeyObject): void {
  const oid = basic.signatureAlgorithm.algorithm;
  const scheme = signatureAlgorithmsByOid.get(oid);
  if (!scheme) throw rejected("signature_invalid", `unsupported signature algorithm ${oid}`);
  const keyType = key.asymmetricKeyType;
  if ((scheme.kind === "rsa" && keyType !== "rsa") || (scheme.kind === "ecdsa" && keyType !== "ec")) {
    throw rejected("signature_invalid", `a ${scheme.kind.toUpperCase()} signature cannot come from a ${keyType} key`);
  }
  let ok: boolean;
  try {
    ok = verify(scheme.hash, new Uint8Array(basic.tbsResponseDataRaw!), scheme.kind === "ecdsa" ? { key, dsaEncoding: "der" } : key, new Uint8Array(basic.signature));
  } catch (error) {
    throw rejected("signature_invalid", `the signature could not be checked: ${(error as Error).message}`);
  }
  if (!ok) throw rejected("signature_invalid", "the signature does not verify with the signer's key");
}

function names(single: SingleResponse, issuer: CertificateIdentity, serialHex: string): boolean {
  const id = single.certID;
  const hash = certIdHashes.get(id.hashAlgorithm.algorithm);
  if (!hash) return false;
  const serial = normalizeSerialNumberHex(Buffer.from(id.serialNumber).toString("hex"));
  return (
    serial === serialHex &&
    sameBytes(id.issuerNameHash.buffer, issuer.nameHash(hash)) &&
    sameBytes(id.issuerKeyHash.buffer, issuer.keyHash(hash))
  );
}

const understood = new Set([id_pkix_ocsp_nonce]);

function refuseUnknownCritical(extensions: Extension[] | undefined, where: string): void {
  const unknown = extensions?.find((e) => e.critical && !understood.has(e.extnID));
  if (unknown) throw rejected("unknown_critical_extension", `the ${where} has an unknown critical extension ${unknown.extnID}`);
}
