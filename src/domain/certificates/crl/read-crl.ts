import { maxSerialOctets } from "./crl-index.ts";
import type { CrlIndexBuilder } from "./crl-index-builder.ts";
import { idCe, idCeArc, readCrlExtensions, readExtension, type CrlExtensions } from "./crl-extensions.ts";
import { checkMinimalInteger, DerCursor, derTags, malformed, oidText, readSmallUnsigned } from "./der-cursor.ts";
import { readTimeSeconds } from "./der-time.ts";
import { CrlRejectedError } from "./verified-crl.ts";
import { sameBytes } from "../same-bytes.ts";

/**
 * The parts of a CertificateList (RFC 5280 §5.1), located without building a
 * tree: byte ranges into the input, plus the few decoded fields. The entries
 * are only located here; readRevokedEntries walks them.
 *
 *   CertificateList ::= SEQUENCE { tbsCertList, signatureAlgorithm, signatureValue BIT STRING }
 *   TBSCertList ::= SEQUENCE { version INTEGER OPTIONAL (v2 = 1), signature AlgorithmIdentifier,
 *     issuer Name, thisUpdate Time, nextUpdate Time OPTIONAL,
 *     revokedCertificates SEQUENCE OF SEQUENCE { userCertificate INTEGER, revocationDate Time,
 *       crlEntryExtensions Extensions OPTIONAL } OPTIONAL,
 *     crlExtensions [0] EXPLICIT Extensions OPTIONAL }
 */
export interface CrlStructure extends CrlExtensions {
  /** The whole tbsCertList TLV: what the signature covers. */
  tbsCertList: Uint8Array;
  /** The outer signatureAlgorithm TLV (byte-equal to the one inside tbsCertList). */
  signatureAlgorithm: Uint8Array;
  /** signatureValue's bits. */
  signature: Uint8Array;
  /** The issuer Name TLV. */
  issuer: Uint8Array;
  /** Epoch seconds. */
  thisUpdate: number;
  nextUpdate: number | undefined;
  /** v2 lists may carry extensions; v1 lists may not. */
  v2: boolean;
  /** Content bounds of revokedCertificates (equal when it is absent). */
  revokedStart: number;
  revokedEnd: number;
}

export function readCrlStructure(bytes: Uint8Array): CrlStructure {
  const cursor = new DerCursor(bytes);
  const total = bytes.length;
  const outerEnd = cursor.expect(0, total, derTags.sequence, "CertificateList");
  if (outerEnd !== total) throw malformed("CertificateList: trailing data after the list");

  const tbsStart = cursor.start;
  const tbsEnd = cursor.expect(tbsStart, outerEnd, derTags.sequence, "tbsCertList");
  const tbsContentStart = cursor.start;
  const algorithmStart = tbsEnd;
  const algorithmEnd = cursor.expect(algorithmStart, outerEnd, derTags.sequence, "signatureAlgorithm");
  const signatureEnd = cursor.expect(algorithmEnd, outerEnd, derTags.bitString, "signatureValue");
  if (signatureEnd !== outerEnd) throw malformed("CertificateList: trailing data after signatureValue");
  if (cursor.end === cursor.start || bytes[cursor.start] !== 0) throw malformed("signatureValue: a signature has no unused bits");
  const signature = bytes.subarray(cursor.start + 1, cursor.end);
  const signatureAlgorithm = bytes.subarray(algorithmStart, algorithmEnd);

  let at = tbsContentStart;
  let v2 = false;
  if (cursor.peek(at, tbsEnd) === derTags.integer) {
    at = cursor.read(at, tbsEnd, "version");
    const version = readSmallUnsigned(bytes, cursor.start, cursor.end, "version");
    if (version !== 1) throw malformed(`version: ${version} is not v2 (1)`);
    v2 = true;
  }
  const innerAlgorithmStart = at;
  at = cursor.expect(at, tbsEnd, derTags.sequence, "signature");
  if (!sameBytes(bytes.subarray(innerAlgorithmStart, at), signatureAlgorithm)) {
    throw malformed("the signature algorithm inside tbsCertList differs from signatureAlgorithm");
  }
  const issuerStart = at;
  at = cursor.expect(at, tbsEnd, derTags.sequence, "issuer");
  const issuer = bytes.subarray(issuerStart, at);
  at = cursor.read(at, tbsEnd, "thisUpdate");
  const thisUpdate = readTimeSeconds(bytes, cursor.tag, cursor.start, cursor.end, "thisUpdate");
  let nextUpdate: number | undefined;
  const afterThisUpdate = cursor.peek(at, tbsEnd);
  if (afterThisUpdate === derTags.utcTime || afterThisUpdate === derTags.generalizedTime) {
    at = cursor.read(at, tbsEnd, "nextUpdate");
    nextUpdate = readTimeSeconds(bytes, cursor.tag, cursor.start, cursor.end, "nextUpdate");
  }
  let revokedStart = at;
  let revokedEnd = at;
  if (cursor.peek(at, tbsEnd) === derTags.sequence) {
    at = cursor.read(at, tbsEnd, "revokedCertificates");
    revokedStart = cursor.start;
    revokedEnd = cursor.end;
  }
  let extensions: CrlExtensions = { crlNumber: undefined, issuingDistributionPoint: undefined, expiredCertsOnCrl: undefined };
  if (cursor.peek(at, tbsEnd) === 0xa0) {
    at = cursor.read(at, tbsEnd, "crlExtensions");
    if (!v2) throw malformed("crlExtensions: a v1 list has no extensions");
    extensions = readCrlExtensions(bytes, cursor.start, cursor.end);
  }
  if (at !== tbsEnd) throw malformed(`tbsCertList: unexpected field with tag 0x${bytes[at]!.toString(16)}`);

  return {
    ...extensions,
    tbsCertList: bytes.subarray(tbsStart, tbsEnd),
    signatureAlgorithm,
    signature,
    issuer,
    thisUpdate,
    nextUpdate,
    v2,
    revokedStart,
    revokedEnd,
  };
}

