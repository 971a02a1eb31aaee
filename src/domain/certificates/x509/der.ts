/**
 * The little DER this service reads and writes itself: subjectAltName
 * otherName entries, which @peculiar/x509 neither parses nor builds. Only
 * single-byte tags and definite lengths, as DER requires of these structures.
 */

export interface Tlv {
  tag: number;
  /** The content octets. */
  content: Uint8Array;
  /** Offset just past this TLV in the input. */
  end: number;
}

export class DerError extends Error {
  override name = "DerError";
}

export function readTlv(bytes: Uint8Array, offset: number): Tlv {
  if (offset + 2 > bytes.length) throw new DerError("truncated DER");
  const tag = bytes[offset]!;
  if ((tag & 0x1f) === 0x1f) throw new DerError("multi-byte tags are not supported here");
  let length = bytes[offset + 1]!;
  let start = offset + 2;
  if (length & 0x80) {
    const octets = length & 0x7f;
    if (octets === 0 || octets > 4) throw new DerError("unsupported DER length");
    if (start + octets > bytes.length) throw new DerError("truncated DER length");
    length = 0;
    for (let i = 0; i < octets; i++) length = length * 256 + bytes[start + i]!;
    start += octets;
    if (length < 0x80 || (octets > 1 && bytes[offset + 2] === 0)) throw new DerError("length not in its shortest form");
  }
  const end = start + length;
  if (end > bytes.length) throw new DerError("truncated DER content");
  return { tag, content: bytes.subarray(start, end), end };
}

/** Every TLV in a constructed value's content, in order. */
export function readAll(content: Uint8Array): Tlv[] {
  const items: Tlv[] = [];
  for (let offset = 0; offset < content.length; ) {
    const item = readTlv(content, offset);
    items.push(item);
    offset = item.end;
  }
  return items;
}

/** Dotted form of an OBJECT IDENTIFIER's content; arcs of any size (a UUID arc, 2.25.<uuid>, has 128 bits). */
export function decodeOid(content: Uint8Array): string {
  if (content.length === 0) throw new DerError("empty OBJECT IDENTIFIER");
  const arcs: bigint[] = [];
  let value = 0n;
  let fresh = true;
  for (let i = 0; i < content.length; i++) {
    const byte = content[i]!;
    if (fresh && byte === 0x80) throw new DerError("OBJECT IDENTIFIER arc not in its shortest form");
    value = (value << 7n) | BigInt(byte & 0x7f);
    fresh = false;
    if (!(byte & 0x80)) {
      arcs.push(value);
      value = 0n;
      fresh = true;
    } else if (i === content.length - 1) {
      throw new DerError("truncated OBJECT IDENTIFIER");
    }
  }
  const first = arcs.shift()!;
  const head = first < 40n ? [0n, first] : first < 80n ? [1n, first - 40n] : [2n, first - 80n];
  return [...head, ...arcs].join(".");
}

/** The policy identifiers of a certificatePolicies extension value, qualifiers ignored. */
export function readPolicyOids(extensionValue: Uint8Array): string[] {
  const policies = readTlv(extensionValue, 0);
  if (policies.tag !== tags.sequence || policies.end !== extensionValue.length) throw new DerError("certificatePolicies is not one SEQUENCE");
  return readAll(policies.content).map((information) => {
    if (information.tag !== tags.sequence) throw new DerError("malformed PolicyInformation");
    const [identifier] = readAll(information.content);
    if (!identifier || identifier.tag !== tags.oid) throw new DerError("PolicyInformation without a policy identifier");
    return decodeOid(identifier.content);
  });
}

function encodeLength(length: number): number[] {
  if (length < 0x80) return [length];
  const octets: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) octets.unshift(rest % 256);
  return [0x80 | octets.length, ...octets];
}

export function encodeTlv(tag: number, ...contents: Uint8Array[]): Uint8Array {
  const length = contents.reduce((n, c) => n + c.length, 0);
  const header = Uint8Array.from([tag, ...encodeLength(length)]);
  const out = new Uint8Array(header.length + length);
  out.set(header);
  let offset = header.length;
  for (const c of contents) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}

export function encodeOid(dotted: string): Uint8Array {
  if (!/^[0-2](\.\d+)+$/.test(dotted)) throw new RangeError(`not an OID: ${dotted}`);
  const arcs = dotted.split(".").map(BigInt);
  const [first, second, ...rest] = arcs as [bigint, bigint, ...bigint[]];
  const octets: number[] = [];
  for (const arc of [first * 40n + second, ...rest]) {
    const group: number[] = [Number(arc % 128n)];
    for (let v = arc / 128n; v > 0n; v /= 128n) group.unshift(Number(v % 128n) | 0x80);
    octets.push(...group);
  }
  return encodeTlv(0x06, Uint8Array.from(octets));
}

export const tags = {
  sequence: 0x30,
  oid: 0x06,
  octetString: 0x04,
  utf8String: 0x0c,
  printableString: 0x13,
  ia5String: 0x16,
  bmpString: 0x1e,
  /** [0] constructed: otherName in GeneralName, and its explicit value. */
  contextConstructed0: 0xa0,
} as const;
