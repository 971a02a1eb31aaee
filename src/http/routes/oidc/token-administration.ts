import type { Router } from "express";
import type { Oidc } from "../../../domain/oidc/compose.ts";
import { singleValues, type RawParameters } from "../../../domain/oidc/parameters.ts";
import { OAuthError } from "../../../domain/oidc/oauth-error.ts";
import { clientEndpoint } from "./client-endpoint.ts";

/** RFC 7009 revocation and RFC 7662 introspection, for authenticated (confidential) clients. */
export function registerTokenAdministrationRoutes(router: Router, oidc: Oidc, limitBytes: number): void {
  const token = (form: RawParameters) => {
    const value = singleValues(form, ["token"]).get("token");
    if (value === undefined) throw new OAuthError("invalid_request", "token is required");
    return value;
  };
  router.post(
    "/api/oidc/v1/revoke",
    ...clientEndpoint(oidc, { limitBytes }, async (client, form, _req, res) => {
      await oidc.tokenAdministration.revoke(client, token(form));
      res.status(200).end();
    }),
  );
  router.post(
    "/api/oidc/v1/introspect",
    ...clientEndpoint(oidc, { limitBytes }, async (client, form, _req, res) => {
      res.json(await oidc.tokenAdministration.introspect(client, token(form)));
    }),
  );
}
