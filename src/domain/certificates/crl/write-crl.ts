import { sign, type KeyObject } from "node:crypto";
import type { RevocationReasonCode } from "../model.ts";
import { signatureAlgorithmOids } from "../signature-algorithms.ts";
import { encodeOid, encodeTlv } from "../x509/der.ts";

/**
 * A DER CRL writer that builds tbsCertList straight into one buffer and signs
 * it with node:crypto: a million entries in about a second, where building
 * one object per entry through an ASN.1 library takes minutes. The mock CA
 * publishes its list with it; tests and the benchmark make large lists with it.
 */
export interface CrlEntryToWrite {
  /** A positive serial in canonical form (lowercase hex, even length, no leading zero octet). */
  serialNumberHex: string;
  /** revocationDate, epoch milliseconds (whole seconds are written). */
  revokedAt: number;
  /** Written as a reasonCode extension; undefined writes none (which readers take as unspecified). */
  reason?: RevocationReasonCode;
  /** Further entry extensions, each a DER Extension (see encodeExtension). */
  extensions?: readonly Uint8Array[];
}

export interface IssuingDistributionPointToWrite {
  uris: readonly string[];
  onlyContainsUserCerts?: boolean;
  onlyContainsCACerts?: boolean;
  /** Writes onlySomeReasons with keyCompromise alone: a partial list. */
  onlySomeReasons?: boolean;
  indirectCRL?: boolean;
}

export interface CrlToWrite {
  /** The issuer's subject Name, DER (the bytes of its certificate's subject field). */
  issuerName: Uint8Array;
  /** The issuer's private key: RSA (PKCS#1 v1.5) or EC (ECDSA). */
  signingKey: KeyObject;
  hash?: "sha256" | "sha384" | "sha512";
  /** Epoch milliseconds. */
  thisUpdate: number;
  nextUpdate?: number;
  crlNumber?: bigint;
  /** The authorityKeyIdentifier's keyIdentifier. */
  authorityKeyId?: Uint8Array;
  issuingDistributionPoint?: IssuingDistributionPointToWrite;
  /** Further list extensions, each a DER Extension (see encodeExtension). */
  extensions?: readonly Uint8Array[];
  /** Written in this order. */
  entries: readonly CrlEntryToWrite[];
}

const { rsa: rsaAlgorithms, ecdsa: ecdsaAlgorithms } = signatureAlgorithmOids;

/** Extension ::= SEQUENCE { extnID, critical BOOLEAN DEFAULT FALSE, extnValue OCTET STRING }. */
export function encodeExtension(oid: string, critical: boolean, value: Uint8Array): Uint8Array {
  return encodeTlv(0x30, encodeOid(oid), ...(critical ? [Uint8Array.of(0x01, 0x01, 0xff)] : []), encodeTlv(0x04, value));
}

export function writeCrl(crl: CrlToWrite): Uint8Array {
  const hash = crl.hash ?? "sha256";
  const keyType = crl.signingKey.asymmetricKeyType;
  if (keyType !== "rsa" && keyType !== "ec") throw new TypeError(`cannot sign a CRL with a ${keyType} key`);
  const algorithm =
    keyType === "rsa"
      ? encodeTlv(0x30, encodeOid(rsaAlgorithms[hash]), Uint8Array.of(0x05, 0x00))
      : encodeTlv(0x30, encodeOid(ecdsaAlgorithms[hash]));

  const listExtensions: Uint8Array[] = [];
  if (crl.authorityKeyId) listExtensions.push(encodeExtension("2.5.29.35", false, encodeTlv(0x30, encodeTlv(0x80, crl.authorityKeyId))));
  if (crl.crlNumber !== undefined) listExtensions.push(encodeExtension("2.5.29.20", false, encodeInteger(crl.crlNumber)));
  if (crl.issuingDistributionPoint) listExtensions.push(encodeExtension("2.5.29.28", true, encodeIssuingDistributionPoint(crl.issuingDistributionPoint)));
  listExtensions.push(...(crl.extensions ?? []));

  const tbs = encodeTlv(
    0x30,
    Uint8Array.of(0x02, 0x01, 0x01),
    algorithm,
    crl.issuerName,
    encodeTime(crl.thisUpdate),
    ...(crl.nextUpdate === undefined ? [] : [encodeTime(crl.nextUpdate)]),
    ...(crl.entries.length > 0 ? [encodeRevokedCertificates(crl.entries)] : []),
    ...(listExtensions.length > 0 ? [encodeTlv(0xa0, encodeTlv(0x30, ...listExtensions))] : []),
  );
  const signature = sign(hash, tbs, crl.signingKey);
  return encodeTlv(0x30, tbs, algorithm, encodeTlv(0x03, Uint8Array.of(0), signature));
}

function encodeIssuingDistributionPoint(idp: IssuingDistributionPointToWrite): Uint8Array {
  const fields: Uint8Array[] = [];
  if (idp.uris.length > 0) {
    const names = idp.uris.map((uri) => encodeTlv(0x86, Buffer.from(uri, "ascii")));
    fields.push(encodeTlv(0xa0, encodeTlv(0xa0, ...names)));
  }
  if (idp.onlyContainsUserCerts) fields.push(Uint8Array.of(0x81, 0x01, 0xff));
  if (idp.onlyContainsCACerts) fields.push(Uint8Array.of(0x82, 0x01, 0xff));
  if (idp.onlySomeReasons) fields.push(Uint8Array.of(0x83, 0x02, 0x06, 0x40));
  if (idp.indirectCRL) fields.push(Uint8Array.of(0x84, 0x01, 0xff));
  return encodeTlv(0x30, ...fields);
}

