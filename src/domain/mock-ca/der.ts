/**
 * The two DER values this module encodes itself, for extensions
 * @peculiar/x509 has no class for (cRLNumber) or writes only for non-zero
 * values (reasonCode).
 */

function encodeLength(length: number): Uint8Array {
  if (length < 0x80) return Uint8Array.of(length);
  const octets: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) octets.unshift(rest % 256);
  return Uint8Array.of(0x80 | octets.length, ...octets);
}

function tagged(tag: number, content: Uint8Array): Uint8Array {
  const length = encodeLength(content.length);
  const out = new Uint8Array(1 + length.length + content.length);
  out[0] = tag;
  out.set(length, 1);
  out.set(content, 1 + length.length);
  return out;
}

/** Minimal two's-complement content octets of a non-negative integer. */
function nonNegativeIntegerContent(value: bigint): Uint8Array {
  if (value < 0n) throw new RangeError("only non-negative integers are encoded here");
  let hex = value.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  if (Number.parseInt(hex.slice(0, 2), 16) >= 0x80) hex = `00${hex}`;
  return Uint8Array.from(Buffer.from(hex, "hex"));
}

/** DER INTEGER of a non-negative value. */
export function derInteger(value: bigint): Uint8Array {
  return tagged(0x02, nonNegativeIntegerContent(value));
}

/** DER ENUMERATED of a non-negative value. */
export function derEnumerated(value: number): Uint8Array {
  return tagged(0x0a, nonNegativeIntegerContent(BigInt(value)));
}
