import express, { type Request, type Response, type Router } from "express";
import type { EndSessionStep } from "../../../domain/oidc/end-session.ts";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import type { RawParameters } from "../../../domain/oidc/parameters.ts";
import { clearCookie, cookieNames, readCookie } from "../../cookies.ts";
import { authorizationErrorPages } from "../../middleware/errors.ts";
import { pageHeaders, policyWithFormTargets } from "../../middleware/page-headers.ts";
import { utf8Query } from "../../middleware/utf8-request.ts";
import { renderLogoutPage, renderSignedOutPage } from "../../pages/logout.ts";
import type { PageLanguage } from "../../pages/layout.ts";
import { uiLocalesParameter } from "../../i18n/choose-locale.ts";
import type { Locale } from "../../i18n/locale.ts";
import { pageLanguage } from "../../i18n/page-language.ts";
import { rememberedLocale } from "../../i18n/remembered-locale.ts";

/**
 * The end-session endpoint (OpenID Connect RP-Initiated Logout 1.0), GET or
 * POST, over the domain's EndSession, which decides each step: the request
 * from an application (id_token_hint, client_id, post_logout_redirect_uri,
 * state) validated, the user's confirmation with a button, and the
 * confirming POST that ends the session and returns the browser to the
 * registered post_logout_redirect_uri with state, or shows that the user is
 * signed out. The confirmation carries a CSRF token bound to the session,
 * and SameSite=Lax keeps the session cookie off cross-site POSTs, so a
 * forged confirmation ends no session.
 */
export function registerLogoutRoute(router: Router, oidc: Pick<Oidc, "endSession" | "issuer">, defaultLocale: Locale): void {
  const cookies = cookieNames(oidc.issuer);

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
    // An invalid request throws, and is never redirected (the target is what is being checked): the error middleware shows a page.
    const step = await oidc.endSession.step(raw, readCookie(req, cookies.session), req.method === "POST" && raw.confirm === "yes");
    const { request } = step;
    const carried: Record<string, string> = {};
    if (request.client) carried.client_id = request.client.clientId;
    if (request.postLogoutRedirectUri) carried.post_logout_redirect_uri = request.postLogoutRedirectUri;
    if (request.state) carried.state = request.state;
    if (typeof raw.ui_locales === "string" && raw.ui_locales !== "") carried.ui_locales = raw.ui_locales;
    if (step.step === "signed_out") {
      // Only the cookie of the session just ended is cleared: clearing a cookie the request did not carry would let
      // a forged POST sign the browser out.
      if (step.sessionEnded) clearCookie(res, cookies, cookies.session);
      finish(res, step, language(req, raw, carried));
      return;
    }
    const hidden: Record<string, string> = { ...carried, csrf: step.csrfToken };
    const lang = language(req, raw, hidden);
    // The confirmation ends in a redirect to the registered post_logout_redirect_uri: the page's policy names it.
    if (request.postLogoutRedirectUri) res.set("Content-Security-Policy", policyWithFormTargets([request.postLogoutRedirectUri]));
    // A confirmation without this session's token did not come from our page: ask again.
    res
      .status(step.refused ? 403 : 200)
      .type("html")
      .send(
        renderLogoutPage(lang, {
          ...(request.client ? { clientName: request.client.name } : {}),
          userLogin: step.userLogin,
          // Staying signed in goes nowhere the application did not register: the home page, in this language.
          stayHref: `/?ui_locales=${lang.locale}`,
          hidden,
          ...(step.refused ? { error: lang.t.logout.expired } : {}),
        }),
      );
  }

  function finish(res: Response, step: Extract<EndSessionStep, { step: "signed_out" }>, lang: PageLanguage) {
    if (step.redirectTo === undefined) res.type("html").send(renderSignedOutPage(lang));
    else res.redirect(303, step.redirectTo);
  }

  router.get("/auth/logout", pageHeaders, authorizationErrorPages, utf8Query, (req, res) => handle(req, res, req.query as RawParameters));
  router.post("/auth/logout", pageHeaders, authorizationErrorPages, express.urlencoded({ extended: false, limit: 16 * 1024, parameterLimit: 20 }), (req, res) =>
    handle(req, res, (req.body ?? {}) as RawParameters),
  );
}
