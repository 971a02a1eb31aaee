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

export function decodeOid(content: Uint8Array): string {
  if (content.length === 0) throw new DerError("empty OBJECT IDENTIFIER");
  const arcs: number[] = [];
  let value = 0;
  for (let i = 0; i < content.length; i++) {
    const byte = content[i]!;
    if (value === 0 && byte === 0x80) throw new DerError("OBJECT IDENTIFIER arc not in its shortest form");
    value = value * 128 + (byte & 0x7f);
    if (value > Number.MAX_SAFE_INTEGER / 128) throw new DerError("OBJECT IDENTIFIER arc too large");
    if (!(byte & 0x80)) {
      arcs.push(value);
      value = 0;
    } else if (i === content.length - 1) {
      throw new DerError("truncated OBJECT IDENTIFIER");
    }
  }
  const first = arcs.shift()!;
  const head = first < 40 ? [0, first] : first < 80 ? [1, first - 40] : [2, first - 80];
  return [...head, ...arcs].join(".");
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
  const arcs = dotted.split(".").map((a) => {
    if (!/^\d+$/.test(a)) throw new RangeError(`not an OID: ${dotted}`);
    return Number(a);
  });
  if (arcs.length < 2) throw new RangeError(`not an OID: ${dotted}`);
  const octets: number[] = [];
  const [first, second, ...rest] = arcs as [number, number, ...number[]];
  for (const arc of [first * 40 + second, ...rest]) {
    const group: number[] = [arc % 128];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) group.unshift((v % 128) | 0x80);
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
