import express, { type Request, type Response, type Router } from "express";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import type { LoadedInteraction } from "../../../domain/oidc/flow/authorization-flow.ts";
import { csrfToken } from "../../../domain/oidc/flow/secrets.ts";
import { lookupTag } from "../../../domain/oidc/locales.ts";
import { OAuthError } from "../../../domain/oidc/oauth-error.ts";
import { cookieNames, readCookie, setCookie } from "../../cookies.ts";
import { formatsFor } from "../../i18n/format.ts";
import { locales, type Locale } from "../../i18n/locale.ts";
import { linkPageLanguage, pageLanguage } from "../../i18n/page-language.ts";
import { pageHeaders, policyWithFormTargets } from "../../middleware/page-headers.ts";
import { consentFormId, renderConsentPage } from "../../pages/consent.ts";
import { switchLocaleField, type PageLanguage } from "../../pages/layout.ts";
import { loginFormId, renderLoginPage } from "../../pages/login.ts";
import { reauthFormId, renderReauthPage } from "../../pages/reauth.ts";
import { requireFormCsrf } from "./form-csrf.ts";
import { sendStep } from "./steps.ts";
import { createJpkiPages, isJpkiMethod, jpkiForm } from "./jpki-pages.ts";
import { registerUnreachablePage } from "./unreachable-page.ts";

