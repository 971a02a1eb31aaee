import express, { type Request, type Response, type Router } from "express";
import { csrfToken } from "../../../domain/oidc/flow/secrets.ts";
import { levelToConfirmBeforeAdding } from "../../../domain/oidc/passkeys/adding-rule.ts";
import type { CeremonyBinding } from "../../../domain/oidc/passkeys/challenges.ts";
import { PasskeyError, type PasskeyErrorCode } from "../../../domain/oidc/passkeys/passkey-error.ts";
import type { PasskeyProof } from "../../../domain/oidc/passkeys/passkeys.ts";
import type { OidcUserRow } from "../../../domain/oidc/model.ts";
import { OAuthError } from "../../../domain/oidc/oauth-error.ts";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import type { Logger } from "../../../observability/logger.ts";
import { cookieNames, readCookie } from "../../cookies.ts";
import { joinSentences, type Locale } from "../../i18n/locale.ts";
import { linkPageLanguage } from "../../i18n/page-language.ts";
import { contentSecurityPolicy, pageHeaders, withPageScripts } from "../../middleware/page-headers.ts";
import { html } from "../../pages/html.ts";
import { page, type PageLanguage } from "../../pages/layout.ts";
import { renderAccountSecurityPage, type PasskeyRefusal } from "../../pages/passkeys.ts";
import { requireFormCsrf } from "./form-csrf.ts";
import { retryTime } from "./sign-in-refusals.ts";

/** A passkey form: its CSRF token, the browser's answer (a few kB of JSON) and a name. */
export const passkeyForm = express.urlencoded({ extended: false, limit: 64 * 1024, parameterLimit: 10 });

/** The security page (passkeys) of the account pages. */
export const accountSecurityPath = "/account/security";

/** A page with a passkey form: the library's and the form's scripts from this origin, on top of the page's policy. */
export function allowPasskeyScripts(res: Response): void {
  res.set("Content-Security-Policy", withPageScripts(String(res.get("Content-Security-Policy") ?? contentSecurityPolicy)));
}

/** The browser's answer as the form carries it ("" without the script). */
export function ceremonyResponseOf(req: Request): string {
  const value = ((req.body ?? {}) as Record<string, unknown>).response;
  return typeof value === "string" ? value : "";
}

/** The credential id the answer names, to count attempts by at sign-in (nobody is known yet); never trusted beyond that. */
function credentialIdOf(text: string): string {
  try {
    const id = (JSON.parse(text) as { id?: unknown }).id;
    return typeof id === "string" ? id.slice(0, 256) : "";
  } catch {
    return "";
  }
}

/** What a passkey ceremony gave: the user and the proof, or a refusal with its status and words. */
export type PasskeyOutcome =
  | { ok: true; user: OidcUserRow; proof: PasskeyProof }
  | { ok: false; status: number; refusal: (lang: PageLanguage) => PasskeyRefusal; retryAfterSeconds?: number | undefined };

function refusalOf(code: PasskeyErrorCode, extra?: (lang: PageLanguage) => string): (lang: PageLanguage) => PasskeyRefusal {
  return (lang) => {
    const more = extra?.(lang) ?? "";
    return { code, message: joinSentences(lang.locale, lang.t.passkeys.refusals[code], more) };
  };
}

/** What proving a passkey uses of the provider. */
export type PasskeyProofServices = Pick<Oidc, "passkeys" | "signIn" | "users">;

/**
 * Sign-in and step-up with a passkey, through the throttle: `expected` (a
 * step-up) names the user the passkey must belong to. A counter that went
 * back is logged as a possible clone (ids only, no key material); a passkey
 * whose user is gone is refused.
 */
