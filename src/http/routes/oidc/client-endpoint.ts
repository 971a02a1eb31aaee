import express, { type Request, type RequestHandler, type Response } from "express";
import type { OidcClient } from "../../../domain/oidc/client.ts";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { OAuthError } from "../../../domain/oidc/oauth-error.ts";
import type { RawParameters } from "../../../domain/oidc/parameters.ts";

export interface ClientEndpointOptions {
  limitBytes: number;
  /** Public clients (no credentials, client_id only) may call it: the token endpoint, with PKCE. */
  allowPublicClients?: boolean;
}

/**
 * A form-encoded endpoint that authenticates the client first (PAR, token,
 * revocation, introspection). Errors leave through the error middleware as
 * RFC 6749 §5.2 JSON with `Cache-Control: no-store`; a failed client
 * authentication is 401 with `WWW-Authenticate: Basic`.
 */
export function clientEndpoint(
  oidc: Oidc,
  options: ClientEndpointOptions,
  handle: (client: OidcClient, form: RawParameters, req: Request, res: Response) => Promise<void>,
): RequestHandler[] {
  return [
    (req, res, next) => {
      res.set({ "Cache-Control": "no-store", Pragma: "no-cache" });
      if (!req.is("application/x-www-form-urlencoded")) {
        next(new OAuthError("invalid_request", "the body must be application/x-www-form-urlencoded"));
        return;
      }
      next();
    },
    express.urlencoded({ extended: false, limit: options.limitBytes, parameterLimit: 100 }),
    async (req, res) => {
      const form = (req.body ?? {}) as RawParameters;
      const client = await oidc.clientAuthenticator.authenticate(
        { authorization: req.headers.authorization, form },
        // Only the issuer identifier: accepting endpoint URLs lets a server that lies about its token endpoint
        // obtain assertions valid here (the "audience injection" of private_key_jwt).
        [oidc.issuer],
        { allowPublicClients: options.allowPublicClients ?? false },
      );
      await handle(client, form, req, res);
    },
  ];
}
