import express, { type Request, type Response, type Router } from "express";
import { resolveAuthorizationRequest } from "../../../domain/oidc/authorization-endpoint.ts";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { randomToken } from "../../../domain/oidc/flow/secrets.ts";
import type { RawParameters } from "../../../domain/oidc/parameters.ts";
import { cookieNames, readCookie, setCookie, type CookieNames } from "../../cookies.ts";
import { authorizationErrorPages } from "../../middleware/errors.ts";
import { pageHeaders } from "../../middleware/page-headers.ts";
import { sendStep } from "./steps.ts";

const browserCookieMaxAge = 365 * 24 * 3600;

/** The browser's own id: interactions continue only in the browser that started them. */
export function browserId(req: Request, res: Response, cookies: CookieNames): string {
  const existing = readCookie(req, cookies.browser);
  if (existing) return existing;
  const created = randomToken();
  setCookie(res, cookies, cookies.browser, created, browserCookieMaxAge);
  return created;
}

/** GET and POST /api/oidc/v1/authorize (OIDC Core 3.1.2.1 allows both). */
export function registerAuthorizeRoute(router: Router, oidc: Oidc, limitBytes: number): void {
  const cookies = cookieNames(oidc.issuer);
  const handle = async (req: Request, res: Response, raw: RawParameters) => {
    // An OAuthError leaves through the error middleware: redirected when it carries the matched redirect_uri, else a page.
    const resolved = await resolveAuthorizationRequest(raw, oidc.clients, oidc.pushed);
    const step = await oidc.flow.start(resolved.client, resolved.request, browserId(req, res, cookies), readCookie(req, cookies.session));
    sendStep(res, step);
  };
  router.get("/api/oidc/v1/authorize", pageHeaders, authorizationErrorPages, (req, res) => handle(req, res, req.query as RawParameters));
  router.post(
    "/api/oidc/v1/authorize",
    pageHeaders,
    authorizationErrorPages,
    express.urlencoded({ extended: false, limit: limitBytes, parameterLimit: 100 }),
    (req, res) => handle(req, res, (req.body ?? {}) as RawParameters),
  );
}
