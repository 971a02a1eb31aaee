/**
 * Why a passkey ceremony was refused: a stable code (pages carry it in
 * data-error, tests assert on it), the HTTP status, and an English message
 * for logs and tests; pages say it in their own language by the code.
 */
export type PasskeyErrorCode =
  | "response_invalid"
  | "challenge_invalid"
  | "passkey_unknown"
  | "passkey_other_user"
  | "verification_failed"
  | "counter_went_back"
  | "user_unknown"
  | "already_registered"
  | "name_invalid";

const statuses: Record<PasskeyErrorCode, number> = {
  response_invalid: 400,
  challenge_invalid: 400,
  passkey_unknown: 401,
  passkey_other_user: 403,
  verification_failed: 401,
  counter_went_back: 401,
  user_unknown: 401,
  already_registered: 409,
  name_invalid: 400,
};

export class PasskeyError extends Error {
  readonly status: number;
  constructor(
    readonly code: PasskeyErrorCode,
    message: string,
    /** For counter_went_back: which credential, for the warning in the log (public ids only). */
    readonly credential?: { credentialId: string; userId: string },
  ) {
    super(message);
    this.name = "PasskeyError";
    this.status = statuses[code];
  }
}
