import { createDecipheriv, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { open, seal, SecretBoxError } from "../../../src/domain/credentials/secret-box.ts";

const key = Buffer.from("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "hex");
const secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";

/** Flips the low bit of the first byte of one part of a sealed value. */
function flip(sealed: string, index: 1 | 2 | 3): string {
  const parts = sealed.split(".");
  const bytes = Buffer.from(parts[index]!, "base64url");
  bytes[0]! ^= 1;
  parts[index] = bytes.toString("base64url");
  return parts.join(".");
}

describe("secret box", () => {
  it("round-trips text and bytes", () => {
    expect(open(key, seal(key, secret, "user-1"), "user-1").toString("utf8")).toBe(secret);
    const bytes = randomBytes(100);
    expect(open(key, seal(key, bytes, Buffer.from("row")), "row").equals(bytes)).toBe(true);
    expect(open(key, seal(key, "", "user-1"), "user-1")).toHaveLength(0);
    expect(open(key, seal(key, "ünïcødé", ""), "").toString("utf8")).toBe("ünïcødé");
  });

  it("writes v1.<12-byte IV>.<ciphertext>.<16-byte tag>", () => {
    const sealed = seal(key, secret, "user-1");
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{22}$/);
    expect(seal(key, secret, "user-1")).not.toBe(sealed);
  });

  it("is AES-256-GCM over a prefixed associated data", () => {
    const [, iv, ciphertext, tag] = seal(key, secret, "user-1").split(".") as string[];
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv!, "base64url"));
    decipher.setAAD(Buffer.from("shomei secret-box v1\0user-1"));
    decipher.setAuthTag(Buffer.from(tag!, "base64url"));
    const plaintext = Buffer.concat([decipher.update(Buffer.from(ciphertext!, "base64url")), decipher.final()]);
    expect(plaintext.toString("utf8")).toBe(secret);
  });

  it.each([
    ["IV", 1],
    ["ciphertext", 2],
    ["tag", 3],
  ] as const)("refuses a tampered %s", (_name, index) => {
    const sealed = seal(key, secret, "user-1");
    expect(() => open(key, flip(sealed, index), "user-1")).toThrow(SecretBoxError);
    expect(() => open(key, flip(sealed, index), "user-1")).toThrow(/failed authentication/);
  });

  it("refuses other associated data", () => {
    const sealed = seal(key, secret, "user-1");
    expect(() => open(key, sealed, "user-2")).toThrow(/failed authentication/);
    expect(() => open(key, sealed, "")).toThrow(SecretBoxError);
    expect(open(key, sealed, "user-1").toString("utf8")).toBe(secret);
  });

  it("refuses another key", () => {
    const sealed = seal(key, secret, "user-1");
    expect(() => open(randomBytes(32), sealed, "user-1")).toThrow(/failed authentication/);
  });

  it.each([
    ["empty", ""],
    ["another version", "v2.AAAAAAAAAAAAAAAA.AA.AAAAAAAAAAAAAAAAAAAAAA"],
    ["a missing part", "v1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA"],
    ["a short IV", "v1.AAAAAAAAAAAA.AA.AAAAAAAAAAAAAAAAAAAAAA"],
    ["a short tag", "v1.AAAAAAAAAAAAAAAA.AA.AAAAAAAAAAAAAAAAAAAA"],
    ["standard base64", "v1.AAAAAAAAAAAAAAAA.A+.AAAAAAAAAAAAAAAAAAAAAA"],
    ["padding", "v1.AAAAAAAAAAAAAAAA.AA==.AAAAAAAAAAAAAAAAAAAAAA"],
  ])("refuses a malformed value: %s", (_name, sealed) => {
    expect(() => open(key, sealed, "user-1")).toThrow(SecretBoxError);
    expect(() => open(key, sealed, "user-1")).toThrow(/malformed/);
  });

  it("requires a 32-byte key", () => {
    expect(() => seal(randomBytes(16), secret, "user-1")).toThrow(TypeError);
    expect(() => open(randomBytes(31), seal(key, secret, "user-1"), "user-1")).toThrow(TypeError);
  });
});
