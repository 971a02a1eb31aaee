import { decodeOid } from "../x509/der.ts";
import { CrlRejectedError } from "./verified-crl.ts";

/**
 * A strict DER reader that walks a buffer in place: it reads one TLV header
 * at a time and leaves its tag and content bounds in mutable fields, so the
 * walk over a list of a million entries allocates nothing per entry.
 *
 * Why our own: @peculiar/x509 and asn1js build a full ASN.1 tree of the input
 * and refuse large lists (a 1,000,000-entry CRL is about 38 MB of DER:
 * "Maximum ASN.1 content length exceeded"); even where they succeed, one
 * object per entry costs far more memory and time than the index it feeds.
 *
 * Strictness: low tag numbers only, definite lengths in their shortest form,
 * every TLV inside the bounds of the one that contains it. Anything else is
 * CrlRejectedError "malformed", whose message names the field being read.
 */
export class DerCursor {
  /** Tag of the last TLV read. */
  tag = 0;
  /** Offset of its content. */
  start = 0;
  /** Offset just past its content (and the TLV). */
  end = 0;

  constructor(readonly bytes: Uint8Array) {}

  /**
   * Reads the TLV header at `offset`; the whole TLV must end by `limit`.
   * Returns the offset just past the TLV.
   */
  read(offset: number, limit: number, what: string): number {
    const bytes = this.bytes;
    if (offset + 2 > limit) throw malformed(`${what}: truncated`);
    const tag = bytes[offset]!;
    if ((tag & 0x1f) === 0x1f) throw malformed(`${what}: multi-byte tags are not used in a CRL`);
    let length = bytes[offset + 1]!;
    let start = offset + 2;
    if (length >= 0x80) {
      const octets = length & 0x7f;
      if (octets === 0) throw malformed(`${what}: indefinite length is not DER`);
      if (octets > 4) throw malformed(`${what}: length of ${octets} octets is too large`);
      if (start + octets > limit) throw malformed(`${what}: truncated length`);
      if (bytes[start] === 0) throw malformed(`${what}: length not in its shortest form`);
      length = 0;
      for (let i = 0; i < octets; i++) length = length * 256 + bytes[start + i]!;
      if (length < 0x80) throw malformed(`${what}: length not in its shortest form`);
      start += octets;
    }
    const end = start + length;
    if (end > limit) throw malformed(`${what}: ${length} content octets run past the end of their container`);
    this.tag = tag;
    this.start = start;
    this.end = end;
    return end;
  }

  /** Reads a TLV that must have `tag`. */
  expect(offset: number, limit: number, tag: number, what: string): number {
    const end = this.read(offset, limit, what);
    if (this.tag !== tag) throw malformed(`${what}: expected tag 0x${hex2(tag)}, found 0x${hex2(this.tag)}`);
    return end;
  }

  /** The tag at `offset`, or -1 at `limit` (an OPTIONAL field that is absent). */
  peek(offset: number, limit: number): number {
    return offset < limit ? this.bytes[offset]! : -1;
  }

  /** Content of the last TLV read. */
  content(): Uint8Array {
    return this.bytes.subarray(this.start, this.end);
  }
}

export function malformed(message: string): CrlRejectedError {
  return new CrlRejectedError("malformed", message);
}

function hex2(value: number): string {
  return value.toString(16).padStart(2, "0");
}

export const derTags = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  null: 0x05,
  oid: 0x06,
  enumerated: 0x0a,
  utcTime: 0x17,
  generalizedTime: 0x18,
  sequence: 0x30,
  set: 0x31,
} as const;

/** Checks that INTEGER content is in its shortest two's-complement form. */
export function checkMinimalInteger(bytes: Uint8Array, start: number, end: number, what: string): void {
  if (end === start) throw malformed(`${what}: empty INTEGER`);
  if (end - start > 1) {
    const first = bytes[start]!;
    const second = bytes[start + 1]!;
    if ((first === 0x00 && second < 0x80) || (first === 0xff && second >= 0x80)) {
      throw malformed(`${what}: INTEGER not in its shortest form`);
    }
  }
}

/** A non-negative INTEGER's value (checked minimal). */
export function readUnsignedInteger(bytes: Uint8Array, start: number, end: number, what: string): bigint {
  checkMinimalInteger(bytes, start, end, what);
  if (bytes[start]! >= 0x80) throw malformed(`${what}: negative INTEGER`);
  let value = 0n;
  for (let i = start; i < end; i++) value = (value << 8n) | BigInt(bytes[i]!);
  return value;
}

/** A small non-negative INTEGER or ENUMERATED value (at most 6 content octets). */
export function readSmallUnsigned(bytes: Uint8Array, start: number, end: number, what: string): number {
  checkMinimalInteger(bytes, start, end, what);
  if (bytes[start]! >= 0x80) throw malformed(`${what}: negative value`);
  if (end - start > 6) throw malformed(`${what}: value too large`);
  let value = 0;
  for (let i = start; i < end; i++) value = value * 256 + bytes[i]!;
  return value;
}

/** DER BOOLEAN content: one octet, 0x00 or 0xFF. */
export function readBoolean(bytes: Uint8Array, start: number, end: number, what: string): boolean {
  if (end - start !== 1) throw malformed(`${what}: BOOLEAN must have one content octet`);
  const value = bytes[start]!;
  if (value !== 0x00 && value !== 0xff) throw malformed(`${what}: BOOLEAN must be 0x00 or 0xFF`);
  return value === 0xff;
}


/** Dotted form of OBJECT IDENTIFIER content, for messages: never throws, whatever the bytes. */
export function oidText(content: Uint8Array): string {
  try {
    return decodeOid(content);
  } catch {
    return "(malformed OID)";
  }
}
