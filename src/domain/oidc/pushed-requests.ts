import type { OneTimeStore } from "../single-use.ts";
import type { Clock } from "../clock.ts";
import type { LoginThrottle } from "../credentials/login-throttle.ts";
import { authorizationParameters, validateAuthorizationRequest, type AuthorizationRequest } from "./authorization-request.ts";
import type { OidcClient } from "./client.ts";
import { brokenBy, requestUriLifetime } from "./fapi2-profile.ts";
import { hasIssuedSecretShape, orderedSecret, storedKeyOf } from "./flow/secrets.ts";
import { OAuthError } from "./oauth-error.ts";
import { singleValues, type RawParameters } from "./parameters.ts";
import { requireRegisteredRedirectUri, requireSameClient } from "./redirect-uri.ts";
import type { RequestObjects } from "./request-object.ts";

const requestUriPrefix = "urn:ietf:params:oauth:request_uri:";
const kind = "request_uri";

export interface PushedRequest {
  requestUri: string;
  expiresIn: number;
}

/**
 * RFC 9126 pushed authorization requests. A request_uri carries 256 random
 * bits; only their SHA-256 is stored, with the validated request. It is
 * consumed, atomically and only by the client it was issued to, the first time
 * the authorization endpoint sees it (spec 3.2): the browser then continues
 * with an interaction of its own, so reloading the login page needs no
 * request_uri.
 */
export class PushedRequests {
  constructor(
    private readonly records: Pick<OneTimeStore, "issue" | "consume">,
    private readonly clock: Clock,
    private readonly lifetimeSeconds: number,
    private readonly publicClientLimit: Pick<LoginThrottle, "admit">,
    /** Signed request objects (`request`); without it, `request` is ignored like any unknown parameter. */
    private readonly requestObjects?: RequestObjects,
  ) {}

  /**
   * The public clients' rate limit: anyone can name a public client, so each
   * of its requests from an address is counted, per client_id and per
   * address, as soon as the client is known and before anything else (a DPoP
   * proof, validation) is looked at. Confidential clients pass.
   */
  async admit(client: OidcClient, address: string): Promise<void> {
    if (client.type !== "public") return;
    const refused = await this.publicClientLimit.admit(client.clientId, address);
    if (refused?.outcome === "refused") {
      throw new OAuthError("temporarily_unavailable", `too many pushed authorization requests; retry in ${refused.retryAfterSeconds} seconds`, {
        status: 429,
        reason: `public client rate limit (${refused.scope})`,
        headers: { "Retry-After": String(refused.retryAfterSeconds) },
      });
    }
  }

  /**
   * Validates as the authorization endpoint would and stores the request.
   * Errors carry no redirect: they are answered to the client. `dpopJkt`,
   * the key of the request's valid DPoP proof, binds the code to that key.
   */
  async push(client: OidcClient, raw: RawParameters, dpopJkt?: string): Promise<PushedRequest> {
    const sent = singleValues(raw, authorizationParameters);
    if (sent.has("request_uri")) throw new OAuthError("invalid_request", "request_uri must not be sent to the pushed authorization request endpoint");
    requireSameClient(client, sent.get("client_id"));
    const params = this.requestObjects ? await this.requestObjects.parameters(client, sent) : sent;
    const broken = brokenBy(client, "pushed_request", { params });
    if (broken) throw new OAuthError("invalid_request", broken.requirement);
    const redirectUri = requireRegisteredRedirectUri(client, params.get("redirect_uri"));
    const validated = validateAuthorizationRequest(params, client, redirectUri);
    if (dpopJkt !== undefined && validated.dpopJkt !== undefined && validated.dpopJkt !== dpopJkt) {
      throw new OAuthError("invalid_request", "dpop_jkt does not match the key of the DPoP proof");
    }
    // RFC 9449 section 10.1: a proof at PAR binds the code as dpop_jkt would.
    const request: AuthorizationRequest = dpopJkt === undefined ? validated : { ...validated, dpopJkt };
    const now = this.clock();
    const secret = orderedSecret(now);
    const lifetimeSeconds = requestUriLifetime(client, this.lifetimeSeconds);
    await this.records.issue({
      kind,
      keyHash: storedKeyOf(secret),
      owner: client.clientId,
      payload: request,
      now,
      ttlMs: lifetimeSeconds * 1000,
    });
    return { requestUri: requestUriPrefix + secret, expiresIn: lifetimeSeconds };
  }

  /**
   * Consumes a request_uri for the client presenting it; errors are invalid_request_uri and leave a foreign or
   * expired one as it was. Whether they may be redirected is the authorization endpoint's call.
   */
  async take(clientId: string, requestUri: string): Promise<AuthorizationRequest> {
    const secret = requestUri.startsWith(requestUriPrefix) ? requestUri.slice(requestUriPrefix.length) : "";
    if (!hasIssuedSecretShape(secret)) {
      throw new OAuthError("invalid_request_uri", "request_uri is not one this server issued");
    }
    const result = await this.records.consume(kind, storedKeyOf(secret), this.clock(), clientId);
    if (result.ok) return result.record.payload;
    const description = {
      unknown: "request_uri is not one this server issued",
      foreign: "request_uri was issued to another client",
      expired: "request_uri has expired",
      consumed: "request_uri has already been used",
    }[result.reason];
    throw new OAuthError("invalid_request_uri", description);
  }
}
