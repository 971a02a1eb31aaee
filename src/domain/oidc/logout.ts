import { compactVerify, createLocalJWKSet } from "jose";
import { jwtNestingWithin } from "../json-nesting.ts";
import { csrfToken, csrfTokenMatches, sha256Hex } from "./flow/secrets.ts";
import type { OidcClient } from "./client.ts";
import { signingAlgs } from "./keys/signing-algorithms.ts";
import type { SigningKeys } from "./keys/signing-keys.ts";
import { OAuthError } from "./oauth-error.ts";
import { singleValues, type RawParameters } from "./parameters.ts";
import type { ClientLookup } from "./stores.ts";

/** A validated RP-Initiated Logout request (OpenID Connect RP-Initiated Logout 1.0 §2–3). */
export interface LogoutRequest {
  /** The client that asked, when it identified itself (client_id or id_token_hint). */
  client?: OidcClient;
  /** Where to send the browser after signing out: registered for the client, matched exactly. */
  postLogoutRedirectUri?: string;
  state?: string;
}

const logoutParameters = ["id_token_hint", "client_id", "post_logout_redirect_uri", "state", "logout_hint", "ui_locales"] as const;

/**
 * Validates the parameters of the end-session endpoint. Errors are never
 * redirected (the target is what is being checked): they are shown as a page.
 * An id_token_hint must be an ID token this provider signed (with a key still
 * published); it may have expired, as the specification allows.
 */
export async function resolveLogoutRequest(
  raw: RawParameters,
  deps: { issuer: string; keys: SigningKeys; clients: ClientLookup },
): Promise<LogoutRequest> {
  const params = singleValues(raw, logoutParameters);
  const hint = params.get("id_token_hint");
  const hintedClientId = hint === undefined ? undefined : await audienceOfHint(hint, deps);
  const clientId = params.get("client_id");
  if (clientId !== undefined && hintedClientId !== undefined && clientId !== hintedClientId) {
    throw new OAuthError("invalid_request", "client_id does not match the audience of id_token_hint");
  }
  const resolvedId = clientId ?? hintedClientId;
  const client = resolvedId === undefined ? undefined : await deps.clients.find(resolvedId);
  if (resolvedId !== undefined && !client) throw new OAuthError("invalid_client", "unknown client");
  const postLogoutRedirectUri = params.get("post_logout_redirect_uri");
  if (postLogoutRedirectUri !== undefined) {
    if (!client) throw new OAuthError("invalid_request", "post_logout_redirect_uri needs client_id or id_token_hint");
    if (!client.postLogoutRedirectUris.includes(postLogoutRedirectUri)) {
      throw new OAuthError("invalid_request", "post_logout_redirect_uri is not registered for this client");
    }
  }
  const state = params.get("state");
  return {
    ...(client ? { client } : {}),
    ...(postLogoutRedirectUri !== undefined ? { postLogoutRedirectUri } : {}),
    ...(state !== undefined && postLogoutRedirectUri !== undefined ? { state } : {}),
  };
}

/** The client an ID token of ours was issued to; its signature is checked, its expiry is not. */
async function audienceOfHint(token: string, deps: { issuer: string; keys: SigningKeys }): Promise<string> {
  let payload: Record<string, unknown>;
  try {
    // jose parses the protected header before it checks the signature: a deeply nested one is refused first.
    if (!jwtNestingWithin(token)) throw new TypeError("nested too deep");
    const verified = await compactVerify(token, createLocalJWKSet(await deps.keys.jwks()), { algorithms: [...signingAlgs] });
    payload = JSON.parse(new TextDecoder().decode(verified.payload)) as Record<string, unknown>;
  } catch {
    throw new OAuthError("invalid_request", "id_token_hint is not an ID token issued by this provider");
  }
  if (payload.iss !== deps.issuer) throw new OAuthError("invalid_request", "id_token_hint was issued by another provider");
  const audience = typeof payload.azp === "string" ? payload.azp : Array.isArray(payload.aud) ? payload.aud[0] : payload.aud;
  if (typeof audience !== "string" || audience === "") throw new OAuthError("invalid_request", "id_token_hint names no client");
  return audience;
}

/**
 * Where the browser goes once signed out: the registered
 * post_logout_redirect_uri with the request's state, or nowhere (the
 * provider's own signed-out page).
 */
export function signedOutRedirect(request: LogoutRequest): string | undefined {
  if (!request.postLogoutRedirectUri) return undefined;
  const target = new URL(request.postLogoutRedirectUri);
  if (request.state) target.searchParams.append("state", request.state);
  return target.toString();
}

/**
 * The confirmation's CSRF token, bound to the session (an HMAC of the session
 * id's hash under the server key): a confirmation from any other page, or for
 * another session, ends nothing.
 */
export function logoutConfirmationToken(secretKey: Buffer, sessionId: string): string {
  return csrfToken(secretKey, logoutCsrfSubject(sessionId));
}

export function confirmsLogout(secretKey: Buffer, sessionId: string, presented: unknown): boolean {
  return csrfTokenMatches(secretKey, logoutCsrfSubject(sessionId), presented);
}

const logoutCsrfSubject = (sessionId: string) => `logout:${sha256Hex(sessionId)}`;
