import { CertID, id_pkix_ocsp_nonce, OCSPRequest, Request, TBSRequest } from "@peculiar/asn1-ocsp";
import { AsnConvert, OctetString } from "@peculiar/asn1-schema";
import { AlgorithmIdentifier, Extension } from "@peculiar/asn1-x509";
import type { CertificateIdentity, CertIdHash } from "./certificate-identity.ts";

export const hashAlgorithmOids: Record<CertIdHash, string> = {
  sha1: "1.3.14.3.2.26",
  sha256: "2.16.840.1.101.3.4.2.1",
};

/** DER NULL: the parameters of a hash AlgorithmIdentifier, as RFC 5019 responders expect them. */
const derNull = new Uint8Array([0x05, 0x00]).buffer;

export interface OcspRequest {
  der: Uint8Array;
  /** The nonce extension's extnValue as sent, when one was: the response must carry the same. */
  nonceValue: Uint8Array | undefined;
}

/** The INTEGER content octets of a serial number in canonical hex (positive: a leading 00 when the top bit is set). */
export function serialOctets(serialHex: string): Uint8Array {
  const bytes = Buffer.from(serialHex, "hex");
  return bytes[0]! >= 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes;
}

/**
 * One request for one certificate (RFC 6960 §4.1, profiled by RFC 5019 §2.1):
 * a CertID hashed with SHA-1, as RFC 5019 requires responders to accept,
 * no requestorName and no signature; optionally a nonce (RFC 8954), which a
 * responder that pre-produces its responses ignores.
 */
export function ocspRequest(issuer: CertificateIdentity, serialHex: string, nonce: Uint8Array | undefined): OcspRequest {
  const certId = new CertID({
    hashAlgorithm: new AlgorithmIdentifier({ algorithm: hashAlgorithmOids.sha1, parameters: derNull }),
    issuerNameHash: new OctetString(issuer.nameHash("sha1")),
    issuerKeyHash: new OctetString(issuer.keyHash("sha1")),
    serialNumber: toArrayBuffer(serialOctets(serialHex)),
  });
  const nonceValue = nonce && new Uint8Array(AsnConvert.serialize(new OctetString(nonce)));
  const tbsRequest = new TBSRequest({
    requestList: [new Request({ reqCert: certId })],
    ...(nonceValue ? { requestExtensions: [new Extension({ extnID: id_pkix_ocsp_nonce, critical: false, extnValue: new OctetString(nonceValue) })] } : {}),
  });
  return { der: new Uint8Array(AsnConvert.serialize(new OCSPRequest({ tbsRequest }))), nonceValue };
}

export function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}
