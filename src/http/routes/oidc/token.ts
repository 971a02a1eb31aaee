import type { IRouter } from "express";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { registerFormEndpoint, type ClientEndpointServices, type FormEndpoint } from "./client-endpoint.ts";

/** POST /api/oidc/v1/token: authorization_code (with PKCE) and refresh_token grants, Bearer or DPoP-bound. */
export function tokenEndpoint(oidc: Pick<Oidc, "endpoints" | "tokens">, limitBytes: number): FormEndpoint {
  return {
    path: "/api/oidc/v1/token",
    cors: true,
    options: { limitBytes, url: oidc.endpoints.token, allowPublicClients: true },
    answer: async ({ client, form, dpopJkt }) => ({ status: 200, body: await oidc.tokens.grant(client, form, dpopJkt) }),
  };
}

export function registerTokenRoute(router: IRouter, oidc: ClientEndpointServices & Pick<Oidc, "endpoints" | "tokens">, limitBytes: number): void {
  registerFormEndpoint(router, oidc, tokenEndpoint(oidc, limitBytes));
}
