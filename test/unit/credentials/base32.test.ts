import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { base32Decode, base32Encode } from "../../../src/domain/credentials/base32.ts";

// RFC 4648 section 10.
const vectors: [string, string][] = [
  ["", ""],
  ["f", "MY======"],
  ["fo", "MZXQ===="],
  ["foo", "MZXW6==="],
  ["foob", "MZXW6YQ="],
  ["fooba", "MZXW6YTB"],
  ["foobar", "MZXW6YTBOI======"],
];

describe("base32", () => {
  it.each(vectors)("encodes %j as %s (padded on request)", (plain, encoded) => {
    expect(base32Encode(Buffer.from(plain), { padding: true })).toBe(encoded);
    expect(base32Encode(Buffer.from(plain))).toBe(encoded.replace(/=+$/, ""));
  });

  it.each(vectors)("decodes %j from %s, padded or not, either case", (plain, encoded) => {
    expect(base32Decode(encoded).toString()).toBe(plain);
    expect(base32Decode(encoded.replace(/=+$/, "")).toString()).toBe(plain);
    expect(base32Decode(encoded.toLowerCase()).toString()).toBe(plain);
  });

  it("encodes the RFC 6238 test secret", () => {
    expect(base32Encode(Buffer.from("12345678901234567890"))).toBe("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ");
  });

  it("round-trips every length", () => {
    for (let length = 0; length <= 41; length++) {
      const bytes = randomBytes(length);
      expect(base32Decode(base32Encode(bytes)).equals(bytes)).toBe(true);
    }
  });

  it.each([
    ["a character outside the alphabet", "MY1="],
    ["a digit 0", "M0======"],
    ["whitespace", "MZXW 6==="],
    ["an impossible length", "M"],
    ["another impossible length", "MZX"],
    ["non-zero trailing bits", "MZ"],
    ["too little padding", "MY="],
    ["too much padding", "MY========"],
    ["padding in the middle", "MY==MZXQ"],
    ["padding on a full block", "MZXW6YTB========"],
  ])("rejects %s", (_name, text) => {
    expect(() => base32Decode(text)).toThrow(TypeError);
  });
});
