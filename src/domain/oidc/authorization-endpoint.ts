import { authorizationParameters, maxParameterLength, validateAuthorizationRequest, type AuthorizationRequest } from "./authorization-request.ts";
import type { OidcClient } from "./client.ts";
import { OAuthError, type OAuthErrorCode } from "./oauth-error.ts";
import { singleValues, type RawParameters } from "./parameters.ts";
import type { PushedRequests } from "./pushed-requests.ts";
import type { ClientLookup } from "./stores.ts";
import { matchingRedirectUri, requireRegisteredRedirectUri } from "./redirect-uri.ts";
import type { RequestObjects } from "./request-object.ts";

/**
 * Steps 1–7 of spec 4.1, before any user interaction: identify the client,
 * match the redirect_uri (or take the pushed request), and validate. Until the
 * redirect_uri is matched, no error may be redirected; after, every
 * OAuthError carries the matched redirect_uri and the request's state.
 */
export async function resolveAuthorizationRequest(
  raw: RawParameters,
  clients: ClientLookup,
  pushed: PushedRequests,
  /** Signed request objects (`request`); without it, `request` is ignored. */
  requestObjects?: RequestObjects,
): Promise<{ client: OidcClient; request: AuthorizationRequest }> {
  const params = singleValues(raw, authorizationParameters);
  const fail = (error: OAuthErrorCode, description: string): never => {
    throw new OAuthError(error, description);
  };
  const clientId = params.get("client_id") ?? fail("invalid_request", "client_id is required");
  const client = (await clients.find(clientId)) ?? fail("invalid_client", "the client is not registered");
  const matchedRedirect = matchingRedirectUri(client, params.get("redirect_uri"));
  try {
    const requestUri = params.get("request_uri");
    // RFC 9126 §4: only the pushed parameters count; anything else in the query is ignored.
    if (requestUri !== undefined && !params.has("request")) return { client, request: await pushed.take(client.clientId, requestUri) };
    // RFC 9101 §6.3: with a request object, its claims are the request and the other query parameters are ignored.
    const effective = requestObjects ? await requestObjects.parameters(client, params) : params;
    const redirectUri = requireRegisteredRedirectUri(client, effective.get("redirect_uri"));
    if (client.requirePushedAuthorizationRequests) {
      fail("invalid_request", "this client must use pushed authorization requests (request_uri)");
    }
    return { client, request: validateAuthorizationRequest(effective, client, redirectUri) };
  } catch (error) {
    // Only now may an error go back to the client, and only to a redirect_uri matched exactly.
    if (error instanceof OAuthError && matchedRedirect !== undefined) {
      // A state refused as too long is not sent back: the refusal says why, and the redirect stays a sane length.
      const state = params.get("state");
      throw error.redirectTo({ redirectUri: matchedRedirect, state: state !== undefined && state.length > maxParameterLength ? undefined : state });
    }
    throw error;
  }
}
