import { DerCursor, derTags, malformed, oidText, readBoolean, readUnsignedInteger } from "./der-cursor.ts";
import { readTimeSeconds } from "./der-time.ts";
import { CrlRejectedError, type IssuingDistributionPoint } from "./verified-crl.ts";

/** Content octets of the id-ce OIDs (2.5.29.x) a CRL uses: 55 1D x. */
export const idCe = {
  reasonCode: 0x15,
  holdInstructionCode: 0x17,
  invalidityDate: 0x18,
  cRLNumber: 0x14,
  deltaCRLIndicator: 0x1b,
  issuingDistributionPoint: 0x1c,
  certificateIssuer: 0x1d,
  authorityKeyIdentifier: 0x23,
  freshestCRL: 0x2e,
  expiredCertsOnCRL: 0x3c,
} as const;

/** The id-ce arc number when the OID content is 2.5.29.x with a one-octet x, else -1. */
export function idCeArc(bytes: Uint8Array, start: number, end: number): number {
  return end - start === 3 && bytes[start] === 0x55 && bytes[start + 1] === 0x1d ? bytes[start + 2]! : -1;
}

export interface CrlExtensions {
  crlNumber: bigint | undefined;
  issuingDistributionPoint: IssuingDistributionPoint | undefined;
  /** expiredCertsOnCRL (X.509 §9.6.2.9), epoch seconds: certificates expired since then are still listed. */
  expiredCertsOnCrl: number | undefined;
}

/** cRLNumber is at most 20 octets (RFC 5280 §5.2.3). */
const maxCrlNumberOctets = 20;

/**
 * Reads crlExtensions (the content of [0] EXPLICIT Extensions). cRLNumber and
 * issuingDistributionPoint and expiredCertsOnCRL are returned; authorityKeyIdentifier and
 * freshestCRL are accepted and not needed; a deltaCRLIndicator makes it a
 * delta list, which is refused; any other critical extension is refused, any
 * other non-critical one ignored (RFC 5280 §5.2).
 */
export function readCrlExtensions(bytes: Uint8Array, start: number, end: number): CrlExtensions {
  const cursor = new DerCursor(bytes);
  const extensionsEnd = cursor.expect(start, end, derTags.sequence, "crlExtensions");
  if (extensionsEnd !== end) throw malformed("crlExtensions: trailing data after the Extensions SEQUENCE");
  const result: CrlExtensions = { crlNumber: undefined, issuingDistributionPoint: undefined, expiredCertsOnCrl: undefined };
  const seen = new Set<string>();
  let offset = cursor.start;
  while (offset < extensionsEnd) {
    const extension = readExtension(cursor, offset, extensionsEnd, "crlExtension");
    offset = extension.next;
    const oid = bytes.subarray(extension.oidStart, extension.oidEnd);
    const key = Buffer.from(oid).toString("hex");
    if (seen.has(key)) throw malformed(`crlExtensions: ${oidText(oid)} appears twice`);
    seen.add(key);
    const arc = idCeArc(bytes, extension.oidStart, extension.oidEnd);
    switch (arc) {
      case idCe.cRLNumber:
        result.crlNumber = readCrlNumber(cursor, extension.valueStart, extension.valueEnd);
        break;
      case idCe.issuingDistributionPoint:
        result.issuingDistributionPoint = readIssuingDistributionPoint(cursor, extension.valueStart, extension.valueEnd);
        break;
      case idCe.expiredCertsOnCRL:
        singleValue(cursor, extension.valueStart, extension.valueEnd, derTags.generalizedTime, "expiredCertsOnCRL");
        result.expiredCertsOnCrl = readTimeSeconds(bytes, derTags.generalizedTime, cursor.start, cursor.end, "expiredCertsOnCRL");
        break;
      case idCe.deltaCRLIndicator:
        throw new CrlRejectedError("delta_crl_unsupported", "the list is a delta CRL (deltaCRLIndicator); only complete lists are used");
      case idCe.authorityKeyIdentifier:
      case idCe.freshestCRL:
        singleValue(cursor, extension.valueStart, extension.valueEnd, derTags.sequence, oidText(oid));
        break;
      default:
        if (extension.critical) throw new CrlRejectedError("unknown_critical_extension", `the list has an unknown critical extension ${oidText(oid)}`);
    }
  }
  return result;
}

export interface ExtensionBounds {
  oidStart: number;
  oidEnd: number;
  critical: boolean;
  /** Content of extnValue: the DER of the extension's value. */
  valueStart: number;
  valueEnd: number;
  next: number;
}

/**
 * Extension ::= SEQUENCE { extnID OID, critical BOOLEAN DEFAULT FALSE, extnValue OCTET STRING }.
 * An explicit `critical FALSE` is not DER (a DEFAULT value is left out) but
 * is what some encoders write, and means the same: it is accepted.
 */
export function readExtension(cursor: DerCursor, offset: number, limit: number, what: string): ExtensionBounds {
  const bytes = cursor.bytes;
  const next = cursor.expect(offset, limit, derTags.sequence, what);
  const end = cursor.end;
  let at = cursor.expect(cursor.start, end, derTags.oid, `${what} extnID`);
  const oidStart = cursor.start;
  const oidEnd = cursor.end;
  if (oidEnd === oidStart) throw malformed(`${what}: empty extnID`);
  let critical = false;
  if (cursor.peek(at, end) === derTags.boolean) {
    at = cursor.read(at, end, `${what} critical`);
    critical = readBoolean(bytes, cursor.start, cursor.end, `${what} critical`);
  }
  at = cursor.expect(at, end, derTags.octetString, `${what} extnValue`);
  if (at !== end) throw malformed(`${what}: trailing data after extnValue`);
  return { oidStart, oidEnd, critical, valueStart: cursor.start, valueEnd: cursor.end, next };
}

