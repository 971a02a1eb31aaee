import { scryptSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hashPassword, maxPasswordBytes, needsRehash, verifyPassword } from "../../../src/domain/credentials/password-hash.ts";
import { DomainError } from "../../../src/domain/errors.ts";

const b64 = (bytes: Buffer | string) => Buffer.from(bytes).toString("base64url");

describe("password hashing", () => {
  it("stores scrypt N=2^15 r=8 p=1 with a 16-byte salt and 32-byte key", async () => {
    const stored = await hashPassword("correct horse battery staple");
    expect(stored).toMatch(/^scrypt\$15\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(needsRehash(stored)).toBe(false);
  });

  it("stores what scrypt derives from the salt it names", async () => {
    const stored = await hashPassword("correct horse battery staple");
    const [, , , , salt, key] = stored.split("$") as string[];
    const expected = scryptSync("correct horse battery staple", Buffer.from(salt!, "base64url"), 32, {
      N: 2 ** 15,
      r: 8,
      p: 1,
      maxmem: 64 * 1024 * 1024,
    });
    expect(key).toBe(b64(expected));
  });

  it("verifies the right password and refuses others", async () => {
    const stored = await hashPassword("correct horse battery staple");
    await expect(verifyPassword("correct horse battery staple", stored)).resolves.toBe(true);
    await expect(verifyPassword("correct horse battery stapl", stored)).resolves.toBe(false);
    await expect(verifyPassword("Correct horse battery staple", stored)).resolves.toBe(false);
    await expect(verifyPassword("", stored)).resolves.toBe(false);
  });

  it("salts: two hashes of one password differ and both verify", async () => {
    const [first, second] = await Promise.all([hashPassword("same"), hashPassword("same")]);
    expect(first).not.toBe(second);
    expect(first!.split("$")[4]).not.toBe(second!.split("$")[4]);
    await expect(verifyPassword("same", first!)).resolves.toBe(true);
    await expect(verifyPassword("same", second!)).resolves.toBe(true);
  });

  it("reads the parameters from the stored value (RFC 7914 test vector, N=2^14, 64-byte key)", async () => {
    const key = Buffer.from(
      "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2" +
        "d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887",
      "hex",
    );
    const stored = `scrypt$14$8$1$${b64("SodiumChloride")}$${b64(key)}`;
    await expect(verifyPassword("pleaseletmein", stored)).resolves.toBe(true);
    await expect(verifyPassword("pleaseletmeout", stored)).resolves.toBe(false);
    expect(needsRehash(stored)).toBe(true);
  });

  it("returns false, without throwing, for malformed stored values", async () => {
    const good = await hashPassword("pw");
    const [, , , , salt, key] = good.split("$") as string[];
    const malformed = [
      "",
      "scrypt",
      `scrypt$15$8$1$${salt}`,
      `bcrypt$15$8$1$${salt}$${key}`,
      `scrypt$015$8$1$${salt}$${key}`,
      `scrypt$15$8$0$${salt}$${key}`,
      `scrypt$x$8$1$${salt}$${key}`,
      `scrypt$21$8$1$${salt}$${key}`,
      `scrypt$15$8$1$${salt}$${key}$`,
      `scrypt$15$8$1$${salt}$${key}=`,
      `scrypt$15$8$1$${salt}$${key!.slice(0, -1)}!`,
      `scrypt$15$8$1$$${key}`,
      `scrypt$15$8$1$${salt}$${b64(Buffer.alloc(8))}`,
      `scrypt$20$32$16$${salt}$${key}`,
      `$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy`,
    ];
    for (const stored of malformed) {
      await expect(verifyPassword("pw", stored), stored).resolves.toBe(false);
      expect(needsRehash(stored), stored).toBe(true);
    }
    await expect(verifyPassword("pw", null as unknown as string)).resolves.toBe(false);
    await expect(verifyPassword("pw", good)).resolves.toBe(true);
  });

  it("refuses passwords over 1024 UTF-8 bytes as a field error", async () => {
    expect(maxPasswordBytes).toBe(1024);
    const atLimit = "a".repeat(1024);
    const stored = await hashPassword(atLimit);
    await expect(verifyPassword(atLimit, stored)).resolves.toBe(true);
    await expect(verifyPassword(`${atLimit}a`, stored)).resolves.toBe(false);

    const error = await hashPassword("a".repeat(1025)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ code: "invalid_field", field: "password" });
    // 513 two-byte characters: 1026 bytes.
    await expect(hashPassword("é".repeat(513))).rejects.toBeInstanceOf(DomainError);
  });

  it("throws a TypeError for a non-string password", async () => {
    await expect(hashPassword(undefined as unknown as string)).rejects.toBeInstanceOf(TypeError);
    await expect(verifyPassword(42 as unknown as string, "x")).rejects.toBeInstanceOf(TypeError);
  });

  it("normalizes to NFKC before hashing", async () => {
    const stored = await hashPassword("caf\u00e9 \ufb01le");
    await expect(verifyPassword("cafe\u0301 file", stored)).resolves.toBe(true);
  });
});