function encodeInteger(value: bigint): Uint8Array {
  if (value < 0n) throw new RangeError("only non-negative integers are written");
  let hex = value.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  if (Number.parseInt(hex.slice(0, 2), 16) >= 0x80) hex = `00${hex}`;
  return encodeTlv(0x02, Buffer.from(hex, "hex"));
}

/** UTCTime for 1950–2049, GeneralizedTime after (RFC 5280 §5.1.2.4). */
function encodeTime(epochMs: number): Uint8Array {
  const out = new Uint8Array(17);
  return out.subarray(0, writeTime(out, 0, Math.floor(epochMs / 1000)));
}

function writeTime(out: Uint8Array, at: number, seconds: number): number {
  const date = new Date(seconds * 1000);
  const year = date.getUTCFullYear();
  if (!Number.isFinite(seconds) || year < 1950 || year > 9999) throw new RangeError("times must be between 1950 and 9999");
  const utc = year < 2050;
  const text = `${utc ? String(year % 100).padStart(2, "0") : String(year)}${two(date.getUTCMonth() + 1)}${two(date.getUTCDate())}${two(date.getUTCHours())}${two(date.getUTCMinutes())}${two(date.getUTCSeconds())}Z`;
  out[at] = utc ? 0x17 : 0x18;
  out[at + 1] = text.length;
  for (let i = 0; i < text.length; i++) out[at + 2 + i] = text.charCodeAt(i);
  return 2 + text.length;
}

function two(value: number): string {
  return value < 10 ? `0${value}` : String(value);
}

function headerLength(length: number): number {
  return length < 0x80 ? 2 : length < 0x100 ? 3 : length < 0x10000 ? 4 : length < 0x1000000 ? 5 : 6;
}

function writeHeader(out: Uint8Array, at: number, tag: number, length: number): number {
  out[at] = tag;
  if (length < 0x80) {
    out[at + 1] = length;
    return at + 2;
  }
  const octets = headerLength(length) - 2;
  out[at + 1] = 0x80 | octets;
  for (let i = octets; i > 0; i--) {
    out[at + 1 + i] = length & 0xff;
    length = Math.floor(length / 256);
  }
  return at + 2 + octets;
}

const reasonExtensionLength = 12;

/** revokedCertificates as one TLV, written in two passes: sizes first, then bytes into one buffer. */
function encodeRevokedCertificates(entries: readonly CrlEntryToWrite[]): Uint8Array {
  const innerLengths = new Uint32Array(entries.length);
  let body = 0;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    const hex = entry.serialNumberHex;
    if (!/^(?!00)(?:[0-9a-f]{2}){1,20}$/.test(hex)) throw new RangeError(`serial ${hex} is not in canonical form`);
    const serialOctets = hex.length / 2 + (Number.parseInt(hex.slice(0, 2), 16) >= 0x80 ? 1 : 0);
    const year = new Date(entry.revokedAt).getUTCFullYear();
    let inner = 2 + serialOctets + (year < 2050 ? 15 : 17);
    const extensions = extensionsLength(entry);
    if (extensions > 0) inner += headerLength(extensions) + extensions;
    innerLengths[i] = inner;
    body += headerLength(inner) + inner;
  }
  const out = Buffer.alloc(headerLength(body) + body);
  let at = writeHeader(out, 0, 0x30, body);
  let lastSeconds = Number.NaN;
  const lastTime = new Uint8Array(17);
  let lastTimeLength = 0;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    at = writeHeader(out, at, 0x30, innerLengths[i]!);
    const hex = entry.serialNumberHex;
    const pad = Number.parseInt(hex.slice(0, 2), 16) >= 0x80 ? 1 : 0;
    out[at] = 0x02;
    out[at + 1] = hex.length / 2 + pad;
    if (pad) out[at + 2] = 0;
    at += 2 + pad + out.write(hex, at + 2 + pad, "hex");
    const seconds = Math.floor(entry.revokedAt / 1000);
    if (seconds !== lastSeconds) {
      lastTimeLength = writeTime(lastTime, 0, seconds);
      lastSeconds = seconds;
    }
    out.set(lastTime.subarray(0, lastTimeLength), at);
    at += lastTimeLength;
    const extensions = extensionsLength(entry);
    if (extensions > 0) {
      at = writeHeader(out, at, 0x30, extensions);
      if (entry.reason !== undefined) {
        out.set([0x30, 0x0a, 0x06, 0x03, 0x55, 0x1d, 0x15, 0x04, 0x03, 0x0a, 0x01, entry.reason], at);
        at += reasonExtensionLength;
      }
      for (const extension of entry.extensions ?? []) {
        out.set(extension, at);
        at += extension.length;
      }
    }
  }
  if (at !== out.length) throw new Error(`CRL writer size mismatch: ${at} != ${out.length}`);
  return out;
}

function extensionsLength(entry: CrlEntryToWrite): number {
  let length = entry.reason === undefined ? 0 : reasonExtensionLength;
  for (const extension of entry.extensions ?? []) length += extension.length;
  return length;
}
