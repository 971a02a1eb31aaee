import { decodeProtectedHeader, errors, type JWTPayload } from "jose";
import type { Clock } from "../clock.ts";
import { jwtNestingWithin } from "../json-nesting.ts";
import { authorizationParameters } from "./authorization-request.ts";
import { verifyWithKeySet } from "./client-assertion.ts";
import type { OidcClient } from "./client.ts";
import { ClientKeysUnavailable, type ClientKeys } from "./client-keys.ts";
import { OAuthError } from "./oauth-error.ts";

/** The algorithms a request object may be signed with (discovery's request_object_signing_alg_values_supported). */
export const requestObjectAlgorithms = ["PS256", "ES256"] as const;

/** The JWT type RFC 9101 section 10.8 registers; an object without typ is accepted too, as RFC 9101 allows. */
const requestObjectType = "oauth-authz-req+jwt";

/** How far ahead exp may be, and how far back nbf (FAPI 2.0 Message Signing 5.3.1: 60 minutes). */
const maxWindowSeconds = 60 * 60;

function invalidObject(description: string): OAuthError {
  return new OAuthError("invalid_request_object", description);
}

/**
 * Signed authorization request objects (JAR, RFC 9101) at PAR and at the
 * authorization endpoint. The `request` parameter is verified with the keys
 * of the client's registration (`jwks`, or those at its `jwks_uri`: client-keys.ts); then its claims are the request,
 * and every parameter outside it but client_id is ignored (RFC 9101 section
 * 6.3). A client registered with require_signed_request_object must send one.
 */
export class RequestObjects {
  constructor(
    private readonly issuer: string,
    private readonly keys: ClientKeys,
    private readonly clock: Clock,
    /** Clock skew tolerated on exp, nbf and iat, in seconds. */
    private readonly clockToleranceSeconds: number,
  ) {}

  /** The parameters of the request: the object's claims when `request` is sent, else `params` as they are. */
  async parameters(client: OidcClient, params: Map<string, string>): Promise<Map<string, string>> {
    const request = params.get("request");
    if (request === undefined) {
      if (client.requireSignedRequestObject) {
        throw new OAuthError("invalid_request", "this client must send its authorization request as a signed request object (request)");
      }
      return params;
    }
    if (params.has("request_uri")) throw new OAuthError("invalid_request", "request and request_uri must not be sent together");
    const claims = await this.verify(client, request);
    return parametersOf(client, claims);
  }

  private async verify(client: OidcClient, request: string): Promise<JWTPayload> {
    if (!jwtNestingWithin(request)) throw invalidObject("request is not a well-formed JWT");
    let typ: unknown;
    try {
      typ = decodeProtectedHeader(request).typ;
    } catch {
      throw invalidObject("request is not a well-formed JWT");
    }
    if (typ !== undefined && typ !== requestObjectType) throw invalidObject(`the request object's typ must be ${requestObjectType}`);
    let keys;
    try {
      keys = await this.keys.keysFor(client, request);
    } catch (error) {
      if (!(error instanceof ClientKeysUnavailable)) throw error;
      throw invalidObject(`the request object cannot be verified: ${error.message}`);
    }
    const now = this.clock();
    let payload: JWTPayload;
    try {
      ({ payload } = await verifyWithKeySet(request, keys, {
        algorithms: [...requestObjectAlgorithms],
        issuer: client.clientId,
        audience: this.issuer,
        requiredClaims: ["exp"],
        clockTolerance: this.clockToleranceSeconds,
        currentDate: new Date(now),
      }));
    } catch (error) {
      throw invalidObject(describe(error));
    }
    const seconds = Math.floor(now / 1000);
    if (payload.exp! > seconds + maxWindowSeconds + this.clockToleranceSeconds) {
      throw invalidObject("the request object's exp is more than 60 minutes ahead");
    }
    if (typeof payload.nbf === "number" && payload.nbf < seconds - maxWindowSeconds) {
      throw invalidObject("the request object's nbf is more than 60 minutes ago");
    }
    return payload;
  }
}

/** The object's claims as authorization parameters (strings, as a query would carry them). */
function parametersOf(client: OidcClient, claims: JWTPayload): Map<string, string> {
  if (claims.client_id !== client.clientId) throw invalidObject("the request object's client_id must be the client's");
  const params = new Map<string, string>();
  for (const name of authorizationParameters) {
    const value = claims[name];
    if (value === undefined || name === "request" || name === "request_uri") {
      if (value !== undefined) throw invalidObject(`a request object must not carry ${name}`);
      continue;
    }
    params.set(name, typeof value === "string" ? value : JSON.stringify(value));
  }
  return params;
}

/** What failed, in words safe to send: the client signed the object, so naming the claim helps it. */
function describe(error: unknown): string {
  if (error instanceof errors.JWTExpired) return "the request object has expired";
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.reason === "missing") return `the request object must carry ${error.claim}`;
    return `the request object's ${error.claim} is not valid here`;
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return `the request object must be signed with ${requestObjectAlgorithms.join(" or ")}`;
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) return "request is not a well-formed signed JWT";
  return "the request object's signature does not verify with the client's registered keys";
}
