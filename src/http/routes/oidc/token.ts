import type { Router } from "express";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { clientEndpoint } from "./client-endpoint.ts";

/** POST /api/oidc/v1/token: authorization_code (with PKCE) and refresh_token grants, Bearer or DPoP-bound. */
export function registerTokenRoute(router: Router, oidc: Oidc, limitBytes: number): void {
  router.post(
    "/api/oidc/v1/token",
    ...clientEndpoint(oidc, { limitBytes, url: oidc.endpoints.token, allowPublicClients: true }, async ({ client, form, dpopJkt }, _req, res) => {
      res.json(await oidc.tokens.grant(client, form, dpopJkt));
    }),
  );
}
