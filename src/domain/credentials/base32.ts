/**
 * RFC 4648 section 6 base32 (the alphabet authenticator apps use for TOTP
 * secrets). Encoding omits the `=` padding unless asked for it, as the
 * otpauth:// key URI format expects.
 */
const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

const values = new Map<string, number>();
for (let i = 0; i < alphabet.length; i++) {
  values.set(alphabet[i]!, i);
  values.set(alphabet[i]!.toLowerCase(), i);
}

/** Characters of the last 8-character block that carry data, by input length mod 5. */
const encodedTailLength = [0, 2, 4, 5, 7] as const;

export function base32Encode(data: Uint8Array, options: { padding?: boolean } = {}): string {
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (const byte of data) {
    buffer = ((buffer << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += alphabet[(buffer >>> bits) & 31];
    }
  }
  if (bits > 0) out += alphabet[(buffer << (5 - bits)) & 31];
  if (options.padding) out += "=".repeat((8 - (out.length % 8)) % 8);
  return out;
}

/**
 * Decodes base32, upper or lower case, with or without the padding (if present
 * it must be exactly right). Throws a TypeError for anything else: characters
 * outside the alphabet, whitespace, an impossible length, or non-zero unused
 * bits in the last character (so each byte string has one encoding).
 */
export function base32Decode(text: string): Buffer {
  let body = text;
  const padStart = text.indexOf("=");
  if (padStart !== -1) {
    body = text.slice(0, padStart);
    const padding = text.slice(padStart);
    if (!/^=+$/.test(padding) || text.length % 8 !== 0 || padding.length !== (8 - (body.length % 8)) % 8) {
      throw new TypeError("invalid base32: bad padding");
    }
  }
  const tail = body.length % 8;
  if (!(encodedTailLength as readonly number[]).includes(tail)) {
    throw new TypeError("invalid base32: impossible length");
  }
  const out = Buffer.alloc(Math.floor((body.length * 5) / 8));
  let buffer = 0;
  let bits = 0;
  let index = 0;
  for (const char of body) {
    const value = values.get(char);
    if (value === undefined) throw new TypeError("invalid base32: character outside the alphabet");
    buffer = ((buffer << 5) | value) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out[index++] = (buffer >>> bits) & 0xff;
    }
  }
  if ((buffer & ((1 << bits) - 1)) !== 0) throw new TypeError("invalid base32: non-zero trailing bits");
  return out;
}
