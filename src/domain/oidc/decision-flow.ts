import { acrToRequest, knownRequestedAcrs, satisfies, type AcrPolicy } from "./acr.ts";

/**
 * The authorization endpoint's decision flow (specification 3.1) as a pure
 * function. Each outcome carries the number of the rule that produced it, so
 * tests and logs can name it. The caller re-evaluates after every step of the
 * interaction (login, re-authentication, consent answer) until the outcome is
 * `issue_code` or `error`.
 */

export type Prompt = "none" | "login" | "consent";

/** Why a signed-in user must authenticate again. */
export type ReauthReason = "prompt_login" | "max_age" | "acr";

export interface DecisionSession {
  /** When the user last actively authenticated, epoch ms. */
  authTime: number;
  /** The level that authentication reached. */
  acr: string;
  amr: readonly string[];
}

export interface DecisionInput {
  /** The `prompt` values (validation has already rejected `none` combined with another value). */
  prompt: ReadonlySet<Prompt>;
  /** `max_age` in seconds, when requested. */
  maxAge?: number | undefined;
  /** `acr_values`, split, in order of preference. */
  acrValues: readonly string[];
  /** The user's login session, when there is one. */
  session?: DecisionSession | undefined;
  /** ACR levels the signed-in user could reach by re-authenticating (from their enrolled methods). */
  reachableAcrs: readonly string[];
  /** True when the user's existing grant covers every requested scope and authorization_details entry. */
  alreadyGranted: boolean;
  /** The user's answer on the consent page, once given in this interaction. */
  consent?: "allow" | "deny" | undefined;
  /**
   * True once the user has actively authenticated within this interaction,
   * by logging in or by re-authenticating; `prompt=login` and `max_age` are
   * then met and do not send the user back to authenticate again.
   */
  reauthenticatedInThisInteraction: boolean;
  /** Epoch ms. */
  now: number;
  policy: AcrPolicy;
}

export type DecisionErrorCode =
  | "login_required"
  | "interaction_required"
  | "unmet_authentication_requirements"
  | "consent_required"
  | "access_denied";

export type DecisionOutcome =
  | { kind: "error"; error: "login_required"; description: string; row: 1 }
  | { kind: "error"; error: "interaction_required"; description: string; reasons: ReauthReason[]; row: 3 }
  /**
   * Row 4 has two causes: the request names only levels the provider does not
   * have (the client's doing), or the signed-in user has no method that
   * reaches the level (the user's situation, which a page can explain).
   */
  | { kind: "error"; error: "unmet_authentication_requirements"; description: string; reasons: ReauthReason[]; cause: "unsupported_acr_values" | "no_method"; row: 4 }
  | { kind: "error"; error: "consent_required"; description: string; row: 8 }
  | { kind: "error"; error: "access_denied"; description: string; row: 10 }
  | { kind: "login"; row: 2 }
  | { kind: "reauth"; requiredAcr: string; reasons: ReauthReason[]; row: 5 }
  | { kind: "consent"; row: 7 | 9 }
  /** Row 6: consent skipped, already granted. Row 9: the user allowed on the consent page (shown by row 7 or 9). */
  | { kind: "issue_code"; row: 6 | 9 };

/**
 * Whether the outcome depends on `reachableAcrs`: only rows 4 and 5 look at
 * it, so any other outcome is the same whatever it holds, and a caller may
 * decide first without reading what the user could reach.
 */
export function dependsOnReachableAcrs(outcome: DecisionOutcome): boolean {
  return outcome.row === 4 || outcome.row === 5;
}

/**
 * Why the signed-in user must authenticate again, in the order
 * prompt_login, max_age, acr; empty when the session is good enough.
 *
 * - `prompt=login` asks for an active authentication during this request;
 *   one performed in this interaction (a login or a re-authentication) meets it.
 * - `max_age` is exceeded when `now - authTime > maxAge * 1000` (exactly
 *   `maxAge` seconds is still fresh). `max_age=0` always asks for an active
 *   authentication, regardless of clocks. An authentication performed in this
 *   interaction meets any `max_age`: it is younger than the request itself.
 * - `acr`: the session's level does not satisfy `acr_values` (see acr.ts).
 *   This is checked even after authenticating in this interaction, so a login
 *   below the requested level leads to a step-up re-authentication.
 */
