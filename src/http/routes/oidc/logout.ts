import express, { type Request, type Response, type Router } from "express";
import type { Oidc } from "../../../domain/oidc/compose.ts";
import { resolveLogoutRequest, type LogoutRequest } from "../../../domain/oidc/logout.ts";
import { OAuthError } from "../../../domain/oidc/oauth-error.ts";
import type { RawParameters } from "../../../domain/oidc/parameters.ts";
import { clearCookie, cookieNames, readCookie } from "../../cookies.ts";
import { pageHeaders } from "../../middleware/page-headers.ts";
import { renderAuthorizationErrorPage } from "../../pages/error-page.ts";
import { renderLogoutPage, renderSignedOutPage } from "../../pages/logout.ts";

/**
 * The end-session endpoint (OpenID Connect RP-Initiated Logout 1.0), GET or
 * POST. A request from an application (id_token_hint, client_id,
 * post_logout_redirect_uri, state) is validated, then the user confirms with
 * a button: a link or an image alone never signs anyone out. The confirming
 * POST ends the session and returns the browser to the registered
 * post_logout_redirect_uri with state, or shows that the user is signed out.
 * SameSite=Lax keeps the session cookie off cross-site POSTs, so a forged
 * confirmation ends no session.
 */
export function registerLogoutRoute(router: Router, oidc: Oidc): void {
  const cookies = cookieNames(oidc.issuer);
  const resolve = (raw: RawParameters) =>
    resolveLogoutRequest(raw, { issuer: oidc.issuer, keys: oidc.signingKeys, findClient: (id) => oidc.clients.findClient(id) });

  async function handle(req: Request, res: Response, raw: RawParameters) {
    let request: LogoutRequest;
    try {
      request = await resolve(raw);
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      res.status(400).type("html").send(renderAuthorizationErrorPage({ error: error.error, description: error.description }));
      return;
    }
    const sessionId = readCookie(req, cookies.session);
    if (req.method === "POST" && raw.confirm === "yes") {
      // Only a request that carries the session may drop it: a cross-site form carries none (SameSite=Lax), and clearing
      // the cookie anyway would sign the user out of the browser by a forged POST.
      if (sessionId) {
        await oidc.flow.endSession(sessionId);
        clearCookie(res, cookies, cookies.session);
      }
      finish(res, request);
      return;
    }
    if (!sessionId) {
      // Nobody is signed in here: nothing to confirm.
      finish(res, request);
      return;
    }
    const hidden: Record<string, string> = {};
    if (request.client) hidden.client_id = request.client.clientId;
    if (request.postLogoutRedirectUri) hidden.post_logout_redirect_uri = request.postLogoutRedirectUri;
    if (request.state) hidden.state = request.state;
    res.type("html").send(renderLogoutPage({ ...(request.client ? { clientName: request.client.name } : {}), hidden }));
  }

  function finish(res: Response, request: LogoutRequest) {
    if (!request.postLogoutRedirectUri) {
      res.type("html").send(renderSignedOutPage());
      return;
    }
    const target = new URL(request.postLogoutRedirectUri);
    if (request.state) target.searchParams.append("state", request.state);
    res.redirect(303, target.toString());
  }

  router.get("/auth/logout", pageHeaders, (req, res) => handle(req, res, req.query as RawParameters));
  router.post("/auth/logout", pageHeaders, express.urlencoded({ extended: false, limit: 16 * 1024, parameterLimit: 20 }), (req, res) =>
    handle(req, res, (req.body ?? {}) as RawParameters),
  );
}
