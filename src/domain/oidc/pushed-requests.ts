import type { OneTimeStore } from "../single-use.ts";
import type { Clock } from "../clock.ts";
import { authorizationParameters, validateAuthorizationRequest, type AuthorizationRequest } from "./authorization-request.ts";
import type { OidcClient } from "./client.ts";
import { randomToken, sha256Hex } from "./flow/secrets.ts";
import { OAuthError } from "./oauth-error.ts";
import { singleValues, type RawParameters } from "./parameters.ts";
import { requireRegisteredRedirectUri, requireSameClient } from "./redirect-uri.ts";

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
  ) {}

  /** Validates as the authorization endpoint would and stores the request. Errors carry no redirect: they are answered to the client. */
  async push(client: OidcClient, raw: RawParameters): Promise<PushedRequest> {
    const params = singleValues(raw, authorizationParameters);
    if (params.has("request_uri")) throw new OAuthError("invalid_request", "request_uri must not be sent to the pushed authorization request endpoint");
    requireSameClient(client, params.get("client_id"));
    const redirectUri = requireRegisteredRedirectUri(client, params.get("redirect_uri"));
    const request = validateAuthorizationRequest(params, client, redirectUri);
    const secret = randomToken();
    await this.records.issue({
      kind,
      keyHash: sha256Hex(secret),
      owner: client.clientId,
      payload: request,
      now: this.clock(),
      ttlMs: this.lifetimeSeconds * 1000,
    });
    return { requestUri: requestUriPrefix + secret, expiresIn: this.lifetimeSeconds };
  }

  /**
   * Consumes a request_uri for the client presenting it; errors are invalid_request_uri and leave a foreign or
   * expired one as it was. Whether they may be redirected is the authorization endpoint's call.
   */
  async take(clientId: string, requestUri: string): Promise<AuthorizationRequest> {
    const secret = requestUri.startsWith(requestUriPrefix) ? requestUri.slice(requestUriPrefix.length) : "";
    if (!/^[A-Za-z0-9_-]{43}$/.test(secret)) {
      throw new OAuthError("invalid_request_uri", "request_uri is not one this server issued");
    }
    const result = await this.records.consume(kind, sha256Hex(secret), this.clock(), clientId);
    if (result.ok) return result.record.payload as AuthorizationRequest;
    const description = {
      unknown: "request_uri is not one this server issued",
      foreign: "request_uri was issued to another client",
      expired: "request_uri has expired",
      consumed: "request_uri has already been used",
    }[result.reason];
    throw new OAuthError("invalid_request_uri", description);
  }
}
