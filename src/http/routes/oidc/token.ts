import type { Router } from "express";
import type { Oidc } from "../../../domain/oidc/compose.ts";
import { singleValues } from "../../../domain/oidc/parameters.ts";
import { TokenError } from "../../../domain/oidc/tokens/token-error.ts";
import { OAuthError } from "../../../domain/oidc/oauth-error.ts";
import { clientEndpoint } from "./client-endpoint.ts";

const tokenParameters = ["grant_type", "code", "redirect_uri", "code_verifier", "refresh_token", "scope"] as const;

/** POST /api/oidc/v1/token: authorization_code (with PKCE) and refresh_token grants. */
export function registerTokenRoute(router: Router, oidc: Oidc, limitBytes: number): void {
  router.post(
    "/api/oidc/v1/token",
    ...clientEndpoint(oidc, { url: oidc.endpoints.token, limitBytes, allowPublicClients: true }, async (client, form, _req, res) => {
      let params: Map<string, string>;
      try {
        params = singleValues(form, tokenParameters, false);
      } catch (error) {
        if (error instanceof OAuthError) throw new TokenError("invalid_request", error.description);
        throw error;
      }
      const grantType = params.get("grant_type");
      let response;
      if (grantType === "authorization_code") response = await oidc.tokens.exchangeCode(client, params);
      else if (grantType === "refresh_token") response = await oidc.tokens.refresh(client, params);
      else if (!grantType) throw new TokenError("invalid_request", "grant_type is required");
      else throw new TokenError("unsupported_grant_type", `grant_type ${grantType} is not supported`);
      res.json(response);
    }),
  );
}
