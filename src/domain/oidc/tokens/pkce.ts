import { createHash, timingSafeEqual } from "node:crypto";

const verifierPattern = /^[A-Za-z0-9._~-]{43,128}$/;

/** RFC 7636 §4.6 with S256: BASE64URL(SHA256(ASCII(code_verifier))) must equal the stored challenge. */
export function pkceMatches(verifier: string, challenge: string): boolean {
  if (!verifierPattern.test(verifier)) return false;
  const computed = Buffer.from(createHash("sha256").update(verifier, "ascii").digest("base64url"));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}
