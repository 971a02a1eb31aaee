import { DerError, decodeOid, readAll, readTlv, tags, type Tlv } from "./der.ts";
import { formatDistinguishedName } from "./distinguished-name.ts";

/** The fields of a certificate's TBSCertificate that shomei reads itself (RFC 5280 §4.1). */
export interface TbsFields {
  /** The issuer's distinguished name in the text form shomei stores (RFC 4514 escaping, certificate order). */
  issuer: string;
  notBefore: number;
  notAfter: number;
  /** Each extension's extnValue content, by OID; an OID appears at most once (RFC 5280 §4.2). */
  extensions: ReadonlyMap<string, Uint8Array>;
}

const explicitVersion = 0xa0;
const explicitExtensions = 0xa3;
const integer = 0x02;
const utcTime = 0x17;
const generalizedTime = 0x18;
const boolean = 0x01;

function expect(tlv: Tlv | undefined, tag: number, what: string): Tlv {
  if (!tlv || tlv.tag !== tag) throw new DerError(`${what} is missing or malformed`);
  return tlv;
}

/**
 * The TBSCertificate of a DER certificate, read with the project's own DER
 * reader: node:crypto's X509Certificate parses the certificate and its key
 * (and is the authority on whether it is one), but exposes neither the raw
 * extensions nor policy OIDs; a schema library costs milliseconds a
 * certificate on the verification path, this reader microseconds.
 */
export function readTbsFields(der: Uint8Array): TbsFields {
  const certificate = readTlv(der, 0);
  if (certificate.tag !== tags.sequence || certificate.end !== der.length) throw new DerError("not one DER SEQUENCE");
  const tbs = expect(readAll(certificate.content)[0], tags.sequence, "tbsCertificate");
  const fields = readAll(tbs.content);
  let next = 0;
  if (fields[0]?.tag === explicitVersion) next++;
  expect(fields[next++], integer, "serialNumber");
  expect(fields[next++], tags.sequence, "signature algorithm");
  const issuer = expect(fields[next++], tags.sequence, "issuer");
  const validity = readAll(expect(fields[next++], tags.sequence, "validity").content);
  if (validity.length !== 2) throw new DerError("validity must hold exactly two times");
  expect(fields[next++], tags.sequence, "subject");
  expect(fields[next++], tags.sequence, "subjectPublicKeyInfo");
  const extensions = fields.slice(next).find((field) => field.tag === explicitExtensions);
  return {
    issuer: formatDistinguishedName(issuer.content),
    notBefore: readTime(validity[0]!),
    notAfter: readTime(validity[1]!),
    extensions: extensions ? readExtensions(extensions.content) : new Map(),
  };
}

function readExtensions(explicit: Uint8Array): Map<string, Uint8Array> {
  const sequence = readTlv(explicit, 0);
  if (sequence.tag !== tags.sequence || sequence.end !== explicit.length) throw new DerError("extensions are not one SEQUENCE");
  const byOid = new Map<string, Uint8Array>();
  for (const extension of readAll(sequence.content)) {
    const parts = readAll(expect(extension, tags.sequence, "extension").content);
    const oid = decodeOid(expect(parts[0], tags.oid, "extnID").content);
    const value = parts[1]?.tag === boolean ? parts[2] : parts[1];
    if (byOid.has(oid)) throw new DerError(`extension ${oid} appears twice`);
    byOid.set(oid, expect(value, tags.octetString, `extnValue of ${oid}`).content);
  }
  return byOid;
}

const timePattern = /^(\d{2}|\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.(\d+))?Z$/;

/** UTCTime (YYMMDDHHMMSSZ, years 1950–2049) or GeneralizedTime (YYYYMMDDHHMMSS[.f]Z), in UTC as DER requires. */
function readTime(tlv: Tlv): number {
  if (tlv.tag !== utcTime && tlv.tag !== generalizedTime) throw new DerError("validity time is neither UTCTime nor GeneralizedTime");
  const text = new TextDecoder("latin1").decode(tlv.content);
  const match = timePattern.exec(text);
  if (!match || (tlv.tag === utcTime ? match[1]!.length !== 2 || match[7] : match[1]!.length !== 4)) {
    throw new DerError("malformed validity time");
  }
  const short = Number(match[1]);
  const year = tlv.tag === utcTime ? (short < 50 ? 2000 + short : 1900 + short) : short;
  const [month, day, hour, minute, second] = match.slice(2, 7).map(Number) as [number, number, number, number, number];
  const millis = match[7] ? Math.floor(Number(`0.${match[7]}`) * 1000) : 0;
  const time = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  const date = new Date(time);
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) {
    throw new DerError("a validity time is not a real date");
  }
  return year < 100 ? new Date(time).setUTCFullYear(year) : time;
}
