import type { Router } from "express";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { clientEndpoint, type ClientEndpointServices } from "./client-endpoint.ts";

/** RFC 7009 revocation and RFC 7662 introspection, for authenticated (confidential) clients. */
export function registerTokenAdministrationRoutes(router: Router, oidc: ClientEndpointServices & Pick<Oidc, "endpoints" | "tokenAdministration">, limitBytes: number): void {
  router.post(
    "/api/oidc/v1/revoke",
    ...clientEndpoint(oidc, { limitBytes, url: oidc.endpoints.revocation }, async ({ client, form }, _req, res) => {
      await oidc.tokenAdministration.revoke(client, form);
      res.status(200).end();
    }),
  );
  router.post(
    "/api/oidc/v1/introspect",
    ...clientEndpoint(oidc, { limitBytes, url: oidc.endpoints.introspection }, async ({ client, form }, _req, res) => {
      res.json(await oidc.tokenAdministration.introspect(client, form));
    }),
  );
}
