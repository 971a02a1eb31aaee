import express, { type Router } from "express";
import type { Oidc } from "../../../domain/oidc/compose.ts";
import { clearCookie, cookieNames, readCookie } from "../../cookies.ts";
import { pageHeaders } from "../../middleware/page-headers.ts";
import { html } from "../../pages/html.ts";
import { page } from "../../pages/layout.ts";

/**
 * GET shows a sign-out button, POST ends the session. A GET never signs out:
 * otherwise any page could sign a user out with an image tag. SameSite=Lax
 * keeps the cookie off cross-site POSTs, so the form needs no CSRF token.
 */
export function registerLogoutRoute(router: Router, oidc: Oidc): void {
  const cookies = cookieNames(oidc.issuer);
  router.get("/auth/logout", pageHeaders, (_req, res) => {
    res.type("html").send(
      page("Sign out", html`<h1>Sign out</h1><p class="lead">End your session on this device?</p>
<form method="post" action="/auth/logout"><button type="submit" class="primary">Sign out</button></form>`),
    );
  });
  router.post("/auth/logout", pageHeaders, express.urlencoded({ extended: false, limit: 1024 }), async (req, res) => {
    const sessionId = readCookie(req, cookies.session);
    if (sessionId) await oidc.flow.endSession(sessionId);
    clearCookie(res, cookies, cookies.session);
    res.type("html").send(page("Signed out", html`<h1>You are signed out</h1><p class="lead">You can close this window.</p>`));
  });
}
