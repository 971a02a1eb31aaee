import { timingSafeEqual } from "node:crypto";
import { sha256Hex } from "../flow/secrets.ts";
import { OAuthError } from "../oauth-error.ts";

const realm = 'realm="shomei"';
const tokenPattern = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i;

/** The token of an `Authorization: Bearer` header (RFC 6750 section 2.1); undefined for anything else. */
export function bearerValue(authorization: string | undefined): string | undefined {
  return authorization === undefined ? undefined : tokenPattern.exec(authorization)?.[1];
}

/**
 * The refusal of a missing or wrong registration credential (RFC 7591
 * section 3, RFC 7592 section 2): 401 invalid_token with its challenge. One
 * answer for a wrong token, a token of another client and an unknown
 * client, so a token tells nothing about clients it does not manage.
 */
export function invalidRegistrationToken(description: string): OAuthError {
  return new OAuthError("invalid_token", description, {
    status: 401,
    wwwAuthenticate: `Bearer ${realm}, error="invalid_token", error_description="${description}"`,
  });
}

/** A stand-in compared against when there is no stored hash, so that the answer takes as long either way. */
const placeholderHash = "0".repeat(64);

/** Whether the presented token hashes to the stored SHA-256 (hex), compared in constant time. */
export function tokenMatches(presented: string | undefined, storedHash: string | undefined): boolean {
  const given = Buffer.from(sha256Hex(presented ?? ""), "hex");
  const stored = Buffer.from(storedHash ?? placeholderHash, "hex");
  const equal = stored.length === given.length && timingSafeEqual(given, stored);
  return presented !== undefined && storedHash !== undefined && equal;
}
