/** The OAuth 2.0 / OpenID Connect error codes shomei's OIDC endpoints answer with. */
export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_request_uri"
  | "invalid_client"
  | "unauthorized_client"
  | "unsupported_response_type"
  | "invalid_scope"
  | "invalid_authorization_details"
  | "invalid_grant_id"
  | "login_required"
  | "interaction_required"
  | "consent_required"
  | "unmet_authentication_requirements"
  | "access_denied"
  | "server_error"
  | "temporarily_unavailable";

/**
 * An error for the client. `redirectable` is decided by how far validation got:
 * only once the client and its exactly matching redirect_uri are known may the
 * error travel to that redirect_uri; before that it is shown to the user.
 */
export class OAuthError extends Error {
  override name = "OAuthError";
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly redirectable = true,
  ) {
    super(description);
  }
}
