import { describe, expect, it } from "vitest";
import { base32Decode, base32Encode } from "../../../src/domain/credentials/base32.ts";
import { generateTotpSecret, hotp, totpCode, totpStep, totpUri, verifyTotp } from "../../../src/domain/credentials/totp.ts";

/** "12345678901234567890" in base32: the RFC 6238 SHA-1 seed. */
const secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";
const key = Buffer.from("12345678901234567890");

// RFC 6238 Appendix B, SHA-1 rows: Unix time in seconds, 8-digit TOTP.
const rfc6238: [number, string][] = [
  [59, "94287082"],
  [1111111109, "07081804"],
  [1111111111, "14050471"],
  [1234567890, "89005924"],
  [2000000000, "69279037"],
  [20000000000, "65353130"],
];

// RFC 4226 Appendix D: HOTP for counters 0 to 9.
const rfc4226 = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"];

describe("HOTP", () => {
  it.each(rfc4226.map((code, counter) => [counter, code] as const))("counter %i gives %s", (counter, code) => {
    expect(hotp(key, counter)).toBe(code);
  });

  it("rejects bad counters and digit counts", () => {
    expect(() => hotp(key, -1)).toThrow(RangeError);
    expect(() => hotp(key, 1.5)).toThrow(RangeError);
    expect(() => hotp(key, 0, 5)).toThrow(RangeError);
  });
});

describe("TOTP codes", () => {
  it.each(rfc6238)("at %i s: %s (8 digits), its last 6 as the code", (seconds, eightDigits) => {
    expect(hotp(key, Math.floor(seconds / 30), 8)).toBe(eightDigits);
    expect(totpCode(secret, seconds * 1000)).toBe(eightDigits.slice(-6));
  });

  it("changes at the step boundary", () => {
    expect(totpStep(59_999)).toBe(1);
    expect(totpStep(60_000)).toBe(2);
    expect(totpCode(secret, 30_000)).toBe("287082");
    expect(totpCode(secret, 59_999)).toBe("287082");
    expect(totpCode(secret, 60_000)).toBe("359152");
  });

  it("rejects malformed, short and negative input", () => {
    expect(() => totpCode("not base32!", 0)).toThrow(TypeError);
    expect(() => totpCode(base32Encode(Buffer.alloc(10)), 0)).toThrow(RangeError);
    expect(() => totpCode(secret, -1)).toThrow(RangeError);
    expect(() => totpCode(secret, Number.NaN)).toThrow(RangeError);
  });
});

describe("TOTP verification", () => {
  const now = 1111111111 * 1000;
  const step = 37037037;
  const codeAt = (s: number) => hotp(key, s);

  it("returns the matched step", () => {
    expect(totpStep(now)).toBe(step);
    expect(verifyTotp(secret, "050471", now)).toBe(step);
    expect(verifyTotp(secret, "287082", 59_000)).toBe(1);
  });

  it("accepts one step either side by default, not two", () => {
    expect(verifyTotp(secret, codeAt(step - 1), now)).toBe(step - 1);
    expect(verifyTotp(secret, codeAt(step + 1), now)).toBe(step + 1);
    expect(verifyTotp(secret, codeAt(step - 2), now)).toBeNull();
    expect(verifyTotp(secret, codeAt(step + 2), now)).toBeNull();
    expect(verifyTotp(secret, codeAt(step - 1), now, { window: 1 })).toBe(step - 1);
  });

  it("takes the window from the options", () => {
    expect(verifyTotp(secret, codeAt(step - 1), now, { window: 0 })).toBeNull();
    expect(verifyTotp(secret, codeAt(step), now, { window: 0 })).toBe(step);
    expect(verifyTotp(secret, codeAt(step + 2), now, { window: 2 })).toBe(step + 2);
    expect(verifyTotp(secret, codeAt(step - 3), now, { window: 2 })).toBeNull();
    expect(() => verifyTotp(secret, codeAt(step), now, { window: 11 })).toThrow(RangeError);
    expect(() => verifyTotp(secret, codeAt(step), now, { window: -1 })).toThrow(RangeError);
  });

  it("refuses steps up to afterStep (replay)", () => {
    expect(verifyTotp(secret, codeAt(step), now, { afterStep: step })).toBeNull();
    expect(verifyTotp(secret, codeAt(step - 1), now, { afterStep: step - 1 })).toBeNull();
    expect(verifyTotp(secret, codeAt(step), now, { afterStep: step - 1 })).toBe(step);
    expect(verifyTotp(secret, codeAt(step + 1), now, { afterStep: step })).toBe(step + 1);
  });

  it("requires exactly six ASCII digits", () => {
    const valid = codeAt(step);
    expect(valid).toBe("050471");
    for (const code of ["05047a", " 050471", "050471 ", "050 471", "0504710", "50471", "", "\uff10\uff15\uff10\uff14\uff17\uff11", "+50471", "5.0471"]) {
      expect(verifyTotp(secret, code, now), JSON.stringify(code)).toBeNull();
    }
    expect(verifyTotp(secret, 50471 as unknown as string, now)).toBeNull();
  });

  it("refuses a code for another secret", () => {
    const other = base32Encode(Buffer.from("abcdefghijklmnopqrst"));
    expect(verifyTotp(other, "050471", now)).toBeNull();
  });
});

describe("TOTP secrets and URIs", () => {
  it("generates 20 random bytes as unpadded base32", () => {
    const first = generateTotpSecret();
    expect(first).toMatch(/^[A-Z2-7]{32}$/);
    expect(base32Decode(first)).toHaveLength(20);
    expect(generateTotpSecret()).not.toBe(first);
  });

  it("builds the otpauth URI", () => {
    expect(totpUri(secret, { issuer: "Shomei Test", account: "alice@example.com" })).toBe(
      "otpauth://totp/Shomei%20Test:alice%40example.com" +
        "?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Shomei%20Test&algorithm=SHA1&digits=6&period=30",
    );
    expect(totpUri(secret.toLowerCase(), { issuer: "a&b", account: "ü" })).toBe(
      `otpauth://totp/a%26b:%C3%BC?secret=${secret}&issuer=a%26b&algorithm=SHA1&digits=6&period=30`,
    );
  });

  it("refuses colons, empty names and bad secrets", () => {
    expect(() => totpUri(secret, { issuer: "a:b", account: "alice" })).toThrow(RangeError);
    expect(() => totpUri(secret, { issuer: "Shomei", account: "a:lice" })).toThrow(RangeError);
    expect(() => totpUri(secret, { issuer: "", account: "alice" })).toThrow(TypeError);
    expect(() => totpUri("1", { issuer: "Shomei", account: "alice" })).toThrow(TypeError);
  });
});