export async function provePasskey(
  oidc: PasskeyProofServices,
  logger: Logger,
  req: Request,
  binding: CeremonyBinding,
  expected?: OidcUserRow,
): Promise<PasskeyOutcome> {
  const text = ceremonyResponseOf(req);
  if (text === "") return { ok: false, status: 400, refusal: refusalOf("response_invalid") };
  const address = req.socket.remoteAddress ?? "unknown";
  const account = expected ? expected.login : credentialIdOf(text);
  const attempt = await oidc.signIn.withPasskey(account, address, () => oidc.passkeys.authenticate(binding, text, expected?.id));
  if (attempt.outcome === "refused") {
    return {
      ok: false,
      status: 429,
      retryAfterSeconds: attempt.retryAfterSeconds,
      refusal: (lang) => ({ code: "throttled", message: lang.t.passkeys.throttled(retryTime(lang, attempt.retryAfterSeconds)) }),
    };
  }
  if (attempt.outcome === "failed") {
    const error = attempt.error;
    if (error.code === "counter_went_back" && error.credential) {
      logger.warn({ event: "passkey_counter_went_back", userId: error.credential.userId, credentialId: error.credential.credentialId }, "a passkey's signature counter went back: possible cloned authenticator; the sign-in was refused");
    }
    const after = (lang: PageLanguage) =>
      attempt.retryAfterSeconds !== undefined ? lang.t.passkeys.throttled(retryTime(lang, attempt.retryAfterSeconds)) : attempt.attemptsLeft === 1 ? lang.t.passkeys.lastAttempt : "";
    return { ok: false, status: error.status, refusal: refusalOf(error.code, after), retryAfterSeconds: attempt.retryAfterSeconds };
  }
  const user = await oidc.users.find(attempt.value.userId);
  if (!user) return { ok: false, status: 401, refusal: refusalOf("user_unknown") };
  return { ok: true, user, proof: attempt.value };
}

/** What the security page uses of the provider. */
export type AccountSecurityServices = PasskeyProofServices & Pick<Oidc, "flow" | "issuer" | "policy" | "secretKey">;

/**
 * /account/security: the signed-in user's passkeys. Listing and removing
 * work without scripts; adding needs WebAuthn, and, for a user with a
 * stronger way than the password, a recent confirmation at the passkey's
 * level (levelToConfirmBeforeAdding), which a passkey already registered
 * can give on this page.
 */
