/**
 * Why a JPKI signature was not accepted: a stable code (pages carry it in
 * data-error, tests assert on it), the HTTP status, and a message for the
 * person at the page. Messages never quote the certificate.
 */
export type JpkiErrorCode =
  | "challenge_invalid"
  | "certificate_invalid"
  | "certificate_untrusted"
  | "certificate_not_linked"
  | "certificate_linked_elsewhere"
  | "certificate_wrong_type"
  | "signature_invalid"
  | "signature_mismatch"
  | "certificate_expired"
  | "certificate_revoked"
  | "status_unavailable"
  | "sign_request_invalid"
  | "sign_request_pending"
  | "binding_code_mismatch"
  | "signing_stopped_by_app";

const statuses: Record<JpkiErrorCode, number> = {
  challenge_invalid: 400,
  certificate_invalid: 400,
  certificate_untrusted: 400,
  certificate_not_linked: 403,
  certificate_linked_elsewhere: 409,
  certificate_wrong_type: 403,
  signature_invalid: 400,
  signature_mismatch: 401,
  certificate_expired: 403,
  certificate_revoked: 403,
  status_unavailable: 503,
  sign_request_invalid: 400,
  sign_request_pending: 409,
  binding_code_mismatch: 403,
  signing_stopped_by_app: 403,
};

/**
 * Which words the page shows: the code's, or a finer case of it where one
 * code has several (a challenge used, expired or unknown, say), so that the
 * page can say it in the person's language.
 */
export type JpkiWording =
  | JpkiErrorCode
  | "challenge_used"
  | "challenge_expired"
  | "certificate_not_x509"
  | "certificate_not_linked_to_anyone"
  | "sign_request_unknown"
  | "sign_request_expired"
  | "sign_request_used"
  | "sign_request_other_browser"
  | "pin_locked"
  | "signing_cancelled";

export class JpkiError extends Error {
  override name = "JpkiError";
  readonly status: number;
  constructor(
    readonly code: JpkiErrorCode,
    message: string,
    readonly wording: JpkiWording = code,
  ) {
    super(message);
    this.status = statuses[code];
  }
}
