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

/** What is stored in place of a bearer value or a client secret (`OidcClient.secretHash`): its SHA-256, hex. */
export function sha256Hex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

/** Length of an orderedSecret: 38 bytes in base64url. */
const orderedSecretLength = 51;

/**
 * A bearer secret for the rows written most often (access and refresh
 * tokens, API accounts' access tokens, authorization codes, request_uris):
 * 48 bits of `now` in milliseconds, then 256 random bits, base64url. Its stored key
 * (storedKeyOf) begins with that time, so each new row's key lands at the
 * end of its table's primary-key index instead of on a random page of it:
 * on SQLite a refresh's two token rows cost 39 µs instead of 87, most of
 * the difference being the index pages each commit copies to the
 * write-ahead log. The creation time it shows is no secret (every token
 * response and ID token tells it); the random part is as long as
 * randomToken's.
 */
export function orderedSecret(now: number): string {
  return fromRandomBytes(32, (bytes, at) => {
    const secret = Buffer.allocUnsafe(38);
    secret.writeUIntBE(Math.max(0, Math.floor(now)) % 2 ** 48, 0, 6);
    bytes.copy(secret, 6, at, at + 32);
    return secret.toString("base64url");
  });
}

/** The shape of a value orderedSecret makes, or randomToken made before it (the 43 characters of 32 bytes). */
export function hasIssuedSecretShape(value: string): boolean {
  return (value.length === orderedSecretLength || value.length === 43) && /^[A-Za-z0-9_-]+$/.test(value);
}

/**
 * What is stored in place of a bearer secret, and looked up by: for an
 * orderedSecret, its time (12 hex digits, read back from its first 8
 * characters) then the first 52 hex digits of its SHA-256, 64 in all like
 * a whole SHA-256; for any other value (a randomToken issued before ordered
 * secrets, or anything a client makes up), its SHA-256. A made-up value
 * can choose where its key sorts but not the hash after it, so it matches
 * nothing.
 */
export function storedKeyOf(secret: string): string {
  const hash = sha256Hex(secret);
  if (secret.length !== orderedSecretLength) return hash;
  return Buffer.from(secret.slice(0, 8), "base64url").toString("hex") + hash.slice(0, 52);
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