export function registerAccountSecurity(router: Router, oidc: AccountSecurityServices, logger: Logger, defaultLocale: Locale, accountLoginPath: string): void {
  const cookies = cookieNames(oidc.issuer);
  const csrfSubject = (sessionId: string) => `passkeys:${sessionId}`;
  const pathFor = (lang: PageLanguage, suffix = "") => `${accountSecurityPath}${suffix}?ui_locales=${lang.locale}`;

  async function signedIn(req: Request, res: Response): Promise<{ sessionId: string; session: { acr: string; authTime: number }; user: OidcUserRow } | undefined> {
    const sessionId = readCookie(req, cookies.session);
    const session = await oidc.flow.session(sessionId);
    const user = session && (await oidc.users.find(session.userId));
    if (sessionId && session && user) return { sessionId, session, user };
    const lang = linkPageLanguage(req, defaultLocale);
    const t = lang.t.passkeys;
    res.status(401).type("html").send(
      page(lang, t.securityTitle, html`<h1>${t.securityTitle}</h1>
<div class="notice" role="status"><p>${t.signInFirst}</p></div>
<div class="actions"><a class="button primary" href="${accountLoginPath}?next=security&amp;ui_locales=${lang.locale}" id="sign-in">${t.signInLink}</a></div>`),
    );
    return undefined;
  }

  async function view(
    req: Request,
    res: Response,
    current: { sessionId: string; session: { acr: string; authTime: number }; user: OidcUserRow },
    status: number,
    extra: { notice?: string; refusal?: (lang: PageLanguage) => PasskeyRefusal; name?: string } = {},
  ): Promise<void> {
    const lang = linkPageLanguage(req, defaultLocale);
    const binding = { sessionId: current.sessionId };
    const csrf = csrfToken(oidc.secretKey, csrfSubject(current.sessionId));
    const passkeys = await oidc.passkeys.list(current.user.id);
    const confirmAt = levelToConfirmBeforeAdding(oidc.policy, current.session, await oidc.flow.enrolled(current.user), Date.now());
    const add =
      confirmAt === undefined
        ? { kind: "add" as const, action: pathFor(lang), csrfToken: csrf, options: await oidc.passkeys.registrationOptions(current.user, binding, passkeys) }
        : {
            kind: "confirm" as const,
            level: confirmAt,
            confirm:
              passkeys.length > 0
                ? { action: pathFor(lang, "/confirm"), csrfToken: csrf, options: await oidc.passkeys.authenticationOptions(binding, current.user.id, passkeys) }
                : undefined,
          };
    allowPasskeyScripts(res);
    res.status(status).type("html").send(
      renderAccountSecurityPage(lang, {
        userLogin: current.user.login,
        passkeys,
        csrfToken: csrf,
        removeAction: pathFor(lang, "/remove"),
        add,
        notice: extra.notice,
        refusal: extra.refusal?.(lang),
        name: extra.name,
        certificatesHref: `/account/jpki?ui_locales=${lang.locale}`,
      }),
    );
  }

  router.get(accountSecurityPath, pageHeaders, async (req, res) => {
    const current = await signedIn(req, res);
    if (current) await view(req, res, current, 200);
  });

  router.post(accountSecurityPath, pageHeaders, passkeyForm, async (req, res) => {
    const current = await signedIn(req, res);
    if (!current) return;
    requireFormCsrf(oidc.secretKey, csrfSubject(current.sessionId), req);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const name = typeof body.name === "string" ? body.name : "";
    const lang = linkPageLanguage(req, defaultLocale);
    if (levelToConfirmBeforeAdding(oidc.policy, current.session, await oidc.flow.enrolled(current.user), Date.now()) !== undefined) {
      return view(req, res, current, 403, { name });
    }
    const text = ceremonyResponseOf(req);
    // Without the script there is no ceremony to check: the page says what adding needs.
    if (text === "") return view(req, res, current, 400, { refusal: (l) => ({ code: "script_needed", message: l.t.passkeys.needsScript }), name });
    try {
      const added = await oidc.passkeys.register({ sessionId: current.sessionId }, current.user, text, name);
      await view(req, res, current, 200, { notice: lang.t.passkeys.added(added.name) });
    } catch (error) {
      if (!(error instanceof PasskeyError)) throw error;
      await view(req, res, current, error.status, { refusal: refusalOf(error.code), name });
    }
  });

  router.post(`${accountSecurityPath}/confirm`, pageHeaders, passkeyForm, async (req, res) => {
    const current = await signedIn(req, res);
    if (!current) return;
    requireFormCsrf(oidc.secretKey, csrfSubject(current.sessionId), req);
    const outcome = await provePasskey(oidc, logger, req, { sessionId: current.sessionId }, current.user);
    if (!outcome.ok) {
      if (outcome.retryAfterSeconds !== undefined) res.set("Retry-After", String(outcome.retryAfterSeconds));
      return view(req, res, current, outcome.status, { refusal: outcome.refusal });
    }
    await oidc.flow.renewSession(current.sessionId, outcome.proof.amr);
    const renewed = await oidc.flow.session(current.sessionId);
    await view(req, res, { ...current, session: renewed ?? current.session }, 200);
  });

  // A passkey of another user, or none, answers like an unknown id: 404 and nothing removed.
  router.post(`${accountSecurityPath}/remove`, pageHeaders, passkeyForm, async (req, res) => {
    const current = await signedIn(req, res);
    if (!current) return;
    requireFormCsrf(oidc.secretKey, csrfSubject(current.sessionId), req);
    const credentialId = ((req.body ?? {}) as Record<string, unknown>).credential_id;
    if (typeof credentialId !== "string" || !(await oidc.passkeys.remove(current.user.id, credentialId))) {
      throw new OAuthError("invalid_request", "no such passkey", { status: 404 });
    }
    await view(req, res, current, 200, { notice: linkPageLanguage(req, defaultLocale).t.passkeys.removed });
  });
}
