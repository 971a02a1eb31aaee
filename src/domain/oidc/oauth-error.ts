/**
 * The error codes shomei's OpenID Connect endpoints answer with: RFC 6749
 * §4.1.2.1 and §5.2, RFC 6750 §3.1, RFC 9126, RFC 9396, RFC 9449, OpenID
 * Connect Core §3.1.2.6, Grant Management and RFC 7591 §3.2.2. A closed list, so tests and
 * clients can rely on the code, not on the text.
 */
export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_request_uri"
  | "invalid_request_object"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "unsupported_response_type"
  | "invalid_scope"
  | "invalid_authorization_details"
  | "invalid_grant_id"
  | "invalid_token"
  | "insufficient_scope"
  | "invalid_dpop_proof"
  | "use_dpop_nonce"
  | "login_required"
  | "interaction_required"
  | "consent_required"
  | "unmet_authentication_requirements"
  | "access_denied"
  | "invalid_client_metadata"
  | "invalid_redirect_uri"
  | "invalid_software_statement"
  | "unapproved_software_statement"
  | "server_error"
  | "temporarily_unavailable";

/** A redirect_uri matched exactly against the client's registration, and the state to send back with the error. */
export interface CheckedRedirect {
  redirectUri: string;
  state: string | undefined;
}

export interface OAuthErrorOptions {
  /** HTTP status of the answer; 400 unless said otherwise. */
  status?: number;
  /** Why, for the logs only: never sent, since several causes must look the same from outside. */
  reason?: string;
  /** The `WWW-Authenticate` challenge to answer with (RFC 6749 §5.2, RFC 6750 §3). */
  wwwAuthenticate?: string;
  /** Where the error may be sent instead of being shown; see {@link OAuthError.redirectTo}. */
  redirect?: CheckedRedirect;
  /** Further response headers the answer needs (`DPoP-Nonce`, `Retry-After`). */
  headers?: Readonly<Record<string, string>>;
}

/**
 * An error for the client, raised by the domain and rendered by the HTTP
 * layer's one error middleware: as JSON (APIs), as a page (browsers), or as a
 * redirect back to the client. The description is written for the client; the
 * reason is private. An error is redirected only when it carries a
 * {@link CheckedRedirect}: until the client and its exactly matching
 * redirect_uri are known, it is shown to the user instead.
 */
export class OAuthError extends Error {
  override name = "OAuthError";
  readonly status: number;
  readonly reason: string | undefined;
  readonly wwwAuthenticate: string | undefined;
  readonly redirect: CheckedRedirect | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly error: OAuthErrorCode,
    /** Safe to send; empty when the answer carries no error_description. */
    readonly description: string,
    options: OAuthErrorOptions = {},
  ) {
    super(description);
    this.status = options.status ?? 400;
    this.reason = options.reason;
    this.wwwAuthenticate = options.wwwAuthenticate;
    this.redirect = options.redirect;
    this.headers = options.headers ?? {};
  }

  /** The same error, allowed to travel to a redirect_uri the caller has matched against the client's registration. */
  redirectTo(redirect: CheckedRedirect): OAuthError {
    return new OAuthError(this.error, this.description, { ...this.options(), redirect });
  }

  /** The same error with another status and challenge: a proof refused at a resource endpoint is a 401 there. */
  withChallenge(status: number, wwwAuthenticate: string): OAuthError {
    return new OAuthError(this.error, this.description, { ...this.options(), status, wwwAuthenticate });
  }

  private options(): OAuthErrorOptions {
    return { status: this.status, reason: this.reason, wwwAuthenticate: this.wwwAuthenticate, redirect: this.redirect, headers: this.headers };
  }
}
