import { describe, expect, it } from "vitest";
import { hasIssuedSecretShape, orderedSecret, randomToken, sha256Hex, storedKeyOf } from "../../src/domain/oidc/flow/secrets.ts";

describe("ordered secrets", () => {
  const now = Date.UTC(2026, 10, 25, 12, 0, 0, 123);

  it("carry the time in their first 6 bytes and 256 random bits after it", () => {
    const secret = orderedSecret(now);
    expect(secret).toMatch(/^[A-Za-z0-9_-]{51}$/);
    const bytes = Buffer.from(secret, "base64url");
    expect(bytes).toHaveLength(38);
    expect(bytes.readUIntBE(0, 6)).toBe(now);
    const others = Array.from({ length: 50 }, () => orderedSecret(now));
    expect(new Set([secret, ...others.map((s) => s.slice(8))]).size).toBe(51);
    expect(new Set(others.map((s) => s.slice(0, 8)))).toEqual(new Set([secret.slice(0, 8)]));
  });

  it("are stored as their time in hex then 52 hex digits of their SHA-256, 64 characters in all", () => {
    const secret = orderedSecret(now);
    const key = storedKeyOf(secret);
    expect(key).toHaveLength(64);
    expect(key).toBe(now.toString(16).padStart(12, "0") + sha256Hex(secret).slice(0, 52));
  });

  it("sort by time of issue, whatever their random part", () => {
    const keys = Array.from({ length: 200 }, (_, i) => storedKeyOf(orderedSecret(now + i * 7)));
    expect([...keys].sort()).toEqual(keys);
  });

  it("keep other values keyed by their whole SHA-256: values issued before, and anything made up", () => {
    const old = randomToken();
    expect(storedKeyOf(old)).toBe(sha256Hex(old));
    expect(storedKeyOf("")).toBe(sha256Hex(""));
    expect(storedKeyOf("B".repeat(52))).toBe(sha256Hex("B".repeat(52)));
  });

  it("give a made-up value with a real secret's time another key", () => {
    const secret = orderedSecret(now);
    const forged = secret.slice(0, 8) + "A".repeat(43);
    expect(storedKeyOf(forged).slice(0, 12)).toBe(storedKeyOf(secret).slice(0, 12));
    expect(storedKeyOf(forged)).not.toBe(storedKeyOf(secret));
  });

  it("clamp times outside 48 bits instead of failing", () => {
    expect(Buffer.from(orderedSecret(-5), "base64url").readUIntBE(0, 6)).toBe(0);
    expect(Buffer.from(orderedSecret(2 ** 48 + 9), "base64url").readUIntBE(0, 6)).toBe(9);
  });
});

describe("the shape of an issued secret", () => {
  it("is an ordered secret's or an earlier random token's, in base64url, and nothing else", () => {
    expect(hasIssuedSecretShape(orderedSecret(Date.now()))).toBe(true);
    expect(hasIssuedSecretShape(randomToken())).toBe(true);
    for (const value of ["", "A".repeat(42), "A".repeat(44), "A".repeat(50), "A".repeat(52), `${"A".repeat(42)}+`, `${"A".repeat(50)}=`, `${"A".repeat(42)}\n`]) {
      expect(hasIssuedSecretShape(value), JSON.stringify(value)).toBe(false);
    }
  });
});
