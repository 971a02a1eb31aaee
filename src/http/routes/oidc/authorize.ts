import type { IncomingMessage, ServerResponse } from "node:http";
import express, { type Router } from "express";
import { resolveAuthorizationRequest } from "../../../domain/oidc/authorization-endpoint.ts";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { randomToken } from "../../../domain/oidc/flow/secrets.ts";
import type { RawParameters } from "../../../domain/oidc/parameters.ts";
import { cookieNames, readCookie, setCookie, type CookieNames } from "../../cookies.ts";
import { authorizationErrorPages } from "../../middleware/errors.ts";
import { pageHeaders } from "../../middleware/page-headers.ts";
import { sendStep } from "./steps.ts";

export const authorizePath = "/api/oidc/v1/authorize";
const browserCookieMaxAge = 365 * 24 * 3600;

/** The browser's own id: interactions continue only in the browser that started them. */
export function browserId(req: IncomingMessage, res: ServerResponse, cookies: CookieNames): string {
  const existing = readCookie(req, cookies.browser);
  if (existing) return existing;
  const created = randomToken();
  setCookie(res, cookies, cookies.browser, created, browserCookieMaxAge);
  return created;
}

/**
 * The authorization endpoint's work on a request whose parameters are read:
 * the request resolved, the flow started, the browser sent on. An OAuthError
 * is thrown for the caller to answer (redirected when it carries the matched
 * redirect_uri, else a page): the Express route's error middleware does.
 */
export function authorize(oidc: Oidc): (req: IncomingMessage, res: ServerResponse, raw: RawParameters) => Promise<void> {
  const cookies = cookieNames(oidc.issuer);
  return async (req, res, raw) => {
    const resolved = await resolveAuthorizationRequest(raw, oidc.clients, oidc.pushed);
    const step = await oidc.flow.start(resolved.client, resolved.request, browserId(req, res, cookies), readCookie(req, cookies.session));
    sendStep(req, res, step);
  };
}

const earlierFailure = Symbol("authorize failure");
/** A request that may carry the failure it met outside Express. */
type MaybeFailed = IncomingMessage & { [earlierFailure]?: { error: unknown } };

/**
 * Hands a request that failed outside Express (src/http/lean-authorize.ts)
 * to the Express route, which answers its error as it answers its own.
 */
export function markFailed(req: IncomingMessage, error: unknown): void {
  (req as MaybeFailed)[earlierFailure] = { error };
}

/** GET and POST /api/oidc/v1/authorize (OIDC Core 3.1.2.1 allows both). */
export function registerAuthorizeRoute(router: Router, oidc: Oidc, limitBytes: number): void {
  const handle = authorize(oidc);
  router.get(authorizePath, pageHeaders, authorizationErrorPages, (req, res) => {
    const failed = (req as MaybeFailed)[earlierFailure];
    if (failed) throw failed.error;
    return handle(req, res, req.query as RawParameters);
  });
  router.post(
    authorizePath,
    pageHeaders,
    authorizationErrorPages,
    express.urlencoded({ extended: false, limit: limitBytes, parameterLimit: 100 }),
    (req, res) => handle(req, res, (req.body ?? {}) as RawParameters),
  );
}
