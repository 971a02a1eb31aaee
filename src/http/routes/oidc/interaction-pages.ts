import express, { type Request, type Response, type Router } from "express";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import type { LoadedInteraction } from "../../../domain/oidc/flow/authorization-flow.ts";
import { csrfToken } from "../../../domain/oidc/flow/secrets.ts";
import { lookupTag } from "../../../domain/oidc/locales.ts";
import { OAuthError } from "../../../domain/oidc/oauth-error.ts";
import { cookieNames, readCookie, setCookie } from "../../cookies.ts";
import { rememberLocale } from "../../i18n/remembered-locale.ts";
import { locales, type Locale } from "../../i18n/locale.ts";
import { linkPageLanguage, pageLanguage } from "../../i18n/page-language.ts";
import { pageHeaders, policyWithFormTargets } from "../../middleware/page-headers.ts";
import { renderConsentPage } from "../../pages/consent.ts";
import type { PageLanguage } from "../../pages/layout.ts";
import { renderLoginPage } from "../../pages/login.ts";
import { renderReauthPage } from "../../pages/reauth.ts";
import { requireFormCsrf } from "./form-csrf.ts";
import { failureMessage, retryTime, wrongPasswordMessage } from "./sign-in-refusals.ts";
import { sendStep } from "./steps.ts";
import { createJpkiPages, isJpkiMethod, jpkiForm, type JpkiPageServices } from "./jpki-pages.ts";
import { registerUnreachablePage } from "./unreachable-page.ts";
import type { Logger } from "../../../observability/logger.ts";
import { passkeySignInSection, passkeyStepUpSection, type PasskeyRefusal } from "../../pages/passkeys.ts";
import { allowPasskeyScripts, passkeyForm, provePasskey, type PasskeyProofServices } from "./passkey-pages.ts";
import type { PageHints } from "../../page-hints.ts";

/** What the interaction pages use of the provider: their own, and what the JPKI and passkey pages they include use. */
export type InteractionPageServices = JpkiPageServices & PasskeyProofServices & Pick<Oidc, "flow" | "issuer" | "secretKey" | "sessionLifetimeSeconds">;

