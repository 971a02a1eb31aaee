import express, { type Request, type RequestHandler, type Response } from "express";
import type { OidcClient } from "../../../domain/oidc/client.ts";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { OAuthError } from "../../../domain/oidc/oauth-error.ts";
import type { RawParameters } from "../../../domain/oidc/parameters.ts";
import { dpopHeaders, sendDpopNonce } from "./dpop-headers.ts";

export interface ClientEndpointOptions {
  limitBytes: number;
  /** The endpoint's published URL: what a DPoP proof's htu must name. */
  url: string;
  /** Public clients (no credentials, client_id only) may call it: PAR and the token endpoint, with PKCE. */
  allowPublicClients?: boolean;
  /** Runs once the client is known, before its DPoP proof is used up: PAR's rate limit for public clients. */
  admit?: (client: OidcClient, req: Request) => Promise<void>;
}

/** What the endpoint learnt about the caller: the client, and the key of its valid DPoP proof if it sent one. */
export interface ClientCall {
  client: OidcClient;
  form: RawParameters;
  dpopJkt: string | undefined;
}

/**
 * A form-encoded endpoint that authenticates the client first (PAR, token,
 * revocation, introspection). Errors leave through the error middleware as
 * RFC 6749 §5.2 JSON with `Cache-Control: no-store`; a failed client
 * authentication is 401 with `WWW-Authenticate: Basic`. A DPoP proof, when
 * sent, is checked after the client is authenticated (so that nobody else's
 * requests use up proofs); a bad one is invalid_dpop_proof.
 */
export function clientEndpoint(
  oidc: Oidc,
  options: ClientEndpointOptions,
  handle: (call: ClientCall, req: Request, res: Response) => Promise<void>,
): RequestHandler[] {
  return [
    (req, res, next) => {
      res.set({ "Cache-Control": "no-store", Pragma: "no-cache" });
      sendDpopNonce(oidc, res);
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
      await options.admit?.(client, req);
      const dpopJkt = await oidc.dpop.check({ proofs: dpopHeaders(req), method: req.method, url: options.url });
      await handle({ client, form, dpopJkt }, req, res);
    },
  ];
}
