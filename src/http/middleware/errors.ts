import type { ErrorRequestHandler, Request, RequestHandler, Response } from "express";
import { errorRedirect } from "../../domain/oidc/flow/redirects.ts";
import { InteractionEnded } from "../../domain/oidc/flow/interaction-ended.ts";
import { OAuthError } from "../../domain/oidc/oauth-error.ts";
import { isUnavailable } from "../../storage/database.ts";
import type { Logger } from "../../observability/logger.ts";
import { renderAuthorizationErrorPage, renderErrorPage } from "../pages/error-page.ts";
import { renderInteractionEndedPage } from "../pages/interaction-ended.ts";
import type { Locale } from "../i18n/locale.ts";
import type { LocaleSources } from "../i18n/choose-locale.ts";
import type { LanguageSwitch } from "../pages/layout.ts";
import { pageLanguage, requestUiLocales } from "../i18n/page-language.ts";
import { rememberedLocale } from "../i18n/remembered-locale.ts";

/** Browsers get a page, everything else (APIs, curl) gets JSON; an empty description is left out of the JSON. */
function send(req: Request, res: Response, status: number, error: string, description: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.status(status).set("Cache-Control", "no-store");
  const wantsPage = !req.path.startsWith("/api/") && req.accepts(["json", "html"]) === "html";
  if (wantsPage) {
    res.type("html").send(renderErrorPage(errorPageLanguage(req, res), { status, error, description, requestId: requestIdOf(res) }));
  } else {
    res.json(description ? { error, error_description: description } : { error });
  }
}

/** The id the request handler gave this request (X-Request-Id), shown on error pages for support. */
function requestIdOf(res: Response): string | undefined {
  const id = res.getHeader("X-Request-Id");
  return typeof id === "string" ? id : undefined;
}

/**
 * An error page's language: the one the interaction's pages spoke when a page
 * route left it (res.locals.localeSources), else ui_locales in the request,
 * the language of the last interaction, Accept-Language, and the configured default.
 */
function errorPageLanguage(req: Request, res: Response) {
  const remembered = rememberedLocale(req);
  const sources = (res.locals.localeSources as LocaleSources | undefined) ?? {
    uiLocales: [...(requestUiLocales(req) ?? []), ...(remembered ? [remembered] : [])],
  };
  return pageLanguage(req, (res.locals.defaultLocale as Locale | undefined) ?? "en", sources, errorPageSwitch(req));
}

/**
 * Links to the same page in another language, only where the address holds
 * nothing but an interaction id: an error page never repeats a request's
 * parameters (its redirect_uri may be the very thing refused).
 */
function errorPageSwitch(req: Request): LanguageSwitch | undefined {
  const names = Object.keys(req.query);
  if (names.some((name) => name !== "interaction" && name !== "ui_locales")) return undefined;
  const interaction = typeof req.query.interaction === "string" ? req.query.interaction : undefined;
  return {
    href: (locale) => `${req.path}?${new URLSearchParams({ ...(interaction !== undefined ? { interaction } : {}), ui_locales: locale }).toString()}`,
  };
}

/**
 * Marks the routes a person reaches in the browser from an application (the
 * authorization and end-session endpoints): an OAuth error that may not be
 * redirected is shown there as the authorization error page, whatever the
 * Accept header says.
 */
export const authorizationErrorPages: RequestHandler = (_req, res, next) => {
  res.locals.authorizationErrorPage = true;
  next();
};

/** An OAuth error: back to the client when it carries a checked redirect_uri, else a page or JSON with its challenge. */
function sendOAuthError(err: OAuthError, req: Request, res: Response, issuer: string, logger: Logger): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  if (err.redirect) {
    res.redirect(303, errorRedirect(err.redirect.redirectUri, issuer, err.error, err.description, err.redirect.state));
    return;
  }
  if (res.locals.authorizationErrorPage === true) {
    res.set(oauthErrorHeaders(err));
    res.status(err.status).set("Cache-Control", "no-store").type("html");
    res.send(renderAuthorizationErrorPage(errorPageLanguage(req, res), { error: err.error, description: err.description, requestId: requestIdOf(res) }));
    return;
  }
  sendAnswer(req, res, errorAnswer(err, logger, req.path));
}

