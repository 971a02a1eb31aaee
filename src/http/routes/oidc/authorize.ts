import type { IncomingMessage, ServerResponse } from "node:http";
import type { IRouter, Request, Response } from "express";
import { resolveAuthorizationRequest } from "../../../domain/oidc/authorization-endpoint.ts";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { randomToken } from "../../../domain/oidc/flow/secrets.ts";
import type { RawParameters } from "../../../domain/oidc/parameters.ts";
import { cookieNames, readCookie, setCookie, type CookieNames } from "../../cookies.ts";
import { authorizationErrorPages } from "../../middleware/errors.ts";
import { formBody } from "../../middleware/form-body.ts";
import { pageHeaders } from "../../middleware/page-headers.ts";
import { utf8Query } from "../../middleware/utf8-request.ts";
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
 * GET and POST /api/oidc/v1/authorize (OIDC Core 3.1.2.1 allows both): the
 * request resolved, the flow started, the browser sent on. An OAuthError
 * leaves through the error middleware: redirected to the client when it
 * carries the matched redirect_uri, else shown as the authorization error
 * page (authorizationErrorPages).
 */
export function registerAuthorizeRoute(router: IRouter, oidc: Pick<Oidc, "clients" | "flow" | "issuer" | "pushed" | "requestObjects">, limitBytes: number): void {
  const cookies = cookieNames(oidc.issuer);
  const authorize = async (req: Request, res: Response, raw: RawParameters): Promise<void> => {
    const resolved = await resolveAuthorizationRequest(raw, oidc.clients, oidc.pushed, oidc.requestObjects);
    const step = await oidc.flow.start(resolved.client, resolved.request, browserId(req, res, cookies), readCookie(req, cookies.session));
    sendStep(res, step);
  };
  router.get(authorizePath, pageHeaders, authorizationErrorPages, utf8Query, (req, res) => authorize(req, res, req.query as RawParameters));
  router.post(authorizePath, pageHeaders, authorizationErrorPages, formBody(limitBytes), (req, res) => authorize(req, res, (req.body ?? {}) as RawParameters));
}
