import express, { type Request, type RequestHandler, type Response } from "express";
import { ClientAuthError } from "../../../domain/oidc/client-authentication.ts";
import type { OidcClient } from "../../../domain/oidc/client.ts";
import type { Oidc } from "../../../domain/oidc/compose.ts";
import { OAuthError } from "../../../domain/oidc/oauth-error.ts";
import type { RawParameters } from "../../../domain/oidc/parameters.ts";
import { TokenError } from "../../../domain/oidc/tokens/token-error.ts";

export interface ClientEndpointOptions {
  limitBytes: number;
  /** Public clients (no credentials, client_id only) may call it: the token endpoint, with PKCE. */
  allowPublicClients?: boolean;
}

/**
 * A form-encoded endpoint that authenticates the client first (PAR, token,
 * revocation, introspection). Errors are RFC 6749 §5.2 JSON with
 * `Cache-Control: no-store`; a failed client authentication is 401 with
 * `WWW-Authenticate: Basic`.
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
        res.status(400).json({ error: "invalid_request", error_description: "the body must be application/x-www-form-urlencoded" });
        return;
      }
      next();
    },
    express.urlencoded({ extended: false, limit: options.limitBytes, parameterLimit: 100 }),
    async (req, res) => {
      const form = (req.body ?? {}) as RawParameters;
      try {
        const client = await oidc.clientAuthenticator.authenticate(
          { authorization: req.headers.authorization, form },
          // Only the issuer identifier: accepting endpoint URLs lets a server that lies about its token endpoint
          // obtain assertions valid here (the "audience injection" of private_key_jwt).
          [oidc.issuer],
          { allowPublicClients: options.allowPublicClients ?? false },
        );
        await handle(client, form, req, res);
      } catch (error) {
        if (error instanceof ClientAuthError) {
          if (error.error === "invalid_client") {
            // Always challenged, whatever method was tried: the client learns it must authenticate.
            res.set("WWW-Authenticate", 'Basic realm="shomei", charset="UTF-8"').status(401);
          } else {
            res.status(400);
          }
          res.json({ error: error.error, error_description: error.description });
          return;
        }
        if (error instanceof OAuthError || error instanceof TokenError) {
          res.status(400).json({ error: error.error, error_description: error.description });
          return;
        }
        throw error;
      }
    },
  ];
}
