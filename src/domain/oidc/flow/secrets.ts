import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { fromRandomBytes } from "../../random-pool.ts";

/*
 * The provider's secret values and what is kept of them: random ids and codes,
 * their SHA-256 (stored in their place), and CSRF tokens derived from the server key.
 * (Token issuance is domain/oidc/tokens/.)
 */

/** 256 random bits, base64url: session ids, interaction ids, codes. */
export function randomToken(): string {
  return fromRandomBytes(32, (bytes, at) => bytes.toString("base64url", at, at + 32));
}

/** What is stored in place of a bearer value: its SHA-256, hex. */
export function sha256Hex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

/**
 * The `sid` clients see for a session (OpenID Connect Front-Channel and
 * Back-Channel Logout): an HMAC of the stored session hash under the server
 * key. Stable for the session's life, the same on every instance, and neither
 * the cookie value nor what the database keeps, so it cannot be replayed as a
 * cookie nor matched against a leaked sessions table.
 */
export function sessionSid(key: Buffer, sessionIdHash: string): string {
  return createHmac("sha256", key).update(`sid:${sessionIdHash}`).digest("base64url");
}

/** A per-interaction CSRF token: an HMAC of the interaction id under the server key, so nothing needs storing. */
export function csrfToken(key: Buffer, interactionId: string): string {
  return createHmac("sha256", key).update(`csrf:${interactionId}`).digest("base64url");
}

export function csrfTokenMatches(key: Buffer, interactionId: string, presented: unknown): boolean {
  if (typeof presented !== "string") return false;
  const expected = Buffer.from(csrfToken(key, interactionId));
  const given = Buffer.from(presented);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
