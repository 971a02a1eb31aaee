import type { IRouter, Request, RequestHandler, Response } from "express";
import type { OidcClient } from "../../../domain/oidc/client.ts";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { OAuthError } from "../../../domain/oidc/oauth-error.ts";
import { fapi2ProofRequirements } from "../../../domain/oidc/fapi2-profile.ts";
import type { RawParameters } from "../../../domain/oidc/parameters.ts";
import { corsHeaders } from "../../middleware/cors.ts";
import { formBody, formType } from "../../middleware/form-body.ts";
import { dpopHeaders } from "./dpop-headers.ts";

export interface ClientEndpointOptions {
  limitBytes: number;
  /** The endpoint's published URL: what a DPoP proof's htu must name. */
  url: string;
  /** Public clients (no credentials, client_id only) may call it: PAR and the token endpoint, with PKCE. */
  allowPublicClients?: boolean;
  /** Runs once the client is known, before its DPoP proof is used up: PAR's rate limit for public clients. */
  admit?: (client: OidcClient, remoteAddress: string) => Promise<void>;
}

/** What the endpoint learnt about the caller: the client, and the key of its valid DPoP proof if it sent one. */
export interface ClientCall {
  client: OidcClient;
  form: RawParameters;
  dpopJkt: string | undefined;
}

/** A form-encoded endpoint for clients: its path, how callers are identified, and its answer to an identified call. */
export interface FormEndpoint {
  path: string;
  options: ClientEndpointOptions;
  /** Answers cross-origin calls (see corsPaths): its answers carry the CORS headers. */
  cors: boolean;
  answer(call: ClientCall): Promise<{ status: number; body: unknown }>;
}

/** What a request brings for identifying its caller, however it was read. */
export interface CallerEvidence {
  authorization: string | undefined;
  form: RawParameters;
  /** Every DPoP header line, each on its own (see dpopHeaders). */
  dpopProofs: string[];
  remoteAddress: string;
}

/** What every answer of a client endpoint carries: never cached, and the current DPoP nonce when nonces are required (RFC 9449 section 8.2). */
export function clientEndpointHeaders(oidc: Pick<Oidc, "dpop">): Record<string, string> {
  const nonce = oidc.dpop.currentNonce();
  return { "Cache-Control": "no-store", Pragma: "no-cache", ...(nonce !== undefined ? { "DPoP-Nonce": nonce } : {}) };
}

/**
 * Authenticates the client first, then checks a DPoP proof when one was sent
 * (so that nobody else's requests use up proofs); a bad one is
 * invalid_dpop_proof.
 */
/** What a client endpoint uses of the provider: client authentication, DPoP, FAPI 2.0 rules and the issuer (the assertions' audience). */
export type ClientEndpointServices = Pick<Oidc, "clientAuthenticator" | "dpop" | "fapi2" | "issuer">;

export async function identifyCaller(oidc: ClientEndpointServices, options: ClientEndpointOptions, evidence: CallerEvidence): Promise<ClientCall> {
  const { form } = evidence;
  const client = await oidc.clientAuthenticator.authenticate(
    { authorization: evidence.authorization, form },
    // Only the issuer identifier: accepting endpoint URLs lets a server that lies about its token endpoint
    // obtain assertions valid here (the "audience injection" of private_key_jwt).
    [oidc.issuer],
    { allowPublicClients: options.allowPublicClients ?? false },
  );
  await options.admit?.(client, evidence.remoteAddress);
  const dpopJkt = await oidc.dpop.check({ proofs: evidence.dpopProofs, method: "POST", url: options.url }, fapi2ProofRequirements(client, oidc.fapi2));
  return { client, form, dpopJkt };
}

/**
 * A form-encoded endpoint that authenticates the client first (PAR, token,
 * revocation, introspection). Errors leave through the error middleware as
 * RFC 6749 §5.2 JSON with `Cache-Control: no-store`; a failed client
 * authentication is 401 with `WWW-Authenticate: Basic`.
 */
export function clientEndpoint(
  oidc: ClientEndpointServices,
  options: ClientEndpointOptions,
  handle: (call: ClientCall, req: Request, res: Response) => Promise<void>,
): RequestHandler[] {
  return [
    (req, res, next) => {
      res.set(clientEndpointHeaders(oidc));
      if (!req.is(formType)) {
        next(new OAuthError("invalid_request", "the body must be application/x-www-form-urlencoded"));
        return;
      }
      next();
    },
    formBody(options.limitBytes),
    async (req, res) => {
      const evidence = { authorization: req.headers.authorization, form: (req.body ?? {}) as RawParameters, dpopProofs: dpopHeaders(req), remoteAddress: req.socket.remoteAddress ?? "unknown" };
      await handle(await identifyCaller(oidc, options, evidence), req, res);
    },
  ];
}

/**
 * A FormEndpoint as an Express route, its answer as JSON. The route carries
 * its own CORS headers: it may be registered before the CORS middleware of
 * its path (see createHttpApp).
 */
export function registerFormEndpoint(router: IRouter, oidc: ClientEndpointServices, endpoint: FormEndpoint): void {
  router.post(
    endpoint.path,
    ...(endpoint.cors ? [corsHeaders] : []),
    ...clientEndpoint(oidc, endpoint.options, async (call, _req, res) => {
      const { status, body } = await endpoint.answer(call);
      res.status(status).json(body);
    }),
  );
}
