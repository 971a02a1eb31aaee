import type { Request, Response, Router } from "express";
import type { Oidc } from "../../../domain/oidc/compose.ts";
import type { GrantRow } from "../../../storage/oidc-repository.ts";
import { OAuthError } from "../../../domain/oidc/oauth-error.ts";
import { requireAccessToken } from "./bearer.ts";

/**
 * Grant Management API (OpenID Grant Management draft §6): GET returns a
 * grant's scopes and authorization_details, DELETE revokes it with every token
 * issued under it. The caller is the owning client, proven by an access token
 * issued to it; another client's grant answers 404 like an unknown one.
 */
export function registerGrantRoutes(router: Router, oidc: Oidc): void {
  /** The grant of the path, if the caller's client owns it; otherwise an OAuthError (401 or 404). */
  async function ownedGrant(req: Request<{ grantId: string }>, res: Response): Promise<GrantRow> {
    const token = await requireAccessToken(oidc, req, res);
    const grant = await oidc.grants.find(req.params.grantId);
    if (!grant || grant.clientId !== token.clientId) throw new OAuthError("invalid_grant_id", "no such grant for this client", { status: 404 });
    return grant;
  }

  router.get("/api/oidc/v1/grants/:grantId", async (req, res) => {
    const grant = await ownedGrant(req, res);
    res.json({
      scopes: [{ scope: grant.scopes.join(" ") }],
      ...(grant.authorizationDetails.length ? { authorization_details: grant.authorizationDetails } : {}),
    });
  });
  router.delete("/api/oidc/v1/grants/:grantId", async (req, res) => {
    const grant = await ownedGrant(req, res);
    await oidc.grants.revoke(grant.id);
    res.status(204).end();
  });
}
