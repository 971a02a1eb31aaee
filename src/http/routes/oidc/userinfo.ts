import type { Request, Response, Router } from "express";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { OAuthError } from "../../../domain/oidc/oauth-error.ts";
import { nameClaims } from "../../../domain/oidc/name-claims.ts";
import { requireAccessToken } from "./bearer.ts";

/**
 * OIDC Core 5.3: claims of the token's user, by granted scope (profile: name;
 * email: email), and always the authentication the token stems from (`acr`,
 * `amr`, `auth_time`, `sid`), as in its ID token, and `jpki_verified`. The
 * name follows the request's claims_locales (see nameClaims).
 */
export function registerUserinfoRoute(router: Router, oidc: Oidc): void {
  const handle = async (req: Request, res: Response) => {
    const token = await requireAccessToken(oidc, req, res, oidc.endpoints.userinfo);
    if (!token.scopes.includes("openid")) {
      throw new OAuthError("insufficient_scope", "the access token was not issued with the openid scope", {
        status: 403,
        wwwAuthenticate: `${token.dpopJkt === null ? "Bearer" : "DPoP"} realm="shomei", error="insufficient_scope", scope="openid"`,
      });
    }
    const user = await oidc.users.find(token.userId);
    if (!user) throw new OAuthError("invalid_token", "", { status: 401, wwwAuthenticate: 'Bearer realm="shomei", error="invalid_token"' });
    res.json({
      sub: user.id,
      auth_time: Math.floor(token.authTime / 1000),
      acr: token.acr,
      amr: token.amr,
      ...(token.sid !== null ? { sid: token.sid } : {}),
      // As it is now, not as it was when the token was issued: a revoked certificate shows at once.
      jpki_verified: await oidc.jpki.isVerified(user.id),
      ...(token.scopes.includes("profile") ? { ...nameClaims(user, token.claimsLocales), preferred_username: user.login } : {}),
      ...(token.scopes.includes("email") && user.email ? { email: user.email, email_verified: false } : {}),
    });
  };
  router.get("/api/oidc/v1/userinfo", handle);
  router.post("/api/oidc/v1/userinfo", handle);
}
