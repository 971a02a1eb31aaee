import type { AttemptOutcome, LoginThrottle } from "../credentials/login-throttle.ts";
import type { AuthMethod } from "./acr.ts";
import type { OidcUserRow } from "./model.ts";
import type { OidcUsers } from "./users.ts";
import { PasskeyError } from "./passkeys/passkey-error.ts";
import type { PasskeyProof } from "./passkeys/passkeys.ts";

/** A passkey ceremony through the throttle: refused, failed with the reason, or the proof. */
export type PasskeyAttempt =
  | { outcome: "refused"; retryAfterSeconds: number }
  | { outcome: "failed"; error: PasskeyError; attemptsLeft: number; retryAfterSeconds?: number | undefined }
  | { outcome: "succeeded"; value: PasskeyProof };

/** Which secret was wrong, so the page can mark that field. */
export type WrongSecret = "password" | "otp";

/**
 * Checks what a person types at the sign-in and step-up pages, always
 * through the throttle: the attempt is counted before the secret is checked,
 * so concurrent guesses cannot outrun the limits. Passwords and one-time
 * codes are counted apart (the throttle's factors), by the login as typed:
 * an unknown login is counted and answered as a known one. A JPKI card
 * signature is not counted here: when typed secrets are paused, the card
 * still signs in. A passkey is counted as a factor of its own: by the
 * credential id the browser names at sign-in (nobody is known yet), by the
 * login at a step-up, and by the address at both.
 */
export class SignIn {
  constructor(
    private readonly users: OidcUsers,
    private readonly throttle: LoginThrottle,
  ) {}

  /** Login with a password; the user when it is right. */
  withPassword(login: string, password: string, address: string): Promise<AttemptOutcome<OidcUserRow, WrongSecret>> {
    return this.throttle.attempt(login, address, ["password"], async () => {
      const user = await this.users.verifyPassword(login, password);
      return user ? { ok: true, value: user } : { ok: false, reason: "password" };
    });
  }

  /**
   * Re-authentication of a signed-in user with every method the step-up
   * requires, in order; the methods performed when all are right.
   */
  reauthenticate(
    user: OidcUserRow,
    required: readonly AuthMethod[],
    secrets: { password: string; otp: string },
    address: string,
  ): Promise<AttemptOutcome<AuthMethod[], WrongSecret>> {
    const factors: WrongSecret[] = [...(required.includes("pwd") ? ["password" as const] : []), ...(required.includes("otp") ? ["otp" as const] : [])];
    return this.throttle.attempt(user.login, address, factors, async () => {
      const performed: AuthMethod[] = [];
      if (required.includes("pwd")) {
        if (!(await this.users.checkPassword(user, secrets.password))) return { ok: false, reason: "password" };
        performed.push("pwd");
      }
      if (required.includes("otp")) {
        if (!(await this.users.verifyOtp(user, secrets.otp))) return { ok: false, reason: "otp" };
        performed.push("otp");
      }
      return { ok: true, value: performed };
    });
  }

  /**
   * A passkey assertion (`prove` checks it), counted under `account`: every
   * refusal of the ceremony (a replayed challenge, an unknown or removed
   * passkey, a bad signature, a counter that went back) is a failure.
   */
  async withPasskey(account: string, address: string, prove: () => Promise<PasskeyProof>): Promise<PasskeyAttempt> {
    let refusal: PasskeyError | undefined;
    const attempt = await this.throttle.attempt(`passkey:${account}`, address, ["passkey"], async () => {
      try {
        return { ok: true, value: await prove() };
      } catch (error) {
        if (!(error instanceof PasskeyError)) throw error;
        refusal = error;
        return { ok: false, reason: "passkey" };
      }
    });
    if (attempt.outcome === "failed") return { outcome: "failed", error: refusal!, attemptsLeft: attempt.attemptsLeft, retryAfterSeconds: attempt.retryAfterSeconds };
    return attempt;
  }
}