const reasonCodes = new Uint8Array(256);
for (const code of [1, 2, 3, 4, 5, 6, 8, 9, 10]) reasonCodes[code] = code;
const removeFromCrl = 8;

// Known entry extensions, as bits, to refuse a repeated one.
const reasonBit = 1;
const invalidityBit = 2;
const holdBit = 4;

/**
 * Walks revokedCertificates entry by entry and hands each to the builder;
 * nothing per entry is kept here. Entry extensions: reasonCode is read (a
 * code outside RFC 5280's list counts as unspecified: the entry still
 * revokes); invalidityDate and holdInstructionCode are accepted and not
 * needed; certificateIssuer (entries of an indirect CRL that name another
 * issuer) is refused; any other critical extension is refused.
 *
 * Entries that no canonical serial can name are not indexed: a zero or
 * negative serial, or one longer than 20 octets. Entries with removeFromCRL
 * (which only delta lists may carry) are not indexed either. Returns the
 * number of entries walked.
 */
export function readRevokedEntries(bytes: Uint8Array, crl: CrlStructure, builder: CrlIndexBuilder): number {
  const cursor = new DerCursor(bytes);
  const end = crl.revokedEnd;
  let walked = 0;
  for (let offset = crl.revokedStart; offset < end; ) {
    const entryEnd = cursor.expect(offset, end, derTags.sequence, "revokedCertificates entry");
    offset = entryEnd;
    walked++;
    let at = cursor.expect(cursor.start, entryEnd, derTags.integer, "userCertificate");
    let serialStart = cursor.start;
    const serialEnd = cursor.end;
    checkMinimalInteger(bytes, serialStart, serialEnd, "userCertificate");
    at = cursor.read(at, entryEnd, "revocationDate");
    const revokedAt = readTimeSeconds(bytes, cursor.tag, cursor.start, cursor.end, "revocationDate");
    let reason = 0;
    if (at < entryEnd) {
      if (!crl.v2) throw malformed("crlEntryExtensions: a v1 list has no extensions");
      at = cursor.expect(at, entryEnd, derTags.sequence, "crlEntryExtensions");
      if (at !== entryEnd) throw malformed("revokedCertificates entry: trailing data after crlEntryExtensions");
      const extensionsEnd = cursor.end;
      let seen = 0;
      for (let e = cursor.start; e < extensionsEnd; ) {
        const extension = readExtension(cursor, e, extensionsEnd, "crlEntryExtension");
        e = extension.next;
        const arc = idCeArc(bytes, extension.oidStart, extension.oidEnd);
        let bit = 0;
        if (arc === idCe.reasonCode) {
          bit = reasonBit;
          const valueEnd = cursor.expect(extension.valueStart, extension.valueEnd, derTags.enumerated, "reasonCode");
          if (valueEnd !== extension.valueEnd) throw malformed("reasonCode: trailing data in the extension value");
          const code = readSmallUnsigned(bytes, cursor.start, cursor.end, "reasonCode");
          reason = code < reasonCodes.length ? reasonCodes[code]! : 0;
        } else if (arc === idCe.invalidityDate) {
          bit = invalidityBit;
        } else if (arc === idCe.holdInstructionCode) {
          bit = holdBit;
        } else if (arc === idCe.certificateIssuer) {
          throw new CrlRejectedError(
            "unknown_critical_extension",
            "an entry has certificateIssuer (an indirect CRL naming another issuer), which is not supported",
          );
        } else if (extension.critical) {
          const oid = oidText(bytes.subarray(extension.oidStart, extension.oidEnd));
          throw new CrlRejectedError("unknown_critical_extension", `an entry has an unknown critical extension ${oid}`);
        }
        if (seen & bit) throw malformed("crlEntryExtensions: an extension appears twice");
        seen |= bit;
      }
    }
    if (reason === removeFromCrl) continue;
    if (bytes[serialStart]! >= 0x80) continue;
    if (bytes[serialStart] === 0) serialStart++;
    const octets = serialEnd - serialStart;
    if (octets === 0 || octets > maxSerialOctets) continue;
    builder.add(bytes, serialStart, serialEnd, revokedAt, reason);
  }
  return walked;
}

