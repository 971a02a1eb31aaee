/**
 * The closed set of failures the domain reports. Transports map each code to
 * their own form (a Connect code and ErrorReason, an OAuth error); tests assert
 * on the code, not on the text.
 */
export type DomainErrorCode =
  | "invalid_field"
  | "check_method_unsupported"
  | "check_method_not_offered"
  | "certificate_not_found"
  | "user_not_found"
  | "certificate_status_not_found"
  | "token_missing"
  | "token_malformed"
  | "token_invalid"
  | "api_use_not_started"
  | "api_use_suspended"
  | "source_unavailable"
  | "mock_environment_disabled"
  | "invalid_page_token"
  | "unsupported_certificate"
  | "verification_not_found"
  | "event_not_found"
  | "webhook_endpoint_not_found"
  | "webhook_endpoint_disabled"
  | "insufficient_scope"
  | "oauth_client_not_found"
  | "dpop_proof_invalid"
  | "account_not_found"
  | "account_exists"
  | "server_key_mismatch";

export class DomainError extends Error {
  override name = "DomainError";
  constructor(
    readonly code: DomainErrorCode,
    message: string,
    /** The request field at fault, in the API's snake_case, when there is one. */
    readonly field?: string,
  ) {
    super(message);
  }
}

export function invalidField(field: string, message: string): DomainError {
  return new DomainError("invalid_field", message, field);
}

/**
 * Outside data that a parser could not read (a damaged certificate): an
 * invalid field like any other to the caller, and worth one warning line to
 * an operator (no stack, no content), since it may be an attack or a broken
 * client rather than a typo.
 */
export class DamagedInputError extends DomainError {
  override name = "DamagedInputError";
  constructor(field: string, message: string) {
    super("invalid_field", message, field);
  }
}
