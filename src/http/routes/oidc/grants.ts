import type { Request, Response, Router } from "express";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { requireAccessToken, type ResourceServices } from "./bearer.ts";

/**
 * Grant Management API (OpenID Grant Management draft §6): GET returns a
 * grant's scopes and authorization_details, DELETE revokes it with every token
 * issued under it. The caller is the owning client, proven by an access token
 * issued to it.
 */
export function registerGrantRoutes(router: Router, oidc: ResourceServices & Pick<Oidc, "endpoints" | "grants">): void {
  const ownedGrant = async (req: Request<{ grantId: string }>, res: Response) =>
    oidc.grants.owned(
      req.params.grantId,
      (await requireAccessToken(oidc, req, res, `${oidc.endpoints.grants}/${encodeURIComponent(req.params.grantId)}`)).clientId,
    );

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