/** Login, re-authentication and consent: server-rendered forms, CSRF-protected, usable without JavaScript. */
export function registerInteractionPages(router: Router, oidc: Oidc, mockMode: boolean, defaultLocale: Locale): void {
  const cookies = cookieNames(oidc.issuer);
  const jpki = createJpkiPages(oidc, mockMode, {
    load: (req, res) => load(req, res),
    ofInteraction: (req, res, interaction, formId) => language(req, res, interaction, formId),
    ofPage: (req) => linkPageLanguage(req, defaultLocale),
    switchLanguage: (interaction, requested) => switchLanguage(interaction, requested),
  });
  jpki.register(router);
  registerUnreachablePage(router, oidc, {
    load: (req, res) => load(req, res),
    ofInteraction: (req, res, interaction, formId) => language(req, res, interaction, formId),
    switchLanguage: (interaction, requested) => switchLanguage(interaction, requested),
  });
  const form = express.urlencoded({ extended: false, limit: 16 * 1024, parameterLimit: 20 });
  const interactionId = (req: Request) => (typeof req.query.interaction === "string" ? req.query.interaction : "");
  const action = (page: string, id: string) => `/auth/${page}?interaction=${encodeURIComponent(id)}`;

  /** The interaction, and its language left for an error page of this request (a refused CSRF token, say). */
  async function load(req: Request, res: Response): Promise<LoadedInteraction> {
    const interaction = await oidc.flow.load(interactionId(req), readCookie(req, cookies.browser));
    res.locals.localeSources = localeSources(interaction);
    // Every form of the interaction's pages may end in a redirect to the client: its page policy names it.
    res.set("Content-Security-Policy", policyWithFormTargets([interaction.state.request.redirectUri]));
    return interaction;
  }

  const localeSources = (interaction: LoadedInteraction) => ({ chosen: interaction.state.locale, uiLocales: interaction.state.request.uiLocales });

  const requireCsrf = (req: Request, interaction: LoadedInteraction) => requireFormCsrf(oidc.secretKey, interaction.id, req);

  /**
   * The interaction's language: the user's switch, then the request's
   * ui_locales (kept with the interaction, so also after PAR), then the
   * browser's. Left in res.locals for an error page of this request.
   */
  function language(req: Request, res: Response, interaction: LoadedInteraction, formId: string): PageLanguage {
    const sources = localeSources(interaction);
    res.locals.localeSources = sources;
    return pageLanguage(req, defaultLocale, sources, { kind: "form", formId });
  }

  /**
   * The language switch: its buttons submit the page's form with switch_locale
   * (a GET with ui_locales does the same), which is remembered for the rest of
   * the interaction. True when the request was a switch, so it attempts nothing else.
   */
  async function switchLanguage(interaction: LoadedInteraction, requested: unknown): Promise<boolean> {
    if (typeof requested !== "string" || requested === "") return false;
    const locale = requested.split(" ").map((tag) => lookupTag(tag, locales)).find((found) => found !== undefined);
    if (locale !== undefined && locale !== interaction.state.locale) await oidc.flow.chooseLocale(interaction, locale);
    return true;
  }

  const address = (req: Request) => req.socket.remoteAddress ?? "unknown";
  /** When a paused sign-in may be tried again, in the page's language and time zone: "21:21 日本標準時". */
  const retryTime = (lang: PageLanguage, seconds: number) => {
    const formats = formatsFor(lang.locale, lang.timeZone);
    const at = Date.now() + seconds * 1000;
    // A time alone is clear within half a day; a longer window (a setting) names the date too.
    return seconds <= 12 * 3600 ? formats.time(at) : formats.dateTime(at);
  };
  /** A failed attempt's words: what was wrong, then the pause it started, or the warning that one attempt is left. */
  const failure = (
    lang: PageLanguage,
    wrong: string,
    attempt: { attemptsLeft: number; retryAfterSeconds?: number },
    words: { throttled: (until: string) => string; lastAttempt: string },
  ) => {
    const after = attempt.retryAfterSeconds !== undefined ? words.throttled(retryTime(lang, attempt.retryAfterSeconds)) : attempt.attemptsLeft === 1 ? words.lastAttempt : "";
    return after ? `${wrong} ${after}` : wrong;
  };
  const browser = (req: Request) => readCookie(req, cookies.browser) ?? "";
  const session = (req: Request) => readCookie(req, cookies.session);
  const bodyOf = (req: Request) => (req.body ?? {}) as Record<string, unknown>;

  const loginPage = (req: Request, res: Response, i: LoadedInteraction, status: number, extra: (lang: PageLanguage) => { error?: string; loginHint?: string } = () => ({})) => {
    const lang = language(req, res, i, loginFormId);
    res.status(status).type("html").send(
      renderLoginPage(lang, {
        action: action("login", i.id),
        csrfToken: csrfToken(oidc.secretKey, i.id),
        clientName: i.client.name,
        jpkiSignIn: action("login/jpki", i.id),
        ...extra(lang),
      }),
    );
  };

  router.get("/auth/login", pageHeaders, async (req, res) => {
    const interaction = await load(req, res);
    await switchLanguage(interaction, req.query.ui_locales);
    loginPage(req, res, interaction, 200);
  });

  router.post("/auth/login", pageHeaders, form, async (req, res) => {
    const interaction = await load(req, res);
    requireCsrf(req, interaction);
    const body = bodyOf(req);
    const login = typeof body.login === "string" ? body.login.trim() : "";
    // The typed name comes back with the page in the other language; the password never does.
    if (await switchLanguage(interaction, body[switchLocaleField])) return loginPage(req, res, interaction, 200, () => ({ loginHint: login }));
    const password = typeof body.password === "string" ? body.password : "";
    if (!login || !password) return loginPage(req, res, interaction, 400, ({ t }) => ({ error: t.login.missingFields, loginHint: login }));
    const attempt = await oidc.signIn.withPassword(login, password, address(req));
    if (attempt.outcome === "refused") {
      res.set("Retry-After", String(attempt.retryAfterSeconds));
      return loginPage(req, res, interaction, 429, (lang) => ({ error: lang.t.login.throttled(retryTime(lang, attempt.retryAfterSeconds)), loginHint: login }));
    }
    if (attempt.outcome === "failed") {
      return loginPage(req, res, interaction, 401, (lang) => ({ error: failure(lang, lang.t.login.wrongCredentials, attempt, lang.t.login), loginHint: login }));
    }
    const user = attempt.value;
    const { sessionId, step } = await oidc.flow.login(interaction, user, browser(req));
    setCookie(res, cookies, cookies.session, sessionId, oidc.sessionLifetimeSeconds);
    sendStep(req, res, step);
  });

  type ReauthError = { message: (lang: PageLanguage) => string; field?: "password" | "otp" };

  async function reauthView(req: Request, res: Response, interaction: LoadedInteraction, status: number, error?: ReauthError) {
    const requirement = await oidc.flow.reauthRequirement(interaction, session(req));
    if (!requirement || !interaction.user) {
      // Nothing to step up (the session changed or ended): let the flow decide again.
      return sendStep(req, res, await oidc.flow.advance(interaction.id, browser(req), session(req)));
    }
    if (requirement.methods.some(isJpkiMethod)) return jpki.stepUpView(req, res, interaction, requirement, status);
    const lang = language(req, res, interaction, reauthFormId);
    const hint = mockMode && requirement.methods.includes("otp") ? oidc.users.currentOtp(interaction.user) : undefined;
    res.status(status).type("html").send(
      renderReauthPage(lang, {
        action: action("reauth", interaction.id),
        csrfToken: csrfToken(oidc.secretKey, interaction.id),
        clientName: interaction.client.name,
        userLogin: interaction.user.login,
        requiredAcr: requirement.acr,
        needsPassword: requirement.methods.includes("pwd"),
        needsOtp: requirement.methods.includes("otp"),
        reasons: requirement.reasons,
        lastAuthTime: requirement.authTime,
        ...(error ? { error: error.message(lang) } : {}),
        ...(error?.field ? { invalidField: error.field } : {}),
        ...(hint ? { mockOtpHint: hint } : {}),
      }),
    );
  }

  router.get("/auth/reauth", pageHeaders, async (req, res) => {
    const interaction = await load(req, res);
    await switchLanguage(interaction, req.query.ui_locales);
    await reauthView(req, res, interaction, 200);
  });

  // A JPKI signature carries a certificate: the larger form limit.
  router.post("/auth/reauth", pageHeaders, jpkiForm, async (req, res) => {
    const interaction = await load(req, res);
    requireCsrf(req, interaction);
    const body = bodyOf(req);
    if (await switchLanguage(interaction, body[switchLocaleField])) return reauthView(req, res, interaction, 200);
    const sessionId = session(req);
    const requirement = await oidc.flow.reauthRequirement(interaction, sessionId);
    const user = interaction.user;
    if (!requirement || !user || !sessionId) return sendStep(req, res, await oidc.flow.advance(interaction.id, browser(req), sessionId));
    if (requirement.methods.some(isJpkiMethod)) return jpki.stepUpSubmit(req, res, interaction, requirement, sessionId);
    const secrets = {
      password: typeof body.password === "string" ? body.password : "",
      otp: typeof body.otp === "string" ? body.otp.trim() : "",
    };
    const attempt = await oidc.signIn.reauthenticate(user, requirement.methods, secrets, address(req));
    if (attempt.outcome === "refused") {
      res.set("Retry-After", String(attempt.retryAfterSeconds));
      return reauthView(req, res, interaction, 429, { message: (lang) => lang.t.reauth.throttled(retryTime(lang, attempt.retryAfterSeconds)) });
    }
    if (attempt.outcome === "failed") {
      const field = attempt.reason;
      return reauthView(req, res, interaction, 401, {
        message: (lang) => failure(lang, field === "password" ? lang.t.reauth.wrongPassword : lang.t.reauth.wrongOtp, attempt, lang.t.reauth),
        field,
      });
    }
    const methods = attempt.value;
    sendStep(req, res, await oidc.flow.reauthenticated(interaction, sessionId, methods, browser(req)));
  });

  async function consentView(req: Request, res: Response, interaction: LoadedInteraction) {
    if (!interaction.user) return sendStep(req, res, await oidc.flow.advance(interaction.id, browser(req), session(req)));
    const request = interaction.state.request;
    const grantAction = await oidc.flow.consentAction(interaction);
    res.type("html").send(
      renderConsentPage(language(req, res, interaction, consentFormId), {
        action: action("consent", interaction.id),
        csrfToken: csrfToken(oidc.secretKey, interaction.id),
        clientName: interaction.client.name,
        userLogin: interaction.user.login,
        scopes: request.scopes,
        authorizationDetails: request.authorizationDetails,
        ...(grantAction ? { grantAction } : {}),
      }),
    );
  }

  router.get("/auth/consent", pageHeaders, async (req, res) => {
    const interaction = await load(req, res);
    await switchLanguage(interaction, req.query.ui_locales);
    await consentView(req, res, interaction);
  });

  router.post("/auth/consent", pageHeaders, form, async (req, res) => {
    const interaction = await load(req, res);
    requireCsrf(req, interaction);
    const body = bodyOf(req);
    if (await switchLanguage(interaction, body[switchLocaleField])) return consentView(req, res, interaction);
    const decision = body.decision;
    if (decision !== "allow" && decision !== "deny") throw new OAuthError("invalid_request", "choose Allow or Deny");
    sendStep(req, res, await oidc.flow.consent(interaction, decision, browser(req), session(req)));
  });
}
