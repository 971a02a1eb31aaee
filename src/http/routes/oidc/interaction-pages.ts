import express, { type Request, type Response, type Router } from "express";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import type { LoadedInteraction } from "../../../domain/oidc/flow/authorization-flow.ts";
import { csrfToken, csrfTokenMatches } from "../../../domain/oidc/flow/secrets.ts";
import { OAuthError } from "../../../domain/oidc/oauth-error.ts";
import type { AuthMethod } from "../../../domain/oidc/acr.ts";
import { cookieNames, readCookie, setCookie } from "../../cookies.ts";
import { pageHeaders } from "../../middleware/page-headers.ts";
import { renderConsentPage } from "../../pages/consent.ts";
import { renderLoginPage } from "../../pages/login.ts";
import { renderReauthPage } from "../../pages/reauth.ts";
import { sendStep } from "./steps.ts";
import { createJpkiPages, isJpkiMethod, jpkiForm } from "./jpki-pages.ts";

const acrLabels: Record<string, string> = { low: "Low", high: "High", very_high: "Very high" };
const reasonWords: Record<string, string> = {
  prompt_login: "the application asked you to sign in again",
  max_age: "your last sign-in is older than the application allows",
  acr: "the application needs a stronger sign-in than your current one",
};

/** Login, re-authentication and consent: server-rendered forms, CSRF-protected, usable without JavaScript. */
export function registerInteractionPages(router: Router, oidc: Oidc, mockMode: boolean): void {
  const cookies = cookieNames(oidc.issuer);
  const jpki = createJpkiPages(oidc, mockMode);
  jpki.register(router);
  const form = express.urlencoded({ extended: false, limit: 16 * 1024, parameterLimit: 20 });
  const interactionId = (req: Request) => (typeof req.query.interaction === "string" ? req.query.interaction : "");
  const action = (page: string, id: string) => `/auth/${page}?interaction=${encodeURIComponent(id)}`;

  const load = (req: Request): Promise<LoadedInteraction> => oidc.flow.load(interactionId(req), readCookie(req, cookies.browser));

  function requireCsrf(req: Request, interaction: LoadedInteraction): void {
    const body = req.body as Record<string, unknown> | undefined;
    if (!csrfTokenMatches(oidc.secretKey, interaction.id, body?.csrf)) {
      throw new OAuthError("invalid_request", "the form has expired or did not come from this site. Go back, reload the page and try again.", {
        status: 403,
      });
    }
  }

  const address = (req: Request) => req.socket.remoteAddress ?? "unknown";
  const browser = (req: Request) => readCookie(req, cookies.browser) ?? "";
  const session = (req: Request) => readCookie(req, cookies.session);

  const loginPage = (res: Response, i: LoadedInteraction, status: number, extra: { error?: string; loginHint?: string } = {}) =>
    res.status(status).type("html").send(
      renderLoginPage({
        action: action("login", i.id),
        csrfToken: csrfToken(oidc.secretKey, i.id),
        clientName: i.client.name,
        jpkiSignIn: action("login/jpki", i.id),
        ...extra,
      }),
    );

  router.get("/auth/login", pageHeaders, async (req, res) => {
    loginPage(res, await load(req), 200);
  });

  router.post("/auth/login", pageHeaders, form, async (req, res) => {
    const interaction = await load(req);
    requireCsrf(req, interaction);
    const body = req.body as Record<string, unknown>;
    const login = typeof body.login === "string" ? body.login.trim() : "";
    const password = typeof body.password === "string" ? body.password : "";
    if (!login || !password) return loginPage(res, interaction, 400, { error: "Enter your username and password.", loginHint: login });
    const attempt = await oidc.signIn.withPassword(login, password, address(req));
    if (attempt.outcome === "refused") {
      res.set("Retry-After", String(attempt.retryAfterSeconds));
      const minutes = Math.ceil(attempt.retryAfterSeconds / 60);
      return loginPage(res, interaction, 429, {
        error: `Too many failed sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`,
        loginHint: login,
      });
    }
    if (attempt.outcome === "failed") {
      return loginPage(res, interaction, 401, { error: "The username or password is not correct.", loginHint: login });
    }
    const user = attempt.value;
    const { sessionId, step } = await oidc.flow.login(interaction, user, browser(req));
    setCookie(res, cookies, cookies.session, sessionId, oidc.sessionLifetimeSeconds);
    sendStep(res, step);
  });

  async function reauthView(req: Request, res: Response, status: number, error?: string, invalidField?: "password" | "otp") {
    const interaction = await load(req);
    const requirement = await oidc.flow.reauthRequirement(interaction, session(req));
    if (!requirement || !interaction.user) {
      // Nothing to step up (the session changed or ended): let the flow decide again.
      return sendStep(res, await oidc.flow.advance(interaction.id, browser(req), session(req)));
    }
    if (requirement.methods.some(isJpkiMethod)) {
      return jpki.stepUpView(res, interaction, stepUpRequirement(requirement), status);
    }
    const hint = mockMode && requirement.methods.includes("otp") ? oidc.users.currentOtp(interaction.user) : undefined;
    res.status(status).type("html").send(
      renderReauthPage({
        action: action("reauth", interaction.id),
        csrfToken: csrfToken(oidc.secretKey, interaction.id),
        clientName: interaction.client.name,
        userLogin: interaction.user.login,
        requiredAcrLabel: acrLabels[requirement.acr] ?? requirement.acr,
        needsPassword: requirement.methods.includes("pwd"),
        needsOtp: requirement.methods.includes("otp"),
        reasons: requirement.reasons.map((r) => reasonWords[r] ?? r),
        ...(error ? { error } : {}),
        ...(invalidField ? { invalidField } : {}),
        ...(hint ? { mockOtpHint: hint } : {}),
      }),
    );
    return { interaction, requirement };
  }

  router.get("/auth/reauth", pageHeaders, async (req, res) => {
    await reauthView(req, res, 200);
  });

  const stepUpRequirement = (requirement: { acr: string; methods: readonly AuthMethod[]; reasons: string[] }) => ({
    acrLabel: acrLabels[requirement.acr] ?? requirement.acr,
    methods: requirement.methods,
    reasons: requirement.reasons.map((r) => reasonWords[r] ?? r),
  });

  // A JPKI signature carries a certificate: the larger form limit.
  router.post("/auth/reauth", pageHeaders, jpkiForm, async (req, res) => {
    const interaction = await load(req);
    requireCsrf(req, interaction);
    const sessionId = session(req);
    const requirement = await oidc.flow.reauthRequirement(interaction, sessionId);
    const user = interaction.user;
    if (!requirement || !user || !sessionId) return sendStep(res, await oidc.flow.advance(interaction.id, browser(req), sessionId));
    if (requirement.methods.some(isJpkiMethod)) return jpki.stepUpSubmit(req, res, interaction, stepUpRequirement(requirement), sessionId);
    const body = req.body as Record<string, unknown>;
    const secrets = {
      password: typeof body.password === "string" ? body.password : "",
      otp: typeof body.otp === "string" ? body.otp.trim() : "",
    };
    const attempt = await oidc.signIn.reauthenticate(user, requirement.methods, secrets, address(req));
    if (attempt.outcome === "refused") {
      res.set("Retry-After", String(attempt.retryAfterSeconds));
      return reauthView(req, res, 429, "Too many failed attempts. Try again later.");
    }
    if (attempt.outcome === "failed") {
      const message = attempt.reason === "password" ? "The password is not correct." : "The one-time code is not correct or was already used.";
      return reauthView(req, res, 401, message, attempt.reason);
    }
    const methods = attempt.value;
    sendStep(res, await oidc.flow.reauthenticated(interaction, sessionId, methods, browser(req)));
  });

  router.get("/auth/consent", pageHeaders, async (req, res) => {
    const interaction = await load(req);
    if (!interaction.user) return sendStep(res, await oidc.flow.advance(interaction.id, browser(req), session(req)));
    const request = interaction.state.request;
    const grantAction = await oidc.flow.consentAction(interaction);
    res.type("html").send(
      renderConsentPage({
        action: action("consent", interaction.id),
        csrfToken: csrfToken(oidc.secretKey, interaction.id),
        clientName: interaction.client.name,
        userLogin: interaction.user.login,
        scopes: request.scopes,
        authorizationDetails: request.authorizationDetails,
        ...(grantAction ? { grantAction } : {}),
      }),
    );
  });

  router.post("/auth/consent", pageHeaders, form, async (req, res) => {
    const interaction = await load(req);
    requireCsrf(req, interaction);
    const decision = (req.body as Record<string, unknown>).decision;
    if (decision !== "allow" && decision !== "deny") throw new OAuthError("invalid_request", "choose Allow or Deny");
    sendStep(res, await oidc.flow.consent(interaction, decision, browser(req), session(req)));
  });
}
