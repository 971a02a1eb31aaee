import express, { type Request, type Response, type Router } from "express";
import { csrfToken, sha256Hex } from "../../../domain/oidc/flow/secrets.ts";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { cookieNames, readCookie, setCookie } from "../../cookies.ts";
import type { Locale } from "../../i18n/locale.ts";
import { linkPageLanguage } from "../../i18n/page-language.ts";
import { pageHeaders } from "../../middleware/page-headers.ts";
import type { PageLanguage } from "../../pages/layout.ts";
import { renderLoginPage } from "../../pages/login.ts";
import { browserId } from "./authorize.ts";
import { requireFormCsrf } from "./form-csrf.ts";
import { retryTime, wrongPasswordMessage } from "./sign-in-refusals.ts";
import type { Logger } from "../../../observability/logger.ts";
import { passkeySignInSection, type PasskeyRefusal } from "../../pages/passkeys.ts";
import { accountSecurityPath, allowPasskeyScripts, passkeyForm, provePasskey, type PasskeyProofServices } from "./passkey-pages.ts";

/** Where the account pages' sign-in starts, and where it returns (the only account page). */
export const accountLoginPath = "/account/login";
const accountHome = "/account/jpki";

/** The account pages a sign-in may return to (`next`), by name: never a URL from the request. */
const accountPages: Record<string, string> = { jpki: accountHome, security: accountSecurityPath };

/** What the account pages' sign-in uses of the provider. */
export type AccountLoginServices = PasskeyProofServices & Pick<Oidc, "flow" | "issuer" | "secretKey" | "sessionLifetimeSeconds">;

/**
 * Sign-in for the account pages (/account/jpki), which belong to no
 * application: the same form and the same throttle as an authorization
 * request's login page, ending in a session and the account page instead of a
 * redirect to an application. Its CSRF token is bound to the browser's id.
 */
export function registerAccountLogin(router: Router, oidc: AccountLoginServices, defaultLocale: Locale, logger: Logger): void {
  const cookies = cookieNames(oidc.issuer);
  const form = express.urlencoded({ extended: false, limit: 16 * 1024, parameterLimit: 20 });
  const subject = (browser: string) => `account-login:${sha256Hex(browser)}`;
  const nextOf = (req: Request) => (typeof req.query.next === "string" && Object.hasOwn(accountPages, req.query.next) ? req.query.next : undefined);
  const back = (req: Request, lang: PageLanguage) => `${accountPages[nextOf(req) ?? "jpki"]}?ui_locales=${lang.locale}`;
  const here = (req: Request, lang: PageLanguage, path = accountLoginPath) => `${path}?${nextOf(req) ? `next=${nextOf(req)}&` : ""}ui_locales=${lang.locale}`;

  async function show(req: Request, res: Response, lang: PageLanguage, status: number, extra: { error?: string; loginHint?: string; passkeyRefusal?: PasskeyRefusal } = {}) {
    const browser = browserId(req, res, cookies);
    const csrf = csrfToken(oidc.secretKey, subject(browser));
    const { passkeyRefusal, ...rest } = extra;
    const passkey = passkeySignInSection(lang, {
      action: here(req, lang, `${accountLoginPath}/passkey`),
      csrfToken: csrf,
      options: await oidc.passkeys.authenticationOptions({ browserId: browser }),
      refusal: passkeyRefusal,
    });
    allowPasskeyScripts(res);
    res.status(status).type("html").send(
      renderLoginPage(lang, {
        action: here(req, lang),
        csrfToken: csrf,
        passkey,
        ...rest,
      }),
    );
  }

  router.get(accountLoginPath, pageHeaders, async (req, res) => {
    const lang = linkPageLanguage(req, defaultLocale);
    if (await oidc.flow.session(readCookie(req, cookies.session))) return res.redirect(303, back(req, lang));
    await show(req, res, lang, 200);
  });

  router.post(`${accountLoginPath}/passkey`, pageHeaders, passkeyForm, async (req, res) => {
    const lang = linkPageLanguage(req, defaultLocale);
    const browser = readCookie(req, cookies.browser) ?? "";
    requireFormCsrf(oidc.secretKey, subject(browser), req);
    const outcome = await provePasskey(oidc, logger, req, { browserId: browser });
    if (!outcome.ok) {
      if (outcome.retryAfterSeconds !== undefined) res.set("Retry-After", String(outcome.retryAfterSeconds));
      return show(req, res, lang, outcome.status, { passkeyRefusal: outcome.refusal(lang) });
    }
    const sessionId = await oidc.flow.startSession(outcome.user, outcome.proof.amr);
    setCookie(res, cookies, cookies.session, sessionId, oidc.sessionLifetimeSeconds);
    res.redirect(303, back(req, lang));
  });

  router.post(accountLoginPath, pageHeaders, form, async (req, res) => {
    const lang = linkPageLanguage(req, defaultLocale);
    requireFormCsrf(oidc.secretKey, subject(readCookie(req, cookies.browser) ?? ""), req);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const login = typeof body.login === "string" ? body.login.trim() : "";
    const password = typeof body.password === "string" ? body.password : "";
    if (!login || !password) return show(req, res, lang, 400, { error: lang.t.login.missingFields, loginHint: login });
    const attempt = await oidc.signIn.withPassword(login, password, req.socket.remoteAddress ?? "unknown");
    if (attempt.outcome === "refused") {
      res.set("Retry-After", String(attempt.retryAfterSeconds));
      return show(req, res, lang, 429, { error: lang.t.login.throttled(retryTime(lang, attempt.retryAfterSeconds)), loginHint: login });
    }
    if (attempt.outcome === "failed") return show(req, res, lang, 401, { error: wrongPasswordMessage(lang, attempt), loginHint: login });
    const sessionId = await oidc.flow.startSession(attempt.value);
    setCookie(res, cookies, cookies.session, sessionId, oidc.sessionLifetimeSeconds);
    res.redirect(303, back(req, lang));
  });
}
