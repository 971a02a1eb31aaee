import type { Router } from "express";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { clientEndpoint } from "./client-endpoint.ts";

/** POST /api/oidc/v1/token: authorization_code (with PKCE) and refresh_token grants. */
export function registerTokenRoute(router: Router, oidc: Oidc, limitBytes: number): void {
  router.post(
    "/api/oidc/v1/token",
    ...clientEndpoint(oidc, { limitBytes, allowPublicClients: true }, async (client, form, _req, res) => {
      res.json(await oidc.tokens.grant(client, form));
    }),
  );
}
