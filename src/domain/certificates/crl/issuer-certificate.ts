import { createPublicKey, type KeyObject } from "node:crypto";
import { readExtension } from "./crl-extensions.ts";
import { DerCursor, derTags } from "./der-cursor.ts";
import { CrlRejectedError } from "./verified-crl.ts";

/** What checking a list needs from its issuer's certificate. */
export interface CrlIssuer {
  /** The subject Name TLV, exactly as encoded: a list's issuer must be these bytes. */
  subject: Uint8Array;
  publicKey: KeyObject;
  /** undefined when the certificate has no keyUsage extension. */
  allowsCrlSign: boolean | undefined;
}

const keyUsageArc = 0x0f;
/** cRLSign is bit 6 of KeyUsage: 0x02 of the first octet. */
const crlSignMask = 0x02;

/**
 * Reads the issuer certificate with the same DER reader as the list (the
 * worker then loads no ASN.1 library). The certificate is configuration, a
 * trust anchor the caller already parsed; one this cannot read is the
 * caller's mistake: TypeError.
 */
export function readCrlIssuer(der: Uint8Array): CrlIssuer {
  try {
    return read(der);
  } catch (error) {
    if (error instanceof CrlRejectedError) throw new TypeError(`issuer certificate is not a DER X.509 certificate: ${error.message}`);
    if (error instanceof Error && !(error instanceof TypeError)) throw new TypeError(`issuer certificate has an unusable public key: ${error.message}`);
    throw error;
  }
}

function read(der: Uint8Array): CrlIssuer {
  const cursor = new DerCursor(der);
  const certificateEnd = cursor.expect(0, der.length, derTags.sequence, "Certificate");
  if (certificateEnd !== der.length) throw new TypeError("issuer certificate has trailing data");
  const tbsEnd = cursor.expect(cursor.start, certificateEnd, derTags.sequence, "tbsCertificate");
  let at = cursor.start;
  if (cursor.peek(at, tbsEnd) === 0xa0) at = cursor.read(at, tbsEnd, "version");
  at = cursor.expect(at, tbsEnd, derTags.integer, "serialNumber");
  at = cursor.expect(at, tbsEnd, derTags.sequence, "signature");
  at = cursor.expect(at, tbsEnd, derTags.sequence, "issuer");
  at = cursor.expect(at, tbsEnd, derTags.sequence, "validity");
  const subjectStart = at;
  at = cursor.expect(at, tbsEnd, derTags.sequence, "subject");
  const subject = der.slice(subjectStart, at);
  const keyStart = at;
  at = cursor.expect(at, tbsEnd, derTags.sequence, "subjectPublicKeyInfo");
  const publicKey = createPublicKey({ key: Buffer.from(der.buffer, der.byteOffset + keyStart, at - keyStart), format: "der", type: "spki" });
  if (cursor.peek(at, tbsEnd) === 0x81) at = cursor.read(at, tbsEnd, "issuerUniqueID");
  if (cursor.peek(at, tbsEnd) === 0x82) at = cursor.read(at, tbsEnd, "subjectUniqueID");
  let allowsCrlSign: boolean | undefined;
  if (cursor.peek(at, tbsEnd) === 0xa3) {
    at = cursor.read(at, tbsEnd, "extensions");
    const wrapperEnd = cursor.end;
    const extensionsEnd = cursor.expect(cursor.start, wrapperEnd, derTags.sequence, "Extensions");
    for (let offset = cursor.start; offset < extensionsEnd; ) {
      const extension = readExtension(cursor, offset, extensionsEnd, "extension");
      offset = extension.next;
      const { oidStart, oidEnd } = extension;
      if (oidEnd - oidStart !== 3 || der[oidStart] !== 0x55 || der[oidStart + 1] !== 0x1d || der[oidStart + 2] !== keyUsageArc) continue;
      cursor.expect(extension.valueStart, extension.valueEnd, derTags.bitString, "keyUsage");
      allowsCrlSign = cursor.end - cursor.start >= 2 && (der[cursor.start + 1]! & crlSignMask) !== 0;
    }
  }
  if (at !== tbsEnd) throw new TypeError("issuer certificate has unexpected fields in tbsCertificate");
  return { subject, publicKey, allowsCrlSign };
}
