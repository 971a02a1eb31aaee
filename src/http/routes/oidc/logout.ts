import express, { type Request, type Response, type Router } from "express";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { confirmsLogout, logoutConfirmationToken, resolveLogoutRequest, signedOutRedirect, type LogoutRequest } from "../../../domain/oidc/logout.ts";
import type { RawParameters } from "../../../domain/oidc/parameters.ts";
import { clearCookie, cookieNames, readCookie } from "../../cookies.ts";
import { authorizationErrorPages } from "../../middleware/errors.ts";
import { pageHeaders, policyWithFormTargets } from "../../middleware/page-headers.ts";
import { renderLogoutPage, renderSignedOutPage } from "../../pages/logout.ts";
import type { PageLanguage } from "../../pages/layout.ts";
import { uiLocalesParameter } from "../../i18n/choose-locale.ts";
import type { Locale } from "../../i18n/locale.ts";
import { pageLanguage } from "../../i18n/page-language.ts";
import { rememberedLocale } from "../../i18n/remembered-locale.ts";

/**
 * The end-session endpoint (OpenID Connect RP-Initiated Logout 1.0), GET or
 * POST. A request from an application (id_token_hint, client_id,
 * post_logout_redirect_uri, state) is validated, then the user confirms with
 * a button: a link or an image alone never signs anyone out. The confirming
 * POST ends the session and returns the browser to the registered
 * post_logout_redirect_uri with state, or shows that the user is signed out.
 * The confirmation carries a CSRF token bound to the session
 * (logoutConfirmationToken), and SameSite=Lax keeps the session cookie off
 * cross-site POSTs, so a forged confirmation ends no session.
 */
export function registerLogoutRoute(router: Router, oidc: Pick<Oidc, "clients" | "flow" | "issuer" | "secretKey" | "sessionEndings" | "signingKeys" | "users">, defaultLocale: Locale): void {
  const cookies = cookieNames(oidc.issuer);
  const resolve = (raw: RawParameters) =>
    resolveLogoutRequest(raw, { issuer: oidc.issuer, keys: oidc.signingKeys, clients: oidc.clients });

  /**
   * The page speaks the request's ui_locales (RP-Initiated Logout §2), kept
   * through the confirmation; the switch links to the same request in another language.
   */
  function language(req: Request, raw: RawParameters, hidden: Record<string, string>): PageLanguage {
    const switchTo = (locale: Locale) => {
      const { csrf: _csrf, ...carried } = hidden;
      return `/auth/logout?${new URLSearchParams({ ...carried, ui_locales: locale }).toString()}`;
    };
    // Without ui_locales, the language of the user's last sign-in pages (remembered-locale.ts), then the browser's.
    const remembered = rememberedLocale(req);
    const uiLocales = [...(uiLocalesParameter(raw.ui_locales) ?? []), ...(remembered ? [remembered] : [])];
    return pageLanguage(req, defaultLocale, { uiLocales }, { href: switchTo });
  }

  async function handle(req: Request, res: Response, raw: RawParameters) {
    // An invalid request is never redirected (the target is what is being checked): the error middleware shows a page.
    const request = await resolve(raw);
    const carried: Record<string, string> = {};
    if (request.client) carried.client_id = request.client.clientId;
    if (request.postLogoutRedirectUri) carried.post_logout_redirect_uri = request.postLogoutRedirectUri;
    if (request.state) carried.state = request.state;
    if (typeof raw.ui_locales === "string" && raw.ui_locales !== "") carried.ui_locales = raw.ui_locales;
    const sessionId = readCookie(req, cookies.session);
    const confirming = req.method === "POST" && raw.confirm === "yes";
    if (!sessionId) {
      // Nobody is signed in here: nothing to confirm, and nothing to clear (clearing a cookie the request did not
      // carry would let a forged POST sign the browser out).
      finish(res, request, language(req, raw, carried));
      return;
    }
    if (confirming && confirmsLogout(oidc.secretKey, sessionId, raw.csrf)) {
      await oidc.sessionEndings.endSession(sessionId);
      clearCookie(res, cookies, cookies.session);
      finish(res, request, language(req, raw, carried));
      return;
    }
    const hidden: Record<string, string> = { ...carried, csrf: logoutConfirmationToken(oidc.secretKey, sessionId) };
    const lang = language(req, raw, hidden);
    // The confirmation ends in a redirect to the registered post_logout_redirect_uri: the page's policy names it.
    if (request.postLogoutRedirectUri) res.set("Content-Security-Policy", policyWithFormTargets([request.postLogoutRedirectUri]));
    const current = await oidc.flow.session(sessionId);
    const user = current ? await oidc.users.find(current.userId) : undefined;
    // A confirmation without this session's token did not come from our page: ask again.
    res
      .status(confirming ? 403 : 200)
      .type("html")
      .send(
        renderLogoutPage(lang, {
          ...(request.client ? { clientName: request.client.name } : {}),
          userLogin: user?.login,
          // Staying signed in goes nowhere the application did not register: the home page, in this language.
          stayHref: `/?ui_locales=${lang.locale}`,
          hidden,
          ...(confirming ? { error: lang.t.logout.expired } : {}),
        }),
      );
  }

  function finish(res: Response, request: LogoutRequest, lang: PageLanguage) {
    const target = signedOutRedirect(request);
    if (target === undefined) res.type("html").send(renderSignedOutPage(lang));
    else res.redirect(303, target);
  }

  router.get("/auth/logout", pageHeaders, authorizationErrorPages, (req, res) => handle(req, res, req.query as RawParameters));
  router.post("/auth/logout", pageHeaders, authorizationErrorPages, express.urlencoded({ extended: false, limit: 16 * 1024, parameterLimit: 20 }), (req, res) =>
    handle(req, res, (req.body ?? {}) as RawParameters),
  );
}
