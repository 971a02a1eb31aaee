import type { Request, Response, Router } from "express";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { OAuthError } from "../../../domain/oidc/oauth-error.ts";
import { requireOpenidScope, userinfoClaims } from "../../../domain/oidc/userinfo.ts";
import { requireAccessToken, type ResourceServices } from "./bearer.ts";

/** The UserInfo endpoint (OIDC Core 5.3), GET or POST; which claims it answers is the domain's rule (userinfo.ts). */
export function registerUserinfoRoute(router: Router, oidc: ResourceServices & Pick<Oidc, "endpoints" | "jpki" | "users">): void {
  const handle = async (req: Request, res: Response) => {
    const token = await requireAccessToken(oidc, req, res, oidc.endpoints.userinfo);
    requireOpenidScope(token);
    const user = await oidc.users.find(token.userId);
    if (!user) throw new OAuthError("invalid_token", "", { status: 401, wwwAuthenticate: 'Bearer realm="shomei", error="invalid_token"' });
    res.json(userinfoClaims(token, user, await oidc.jpki.isVerified(user.id)));
  };
  router.get("/api/oidc/v1/userinfo", handle);
  router.post("/api/oidc/v1/userinfo", handle);
}