/** Login, re-authentication and consent: server-rendered forms, CSRF-protected, usable without JavaScript. */
export function registerInteractionPages(router: Router, oidc: InteractionPageServices, hints: PageHints, defaultLocale: Locale, logger: Logger): void {
  const cookies = cookieNames(oidc.issuer);
  const jpki = createJpkiPages(oidc, hints, {
    load: (req, res) => load(req, res),
    ofInteraction: (req, res, interaction) => language(req, res, interaction),
    ofPage: (req) => linkPageLanguage(req, defaultLocale),
    switchLanguage: (interaction, requested) => switchLanguage(interaction, requested),
  });
  jpki.register(router);
  registerUnreachablePage(router, oidc, {
    load: (req, res) => load(req, res),
    ofInteraction: (req, res, interaction) => language(req, res, interaction),
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
   * browser's. Left in res.locals for an error page of this request, and in
   * the locale cookie for the pages after the interaction (the demo callback,
   * the account pages). The switch links to this page of the interaction in
   * another language.
   */
  function language(req: Request, res: Response, interaction: LoadedInteraction): PageLanguage {
    const sources = localeSources(interaction);
    res.locals.localeSources = sources;
    const switchTo = (locale: Locale) => `${req.path}?${new URLSearchParams({ interaction: interaction.id, ui_locales: locale }).toString()}`;
    const lang = pageLanguage(req, defaultLocale, sources, { href: switchTo });
    rememberLocale(req, res, cookies, lang.locale);
    return lang;
  }

  /**
   * The language switch: a GET with ui_locales (the switch's links), which is
   * remembered for the rest of the interaction.
   */
  async function switchLanguage(interaction: LoadedInteraction, requested: unknown): Promise<boolean> {
    if (typeof requested !== "string" || requested === "") return false;
    const locale = requested.split(" ").map((tag) => lookupTag(tag, locales)).find((found) => found !== undefined);
    if (locale !== undefined && locale !== interaction.state.locale) await oidc.flow.chooseLocale(interaction, locale);
    return true;
  }

  const address = (req: Request) => req.socket.remoteAddress ?? "unknown";
  const browser = (req: Request) => readCookie(req, cookies.browser) ?? "";
  const session = (req: Request) => readCookie(req, cookies.session);
  const bodyOf = (req: Request) => (req.body ?? {}) as Record<string, unknown>;

  type LoginExtra = { error?: string; loginHint?: string; passkeyRefusal?: PasskeyRefusal };
  const loginPage = async (req: Request, res: Response, i: LoadedInteraction, status: number, extra: (lang: PageLanguage) => LoginExtra = () => ({})) => {
    const lang = language(req, res, i);
    const { passkeyRefusal, ...rest } = extra(lang);
    const csrf = csrfToken(oidc.secretKey, i.id);
    // Every showing has a challenge of its own, bound to the interaction: the page's passkey form and its conditional request use it.
    const passkey = passkeySignInSection(lang, {
      action: action("login/passkey", i.id),
      csrfToken: csrf,
      options: await oidc.passkeys.authenticationOptions({ interactionId: i.id }),
      refusal: passkeyRefusal,
    });
    allowPasskeyScripts(res);
    res.status(status).type("html").send(
      renderLoginPage(lang, {
        action: action("login", i.id),
        cancelAction: action("cancel", i.id),
        csrfToken: csrf,
        clientName: i.client.name,
        jpkiSignIn: action("login/jpki", i.id),
        passkey,
        ...rest,
      }),
    );
  };

  router.get("/auth/login", pageHeaders, async (req, res) => {
    const interaction = await load(req, res);
    await switchLanguage(interaction, req.query.ui_locales);
    await loginPage(req, res, interaction, 200);
  });

  // Sign-in with a passkey: the credential says who signs in (no password).
  router.post("/auth/login/passkey", pageHeaders, passkeyForm, async (req, res) => {
    const interaction = await load(req, res);
    requireCsrf(req, interaction);
    const outcome = await provePasskey(oidc, logger, req, { interactionId: interaction.id });
    if (!outcome.ok) {
      if (outcome.retryAfterSeconds !== undefined) res.set("Retry-After", String(outcome.retryAfterSeconds));
      return loginPage(req, res, interaction, outcome.status, (lang) => ({ passkeyRefusal: outcome.refusal(lang) }));
    }
    const { sessionId, step } = await oidc.flow.login(interaction, outcome.user, browser(req), outcome.proof.amr);
    setCookie(res, cookies, cookies.session, sessionId, oidc.sessionLifetimeSeconds);
    sendStep(res, step);
  });

  router.post("/auth/login", pageHeaders, form, async (req, res) => {
    const interaction = await load(req, res);
    requireCsrf(req, interaction);
    const body = bodyOf(req);
    const login = typeof body.login === "string" ? body.login.trim() : "";
    const password = typeof body.password === "string" ? body.password : "";
    if (!login || !password) return loginPage(req, res, interaction, 400, ({ t }) => ({ error: t.login.missingFields, loginHint: login }));
    const attempt = await oidc.signIn.withPassword(login, password, address(req));
    if (attempt.outcome === "refused") {
      res.set("Retry-After", String(attempt.retryAfterSeconds));
      return loginPage(req, res, interaction, 429, (lang) => ({ error: lang.t.login.throttled(retryTime(lang, attempt.retryAfterSeconds)), loginHint: login }));
    }
    if (attempt.outcome === "failed") {
      return loginPage(req, res, interaction, 401, (lang) => ({ error: wrongPasswordMessage(lang, attempt), loginHint: login }));
    }
    const user = attempt.value;
    const { sessionId, step } = await oidc.flow.login(interaction, user, browser(req));
    setCookie(res, cookies, cookies.session, sessionId, oidc.sessionLifetimeSeconds);
    sendStep(res, step);
  });

  type ReauthError = { message: (lang: PageLanguage) => string; field?: "password" | "otp"; passkey?: (lang: PageLanguage) => PasskeyRefusal };

  async function reauthView(req: Request, res: Response, interaction: LoadedInteraction, status: number, error?: ReauthError) {
    const requirement = await oidc.flow.reauthRequirement(interaction, session(req));
    if (!requirement || !interaction.user) {
      // Nothing to step up (the session changed or ended): let the flow decide again.
      return sendStep(res, await oidc.flow.advance(interaction.id, browser(req), session(req)));
    }
    const card = requirement.methods.some(isJpkiMethod);
    // The card's page, unless a passkey reaches the level too: then the passkey first, and a link to the card.
    if (card && (!requirement.passkey || req.query.with === "card")) return jpki.stepUpView(req, res, interaction, requirement, status);
    const lang = language(req, res, interaction);
    const typed = card ? [] : requirement.methods;
    const passkey = requirement.passkey
      ? passkeyStepUpSection(lang, {
          action: action("reauth", interaction.id),
          csrfToken: csrfToken(oidc.secretKey, interaction.id),
          options: await oidc.passkeys.authenticationOptions({ interactionId: interaction.id }, interaction.user.id),
          only: !typed.includes("pwd") && !typed.includes("otp"),
          refusal: error?.passkey?.(lang),
        })
      : undefined;
    if (passkey) allowPasskeyScripts(res);
    const hint = requirement.methods.includes("otp") ? hints.oneTimeCode?.(interaction.user) : undefined;
    res.status(status).type("html").send(
      renderReauthPage(lang, {
        action: action("reauth", interaction.id),
        cancelAction: action("cancel", interaction.id),
        csrfToken: csrfToken(oidc.secretKey, interaction.id),
        clientName: interaction.client.name,
        userLogin: interaction.user.login,
        requiredAcr: requirement.acr,
        needsPassword: typed.includes("pwd"),
        needsOtp: typed.includes("otp"),
        passkey,
        cardInstead: card ? `${action("reauth", interaction.id)}&with=card` : undefined,
        reasons: requirement.reasons,
        lastAuthTime: requirement.authTime,
        ...(error && !error.passkey ? { error: error.message(lang) } : {}),
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
    const sessionId = session(req);
    const requirement = await oidc.flow.reauthRequirement(interaction, sessionId);
    const user = interaction.user;
    if (!requirement || !user || !sessionId) return sendStep(res, await oidc.flow.advance(interaction.id, browser(req), sessionId));
    if (body.method === "passkey" && requirement.passkey) {
      const outcome = await provePasskey(oidc, logger, req, { interactionId: interaction.id }, user);
      if (!outcome.ok) {
        if (outcome.retryAfterSeconds !== undefined) res.set("Retry-After", String(outcome.retryAfterSeconds));
        return reauthView(req, res, interaction, outcome.status, { message: () => "", passkey: outcome.refusal });
      }
      return sendStep(res, await oidc.flow.reauthenticated(interaction, sessionId, outcome.proof.amr, browser(req)));
    }
    if (requirement.methods.some(isJpkiMethod)) return jpki.stepUpSubmit(req, res, interaction, requirement, sessionId);
    // Only a passkey reaches the level: a form without the passkey's answer (no script) is told so.
    if (requirement.methods.length === 0) {
      return reauthView(req, res, interaction, 400, { message: () => "", passkey: (lang) => ({ code: "response_invalid", message: lang.t.passkeys.unsupported }) });
    }
    const secrets = {
      password: typeof body.password === "string" ? body.password : "",
      // A code copied as "123 456" is still the code.
      otp: typeof body.otp === "string" ? body.otp.replace(/\s+/gu, "") : "",
    };
    // Said in the page's language before anything is checked or counted (the form does not let the browser say it).
    if (requirement.methods.includes("pwd") && secrets.password === "") {
      return reauthView(req, res, interaction, 400, { message: ({ t }) => t.reauth.missingPassword, field: "password" });
    }
    if (requirement.methods.includes("otp") && !/^[0-9]{6}$/.test(secrets.otp)) {
      return reauthView(req, res, interaction, 400, { message: ({ t }) => t.reauth.otpFormat, field: "otp" });
    }
    const attempt = await oidc.signIn.reauthenticate(user, requirement.methods, secrets, address(req));
    if (attempt.outcome === "refused") {
      res.set("Retry-After", String(attempt.retryAfterSeconds));
      return reauthView(req, res, interaction, 429, { message: (lang) => lang.t.reauth.throttled(retryTime(lang, attempt.retryAfterSeconds)) });
    }
    if (attempt.outcome === "failed") {
      const field = attempt.reason;
      // The password was right: the page asks for the code alone now (the password is never echoed back).
      if (field === "otp" && requirement.methods.includes("pwd")) await oidc.flow.passwordVerified(interaction);
      return reauthView(req, res, interaction, 401, {
        message: (lang) => failureMessage(lang, field === "password" ? lang.t.reauth.wrongPassword : lang.t.reauth.wrongOtp, attempt, lang.t.reauth),
        field,
      });
    }
    const methods = [...requirement.carried, ...attempt.value];
    sendStep(res, await oidc.flow.reauthenticated(interaction, sessionId, methods, browser(req)));
  });

  async function consentView(req: Request, res: Response, interaction: LoadedInteraction) {
    if (!interaction.user) return sendStep(res, await oidc.flow.advance(interaction.id, browser(req), session(req)));
    const request = interaction.state.request;
    const grantAction = await oidc.flow.consentAction(interaction);
    res.type("html").send(
      renderConsentPage(language(req, res, interaction), {
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
    const decision = body.decision;
    if (decision !== "allow" && decision !== "deny") throw new OAuthError("invalid_request", "choose Allow or Deny");
    sendStep(res, await oidc.flow.consent(interaction, decision, browser(req), session(req)));
  });

  // 「キャンセル／アプリに戻る」 on every page of the interaction: access_denied to the application.
  router.post("/auth/cancel", pageHeaders, form, async (req, res) => {
    const interaction = await load(req, res);
    requireCsrf(req, interaction);
    sendStep(res, await oidc.flow.cancel(interaction));
  });
}