export function reauthenticationReasons(input: DecisionInput, session: DecisionSession): ReauthReason[] {
  const reasons: ReauthReason[] = [];
  const fresh = input.reauthenticatedInThisInteraction;
  if (input.prompt.has("login") && !fresh) reasons.push("prompt_login");
  if (input.maxAge !== undefined && !fresh && (input.maxAge === 0 || input.now - session.authTime > input.maxAge * 1000)) {
    reasons.push("max_age");
  }
  if (!satisfies(input.policy, session.acr, input.acrValues)) reasons.push("acr");
  return reasons;
}

function describeReasons(reasons: readonly ReauthReason[]): string {
  const words: Record<ReauthReason, string> = {
    prompt_login: "prompt=login",
    max_age: "max_age exceeded",
    acr: "requested acr_values not satisfied",
  };
  return reasons.map((r) => words[r]).join(", ");
}

/**
 * Decides the next step of an authorization request. Rules are evaluated in
 * the specification's order, with two refinements:
 *
 * - A consent answer of "deny" ends the flow with `access_denied` (row 10)
 *   before anything else is looked at: a refusal grants nothing, so there is
 *   no point authenticating first.
 * - A consent answer of "allow" completes the flow (row 9, `issue_code`) only
 *   once rows 1–5 pass: an answer never stands in for authentication.
 *
 * - `acr_values` made only of values the policy does not know is
 *   `unmet_authentication_requirements` (row 4) before anything else but a
 *   refusal: no authentication can reach a level the provider does not have,
 *   and issuing a code at some other level would give the client a different
 *   class than it asked for.
 *
 * No outcome that shows a page is returned under `prompt=none`: the login page
 * becomes row 1, the re-authentication page row 3, a consent page row 8.
 */
export function decideAuthorization(input: DecisionInput): DecisionOutcome {
  const promptNone = input.prompt.has("none");

  if (input.consent === "deny") {
    return { kind: "error", error: "access_denied", description: "the user refused consent", row: 10 };
  }

  if (input.acrValues.length > 0 && knownRequestedAcrs(input.policy, input.acrValues).length === 0) {
    return {
      kind: "error",
      error: "unmet_authentication_requirements",
      description: `none of the requested acr_values is supported (supported: ${input.policy.levels.join(", ")} and their aliases)`,
      reasons: ["acr"],
      cause: "unsupported_acr_values",
      row: 4,
    };
  }

  const session = input.session;
  if (session === undefined) {
    if (promptNone) {
      return { kind: "error", error: "login_required", description: "the user is not signed in and prompt=none forbids the login page", row: 1 };
    }
    return { kind: "login", row: 2 };
  }

  const reasons = reauthenticationReasons(input, session);
  if (reasons.length > 0) {
    if (promptNone) {
      return {
        kind: "error",
        error: "interaction_required",
        description: `re-authentication is required (${describeReasons(reasons)}) and prompt=none forbids it`,
        reasons,
        row: 3,
      };
    }
    const requiredAcr = acrToRequest(input.policy, input.acrValues, input.reachableAcrs);
    if (requiredAcr === undefined) {
      return {
        kind: "error",
        error: "unmet_authentication_requirements",
        description: `re-authentication is required (${describeReasons(reasons)}) and no authentication method available to the user can satisfy it`,
        reasons,
        cause: "no_method",
        row: 4,
      };
    }
    return { kind: "reauth", requiredAcr, reasons, row: 5 };
  }

  if (input.consent === "allow") return { kind: "issue_code", row: 9 };

  if (input.alreadyGranted && !input.prompt.has("consent")) return { kind: "issue_code", row: 6 };

  if (promptNone) {
    return { kind: "error", error: "consent_required", description: "consent is required and prompt=none forbids the consent page", row: 8 };
  }
  return { kind: "consent", row: input.alreadyGranted ? 7 : 9 };
}
