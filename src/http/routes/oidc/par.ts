import type { Router } from "express";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { clientEndpoint } from "./client-endpoint.ts";

/**
 * POST /api/oidc/v1/par (RFC 9126): authenticate the client, validate the
 * request as the authorization endpoint would, answer 201 with a single-use
 * request_uri. Errors are RFC 6749 §5.2 JSON, never redirects.
 */
export function registerParRoute(router: Router, oidc: Oidc, limitBytes: number): void {
  router.post(
    "/api/oidc/v1/par",
    ...clientEndpoint(oidc, { limitBytes }, async (client, form, _req, res) => {
      const pushed = await oidc.pushed.push(client, form);
      res.status(201).json({ request_uri: pushed.requestUri, expires_in: pushed.expiresIn });
    }),
  );
}
