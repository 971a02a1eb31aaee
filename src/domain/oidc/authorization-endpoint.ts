import { authorizationParameters, validateAuthorizationRequest, type AuthorizationRequest } from "./authorization-request.ts";
import type { OidcClient } from "./client.ts";
import { OAuthError } from "./oauth-error.ts";
import { singleValues, type RawParameters } from "./parameters.ts";
import type { PushedRequests } from "./pushed-requests.ts";

export interface ClientDirectory {
  find(clientId: string): Promise<OidcClient | undefined>;
}

/** An authorization error together with where, if anywhere, it may be sent. */
export class AuthorizationError extends Error {
  override name = "AuthorizationError";
  constructor(
    readonly error: OAuthError,
    /** Set only when the redirect_uri was matched exactly against the client's registration. */
    readonly redirectUri: string | undefined,
    readonly state: string | undefined,
  ) {
    super(error.description);
  }
}

/**
 * Steps 1–7 of spec 4.1, before any user interaction: identify the client,
 * match the redirect_uri (or take the pushed request), and validate. Until the
 * redirect_uri is matched, no error may be redirected.
 */
export async function resolveAuthorizationRequest(
  raw: RawParameters,
  clients: ClientDirectory,
  pushed: PushedRequests,
): Promise<{ client: OidcClient; request: AuthorizationRequest }> {
  let params: Map<string, string>;
  try {
    params = singleValues(raw, authorizationParameters, false);
  } catch (error) {
    throw new AuthorizationError(error as OAuthError, undefined, undefined);
  }
  const fail = (error: string, description: string): never => {
    throw new AuthorizationError(new OAuthError(error as OAuthError["error"], description, false), undefined, undefined);
  };
  const clientId = params.get("client_id") ?? fail("invalid_request", "client_id is required");
  const client = (await clients.find(clientId)) ?? fail("invalid_client", "the client is not registered");
  const queryRedirect = params.get("redirect_uri");
  const matchedRedirect = queryRedirect !== undefined && client.redirectUris.includes(queryRedirect) ? queryRedirect : undefined;

  const requestUri = params.get("request_uri");
  if (requestUri !== undefined) {
    // RFC 9126 §4: only the pushed parameters count; anything else in the query is ignored.
    try {
      return { client, request: await pushed.take(client.clientId, requestUri, matchedRedirect !== undefined) };
    } catch (error) {
      if (error instanceof OAuthError) throw new AuthorizationError(error, matchedRedirect, params.get("state"));
      throw error;
    }
  }

  if (queryRedirect === undefined) fail("invalid_request", "redirect_uri is required");
  if (matchedRedirect === undefined) fail("invalid_request", "redirect_uri does not match a registered redirect URI of this client");
  const state = params.get("state");
  try {
    if (client.requirePushedAuthorizationRequests) {
      throw new OAuthError("invalid_request", "this client must use pushed authorization requests (request_uri)");
    }
    return { client, request: validateAuthorizationRequest(params, client, matchedRedirect!) };
  } catch (error) {
    if (error instanceof OAuthError) throw new AuthorizationError(error, matchedRedirect, state);
    throw error;
  }
}
