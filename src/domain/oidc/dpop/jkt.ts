import { OAuthError } from "../oauth-error.ts";

/** A base64url SHA-256 JWK thumbprint (RFC 7638) is 43 characters. */
const thumbprintPattern = /^[A-Za-z0-9_-]{43}$/;

/**
 * The `dpop_jkt` authorization request parameter (RFC 9449 section 10):
 * the thumbprint of the key the code will be bound to, or undefined.
 */
export function parseDpopJkt(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!thumbprintPattern.test(value)) throw new OAuthError("invalid_request", "dpop_jkt must be a base64url SHA-256 JWK thumbprint (43 characters)");
  return value;
}

/** The error of a DPoP-bound code or refresh token presented without a proof of its key. */
export function keyMismatch(what: string): OAuthError {
  return new OAuthError("invalid_grant", `the ${what} is bound to another DPoP key; send a proof signed with that key`);
}
