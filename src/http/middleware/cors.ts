import type { RequestHandler, Router } from "express";

/**
 * CORS for the endpoints a browser application (a public client using PKCE)
 * calls directly: discovery, JWKS, token, userinfo, revocation, introspection
 * and the grant API. Any origin may call them, without credentials: they never
 * read cookies, only the Authorization header or the form body, so a page of
 * another origin gains nothing it could not do from a server. The pages and
 * the authorization endpoint get no CORS headers: browsers navigate to them.
 */
export const corsHeaders: RequestHandler = (req, res, next) => {
  if (req.method === "OPTIONS") {
    res
      .set({
        "Access-Control-Allow-Origin": corsAnswerHeaders["Access-Control-Allow-Origin"],
        "Access-Control-Allow-Methods": "GET, POST, DELETE",
        // DPoP: browser applications send proofs, and read the server's nonce (RFC 9449).
        "Access-Control-Allow-Headers": "Authorization, Content-Type, DPoP",
        "Access-Control-Max-Age": "600",
      })
      .status(204)
      .end();
    return;
  }
  res.set(corsAnswerHeaders);
  next();
};

/** What every cross-origin answer but a preflight's carries: any origin, and the headers a page may read. */
export const corsAnswerHeaders: Readonly<Record<string, string>> = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Expose-Headers": "WWW-Authenticate, DPoP-Nonce",
};

/** The paths that answer cross-origin calls (see corsHeaders). */
export const corsPaths = [
  "/.well-known/openid-configuration",
  "/.well-known/oauth-authorization-server",
  "/api/oidc/v1/jwks",
  "/api/oidc/v1/token",
  "/api/oidc/v1/userinfo",
  "/api/oidc/v1/revoke",
  "/api/oidc/v1/introspect",
  "/api/oidc/v1/grants/:grantId",
];

export function registerCors(router: Router): void {
  for (const path of corsPaths) router.use(path, corsHeaders);
}
