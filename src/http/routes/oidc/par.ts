import type { Router } from "express";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { clientEndpoint, type ClientEndpointOptions } from "./client-endpoint.ts";

/**
 * POST /api/oidc/v1/par (RFC 9126): authenticate the client (a public
 * client is identified by client_id and must use PKCE), validate the
 * request as the authorization endpoint would, answer 201 with a single-use
 * request_uri. Errors are RFC 6749 §5.2 JSON, never redirects.
 */
export function registerParRoute(router: Router, oidc: Oidc, limitBytes: number): void {
  const options: ClientEndpointOptions = {
    limitBytes,
    url: oidc.endpoints.par,
    allowPublicClients: true,
    admit: (client, req) => oidc.pushed.admit(client, req.socket.remoteAddress ?? "unknown"),
  };
  router.post(
    "/api/oidc/v1/par",
    ...clientEndpoint(oidc, options, async ({ client, form, dpopJkt }, _req, res) => {
      const pushed = await oidc.pushed.push(client, form, dpopJkt);
      res.status(201).json({ request_uri: pushed.requestUri, expires_in: pushed.expiresIn });
    }),
  );
}
