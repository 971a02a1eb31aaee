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

/**
 * A failed client authentication, in OAuth terms (RFC 6749 §5.2). The
 * description is safe to send; it never holds a secret or an assertion.
 */
export class ClientAuthError extends Error {
  override name = "ClientAuthError";
  constructor(
    readonly error: ClientAuthErrorCode,
    readonly description: string,
    /** Internal detail for logs; never send it to the client. */
    readonly reason: ClientAuthFailureReason,
    /**
     * Answer 401 with `WWW-Authenticate: Basic`: the client tried the
     * Authorization header (RFC 6749 §5.2 makes this a MUST), or presented no
     * credentials at all.
     */
    readonly challenge: boolean,
  ) {
    super(description);
  }
}

export function invalidClient(reason: ClientAuthFailureReason, options: { description?: string; challenge?: boolean } = {}): ClientAuthError {
  return new ClientAuthError("invalid_client", options.description ?? clientAuthFailedDescription, reason, options.challenge ?? false);
}

export function invalidRequest(reason: ClientAuthFailureReason, description: string): ClientAuthError {
  return new ClientAuthError("invalid_request", description, reason, false);
}
