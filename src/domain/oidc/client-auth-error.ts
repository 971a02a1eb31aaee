import { OAuthError } from "./oauth-error.ts";

/**
 * Why client authentication failed. For logs and metrics only: it is never
 * sent to the client, because several reasons (unknown client, wrong secret,
 * wrong method…) must look the same from outside.
 */
export type ClientAuthFailureReason =
  // The request itself (invalid_request).
  | "parameter_repeated"
  | "multiple_methods"
  | "client_id_missing"
  | "client_id_mismatch"
  | "assertion_incomplete"
  // The credentials (invalid_client).
  | "credentials_missing"
  | "unsupported_authorization_scheme"
  | "malformed_basic_credentials"
  | "unsupported_assertion_type"
  | "unknown_client"
  | "method_mismatch"
  | "public_client_not_allowed"
  | "client_not_configured"
  | "client_keys_unavailable"
  | "secret_mismatch"
  | "assertion_malformed"
  | "assertion_algorithm_not_allowed"
  | "assertion_signature_invalid"
  | "assertion_issuer_invalid"
  | "assertion_subject_invalid"
  | "assertion_audience_invalid"
  | "assertion_claim_missing"
  | "assertion_expired"
  | "assertion_not_yet_valid"
  | "assertion_lifetime_too_long"
  | "assertion_replayed";

export type ClientAuthErrorCode = "invalid_client" | "invalid_request";

/**
 * Description sent for every failure that happens after the client is looked
 * up: an unknown client, a wrong secret and a bad assertion are
 * indistinguishable from outside.
 */
export const clientAuthFailedDescription = "client authentication failed";

/** The challenge every invalid_client answer carries: the client learns it must authenticate, whatever it tried. */
const basicChallenge = 'Basic realm="shomei", charset="UTF-8"';

/**
 * A failed client authentication, in OAuth terms (RFC 6749 §5.2): an
 * OAuthError whose reason is one of the closed list above. invalid_client is
 * answered 401 with a Basic challenge, invalid_request 400. The description is
 * safe to send; it never holds a secret or an assertion.
 */
export class ClientAuthError extends OAuthError {
  override name = "ClientAuthError";
  declare readonly error: ClientAuthErrorCode;
  declare readonly reason: ClientAuthFailureReason;
  constructor(
    error: ClientAuthErrorCode,
    description: string,
    reason: ClientAuthFailureReason,
    /**
     * RFC 6749 §5.2 makes the challenge a MUST here: the client tried the
     * Authorization header, or presented no credentials at all. The answer
     * challenges every invalid_client anyway; this records whether it had to.
     */
    readonly challenge: boolean,
  ) {
    const invalid = error === "invalid_client";
    super(error, description, { status: invalid ? 401 : 400, reason, ...(invalid ? { wwwAuthenticate: basicChallenge } : {}) });
  }
}

export function invalidClient(reason: ClientAuthFailureReason, options: { description?: string; challenge?: boolean } = {}): ClientAuthError {
  return new ClientAuthError("invalid_client", options.description ?? clientAuthFailedDescription, reason, options.challenge ?? false);
}

export function invalidRequest(reason: ClientAuthFailureReason, description: string): ClientAuthError {
  return new ClientAuthError("invalid_request", description, reason, false);
}
