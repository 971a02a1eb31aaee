import type { IRouter } from "express";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { registerFormEndpoint, type ClientEndpointServices, type FormEndpoint } from "./client-endpoint.ts";

/**
 * POST /api/oidc/v1/par (RFC 9126): authenticate the client (a public
 * client is identified by client_id and must use PKCE), validate the
 * request as the authorization endpoint would, answer 201 with a single-use
 * request_uri. Errors are RFC 6749 §5.2 JSON, never redirects.
 */
export function parEndpoint(oidc: Pick<Oidc, "endpoints" | "pushed">, limitBytes: number): FormEndpoint {
  return {
    path: "/api/oidc/v1/par",
    cors: false,
    options: {
      limitBytes,
      url: oidc.endpoints.par,
      allowPublicClients: true,
      admit: (client, remoteAddress) => oidc.pushed.admit(client, remoteAddress),
    },
    async answer({ client, form, dpopJkt }) {
      const pushed = await oidc.pushed.push(client, form, dpopJkt);
      return { status: 201, body: { request_uri: pushed.requestUri, expires_in: pushed.expiresIn } };
    },
  };
}

export function registerParRoute(router: IRouter, oidc: ClientEndpointServices & Pick<Oidc, "endpoints" | "pushed">, limitBytes: number): void {
  registerFormEndpoint(router, oidc, parEndpoint(oidc, limitBytes));
}