/** The extension value must be exactly one TLV with `tag` (left in the cursor). */
function singleValue(cursor: DerCursor, start: number, end: number, tag: number, what: string): void {
  const next = cursor.expect(start, end, tag, what);
  if (next !== end) throw malformed(`${what}: trailing data in the extension value`);
}

function readCrlNumber(cursor: DerCursor, start: number, end: number): bigint {
  singleValue(cursor, start, end, derTags.integer, "cRLNumber");
  if (cursor.end - cursor.start > maxCrlNumberOctets + 1) throw malformed("cRLNumber: longer than 20 octets");
  const value = readUnsignedInteger(cursor.bytes, cursor.start, cursor.end, "cRLNumber");
  if (value >= 1n << BigInt(8 * maxCrlNumberOctets)) throw malformed("cRLNumber: longer than 20 octets");
  return value;
}

/**
 * IssuingDistributionPoint ::= SEQUENCE {
 *   distributionPoint          [0] DistributionPointName OPTIONAL,
 *   onlyContainsUserCerts      [1] BOOLEAN DEFAULT FALSE,
 *   onlyContainsCACerts        [2] BOOLEAN DEFAULT FALSE,
 *   onlySomeReasons            [3] ReasonFlags OPTIONAL,
 *   indirectCRL                [4] BOOLEAN DEFAULT FALSE,
 *   onlyContainsAttributeCerts [5] BOOLEAN DEFAULT FALSE }
 * Tags are implicit; the fields come in this order.
 */
function readIssuingDistributionPoint(cursor: DerCursor, start: number, end: number): IssuingDistributionPoint {
  const bytes = cursor.bytes;
  singleValue(cursor, start, end, derTags.sequence, "issuingDistributionPoint");
  const idp: IssuingDistributionPoint = {
    uris: [],
    onlyContainsUserCerts: false,
    onlyContainsCACerts: false,
    onlySomeReasons: false,
    indirectCRL: false,
    onlyContainsAttributeCerts: false,
  };
  const sequenceEnd = cursor.end;
  let offset = cursor.start;
  let lastField = -1;
  while (offset < sequenceEnd) {
    offset = cursor.read(offset, sequenceEnd, "issuingDistributionPoint field");
    const tag = cursor.tag;
    const field = tag & 0x1f;
    if ((tag & 0xc0) !== 0x80 || field > 5) throw malformed(`issuingDistributionPoint: unexpected tag 0x${tag.toString(16)}`);
    if (field <= lastField) throw malformed("issuingDistributionPoint: fields out of order or repeated");
    lastField = field;
    const constructed = (tag & 0x20) !== 0;
    if (field === 0) {
      if (!constructed) throw malformed("issuingDistributionPoint: distributionPoint must be constructed");
      idp.uris = readDistributionPointName(cursor, cursor.start, cursor.end);
      continue;
    }
    if (constructed) throw malformed(`issuingDistributionPoint: field [${field}] must be primitive`);
    if (field === 3) {
      if (cursor.end === cursor.start) throw malformed("issuingDistributionPoint: empty onlySomeReasons");
      idp.onlySomeReasons = true;
      continue;
    }
    const value = readBoolean(bytes, cursor.start, cursor.end, `issuingDistributionPoint [${field}]`);
    if (field === 1) idp.onlyContainsUserCerts = value;
    else if (field === 2) idp.onlyContainsCACerts = value;
    else if (field === 4) idp.indirectCRL = value;
    else idp.onlyContainsAttributeCerts = value;
  }
  return idp;
}

/**
 * DistributionPointName ::= CHOICE { fullName [0] GeneralNames, nameRelativeToCRLIssuer [1] RDN }.
 * The URIs of fullName ([6] IA5String); other name forms are skipped, so a
 * list named only by them has no URIs and matches no distribution point.
 */
function readDistributionPointName(cursor: DerCursor, start: number, end: number): string[] {
  const bytes = cursor.bytes;
  const next = cursor.read(start, end, "distributionPoint name");
  if (next !== end) throw malformed("distributionPoint: more than one name");
  if (cursor.tag === 0xa1) return [];
  if (cursor.tag !== 0xa0) throw malformed("distributionPoint: expected fullName [0] or nameRelativeToCRLIssuer [1]");
  const uris: string[] = [];
  const namesEnd = cursor.end;
  let offset = cursor.start;
  if (offset === namesEnd) throw malformed("distributionPoint: empty fullName");
  while (offset < namesEnd) {
    offset = cursor.read(offset, namesEnd, "fullName GeneralName");
    const nameTag: number = cursor.tag;
    if (nameTag !== 0x86) continue;
    let uri = "";
    for (let i = cursor.start; i < cursor.end; i++) {
      const byte = bytes[i]!;
      if (byte > 0x7e || byte < 0x20) throw malformed("fullName: URI is not printable IA5String");
      uri += String.fromCharCode(byte);
    }
    uris.push(uri);
  }
  return uris;
}