/** An ended sign-in reached again: the page that offers to start again, in the interaction's language. */
function sendInteractionEnded(err: InteractionEnded, req: Request, res: Response): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  // The page's own switch (a link with ui_locales) wins over the interaction's language.
  const switched = requestUiLocales(req);
  res.locals.localeSources = switched ? { uiLocales: switched } : err.locales;
  res.status(400).set("Cache-Control", "no-store").type("html");
  res.send(renderInteractionEndedPage(errorPageLanguage(req, res), { why: err.why, clientName: err.clientName, returnTo: err.returnTo }));
}

/** What an error is answered with, whatever the page or JSON around it: the status, headers of its own, the error and its description. */
interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  error: string;
  description: string;
}

/**
 * How an error that does not redirect is answered, and logged: OAuth errors
 * with their status and challenge; client mistakes (body-parser and friends
 * mark them with a status and `expose`) explained; an unavailable database
 * as 503 with Retry-After; anything else logged and answered without
 * details.
 */
function errorAnswer(err: unknown, logger: Logger, path: string): ErrorAnswer {
  if (err instanceof OAuthError) {
    if (err.reason) logger.debug({ path, error: err.error, reason: err.reason }, "oauth error");
    return { status: err.status, headers: oauthErrorHeaders(err), error: err.error, description: err.description };
  }
  const e = err as { status?: number; expose?: boolean; type?: string; message?: string; limit?: number };
  if (e && typeof e.status === "number" && e.status >= 400 && e.status < 500) {
    if (e.type === "entity.too.large") {
      return { status: 413, headers: {}, error: "request_too_large", description: `the request body exceeds the limit of ${e.limit} bytes` };
    }
    return { status: e.status, headers: {}, error: "invalid_request", description: e.expose && e.message ? e.message : "the request is malformed" };
  }
  if (isUnavailable(err)) {
    logger.warn({ err, path }, "database unavailable");
    return { status: 503, headers: { "Retry-After": "5" }, error: "temporarily_unavailable", description: "the service is temporarily unavailable, retry later" };
  }
  logger.error({ err, path }, "request failed");
  return { status: 500, headers: {}, error: "server_error", description: "an unexpected error occurred" };
}

/** An OAuth error's own headers: its challenge, and any it carries (a DPoP nonce). */
function oauthErrorHeaders(err: OAuthError): Record<string, string> {
  return { ...(err.wwwAuthenticate ? { "WWW-Authenticate": err.wwwAuthenticate } : {}), ...err.headers };
}

function sendAnswer(req: Request, res: Response, answer: ErrorAnswer): void {
  if (!res.headersSent) res.set(answer.headers);
  send(req, res, answer.status, answer.error, answer.description);
}

/** What body-parser raises for a body over its limit; the size check before the parsers raises the same. */
export function requestTooLarge(limit: number): Error {
  return Object.assign(new Error("request entity too large"), { status: 413, expose: true, type: "entity.too.large", limit });
}

export function notFound(defaultLocale: Locale): RequestHandler {
  return (req, res) => {
    res.locals.defaultLocale = defaultLocale;
    send(req, res, 404, "not_found", `no route for ${req.method} ${req.path}`);
  };
}

/**
 * Every error of the Express app leaves here, the counterpart of the RPC
 * `errorBoundary`: OAuth errors are rendered as the client needs them; client
 * mistakes are explained; server faults are logged and answered without details.
 */
export function errorHandler(logger: Logger, issuer: string, defaultLocale: Locale): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    res.locals.defaultLocale = defaultLocale;
    if (err instanceof InteractionEnded) return sendInteractionEnded(err, req, res);
    if (err instanceof OAuthError) return sendOAuthError(err, req, res, issuer, logger);
    sendAnswer(req, res, errorAnswer(err, logger, req.path));
  };
}
