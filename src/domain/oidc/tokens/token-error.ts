/** RFC 6749 §5.2 token endpoint errors (plus RFC 9396's invalid_authorization_details). */
export type TokenErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "invalid_scope";

export class TokenError extends Error {
  override name = "TokenError";
  constructor(
    readonly error: TokenErrorCode,
    readonly description: string,
  ) {
    super(description);
  }
}
