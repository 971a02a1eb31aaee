import type { Router } from "express";
import type { Oidc } from "../../../domain/oidc/compose.ts";
import { singleValues } from "../../../domain/oidc/parameters.ts";
import { OAuthError } from "../../../domain/oidc/oauth-error.ts";
import { clientEndpoint } from "./client-endpoint.ts";
import { grantTypes, type GrantType } from "../../../domain/oidc/client.ts";

const isGrantType = (value: string): value is GrantType => (grantTypes as readonly string[]).includes(value);

const tokenParameters = ["grant_type", "code", "redirect_uri", "code_verifier", "refresh_token", "scope"] as const;

/** POST /api/oidc/v1/token: authorization_code (with PKCE) and refresh_token grants. */
export function registerTokenRoute(router: Router, oidc: Oidc, limitBytes: number): void {
  router.post(
    "/api/oidc/v1/token",
    ...clientEndpoint(oidc, { limitBytes, allowPublicClients: true }, async (client, form, _req, res) => {
      const params = singleValues(form, tokenParameters);
      const grantType = params.get("grant_type");
      if (!grantType) throw new OAuthError("invalid_request", "grant_type is required");
      if (!isGrantType(grantType)) throw new OAuthError("unsupported_grant_type", `grant_type ${grantType} is not supported`);
      if (!client.grantTypes.includes(grantType)) {
        throw new OAuthError("unauthorized_client", `this client is not registered for grant_type ${grantType}`);
      }
      res.json(grantType === "authorization_code" ? await oidc.tokens.exchangeCode(client, params) : await oidc.tokens.refresh(client, params));
    }),
  );
}
