import type { AuthMethod } from "./acr.ts";
import type { ReauthReason } from "./decision-flow.ts";

/**
 * How long a typed password still counts for a step-up: five minutes. A
 * person who signed in with a password and is then asked for a stronger level
 * (acr_values) within this window is asked only for what the password lacks
 * (the one-time code), not to type the password again seconds after typing it.
 */
export const recentPasswordWindowMs = 5 * 60_000;

export interface CarryInput {
  /** Why the step-up page is shown (decision flow). */
  reasons: readonly ReauthReason[];
  /** The session's methods and when they were performed. */
  session: { amr: readonly string[]; authTime: number };
  /** When this interaction last verified the password (right password, wrong code), if it did. */
  passwordVerifiedAt: number | undefined;
  now: number;
}

/**
 * The methods a step-up need not ask for again: only the password, and only
 * when it was typed within the window, either in this interaction (a wrong
 * code after a right password) or for the session itself when the sole reason
 * for the step-up is a higher level. prompt=login and max_age ask the user to
 * prove presence now, so a session's password does not count for them.
 */
export function carriedMethods(input: CarryInput): AuthMethod[] {
  const recent = (at: number) => at <= input.now && input.now - at <= recentPasswordWindowMs;
  if (input.passwordVerifiedAt !== undefined && recent(input.passwordVerifiedAt)) return ["pwd"];
  const onlyLevel = input.reasons.length > 0 && input.reasons.every((r) => r === "acr");
  if (onlyLevel && input.session.amr.includes("pwd") && recent(input.session.authTime)) return ["pwd"];
  return [];
}
