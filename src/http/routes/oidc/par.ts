import express, { type Router } from "express";
import { ClientAuthError } from "../../../domain/oidc/client-authentication.ts";
import type { Oidc } from "../../../domain/oidc/compose.ts";
import { OAuthError } from "../../../domain/oidc/oauth-error.ts";
import type { RawParameters } from "../../../domain/oidc/parameters.ts";

/**
 * POST /api/oidc/v1/par (RFC 9126): authenticate the client, validate the
 * request as the authorization endpoint would, answer 201 with a single-use
 * request_uri. Errors are RFC 6749 §5.2 JSON, never redirects.
 */
export function registerParRoute(router: Router, oidc: Oidc, limitBytes: number): void {
  router.post(
    "/api/oidc/v1/par",
    (req, res, next) => {
      res.set({ "Cache-Control": "no-store", Pragma: "no-cache" });
      if (!req.is("application/x-www-form-urlencoded")) {
        res.status(400).json({ error: "invalid_request", error_description: "the body must be application/x-www-form-urlencoded" });
        return;
      }
      next();
    },
    express.urlencoded({ extended: false, limit: limitBytes, parameterLimit: 100 }),
    async (req, res) => {
      const form = (req.body ?? {}) as RawParameters;
      try {
        const client = await oidc.clientAuthenticator.authenticate(
          { authorization: req.headers.authorization, form },
          [oidc.issuer, oidc.endpoints.par],
        );
        const pushed = await oidc.pushed.push(client, form);
        res.status(201).json({ request_uri: pushed.requestUri, expires_in: pushed.expiresIn });
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
        if (error instanceof OAuthError) {
          res.status(400).json({ error: error.error, error_description: error.description });
          return;
        }
        throw error;
      }
    },
  );
}
