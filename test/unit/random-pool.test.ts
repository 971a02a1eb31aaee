import { describe, expect, it } from "vitest";
import { randomToken } from "../../src/domain/oidc/flow/secrets.ts";
import { fromRandomBytes } from "../../src/domain/random-pool.ts";

describe("random bytes from the pool", () => {
  it("never hands out the same bytes twice, across refills of the pool", () => {
    // 32 bytes each, 1,000 times: the 4 KiB pool is refilled several times on the way.
    const drawn = Array.from({ length: 1000 }, () => fromRandomBytes(32, (bytes, at) => bytes.toString("hex", at, at + 32)));
    expect(new Set(drawn).size).toBe(1000);
    expect(drawn.every((hex) => /^[0-9a-f]{64}$/.test(hex))).toBe(true);
  });

  it("a draw that would overrun the pool gets a fresh pool, not the bytes past its end", () => {
    fromRandomBytes(4000, () => undefined);
    const start = fromRandomBytes(200, (_, at) => at);
    expect(start).toBe(0);
  });

  it("refuses more bytes than the pool holds", () => {
    expect(() => fromRandomBytes(4097, () => undefined)).toThrow(new RangeError("at most 4096 random bytes at a time, not 4097"));
  });

  it("randomToken: 256 bits as 43 base64url characters, a new one each time", () => {
    const tokens = Array.from({ length: 500 }, randomToken);
    expect(tokens.every((t) => /^[A-Za-z0-9_-]{43}$/.test(t))).toBe(true);
    expect(new Set(tokens).size).toBe(500);
  });
});
