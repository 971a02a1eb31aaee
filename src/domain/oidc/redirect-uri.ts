import type { OidcClient } from "./client.ts";
import { OAuthError } from "./oauth-error.ts";

/**
 * A redirect URI as a browser will read it, or undefined when it is not an
 * absolute URL. Rules about its scheme or host read this, never the text:
 * `HTTPS://rp.example/cb` is https, and `https:rp.example/cb` names the host
 * rp.example, as the browser that follows it will see.
 */
export function parsedRedirectUri(value: string): URL | undefined {
  return URL.canParse(value) ? new URL(value) : undefined;
}

/** Whether a redirect URI is an https URL (parsed, see parsedRedirectUri). */
export function isHttpsRedirectUri(value: string): boolean {
  return parsedRedirectUri(value)?.protocol === "https:";
}

/** The redirect_uri sent, when it is one the client registered: compared character for character, never normalised. */
export function matchingRedirectUri(client: OidcClient, sent: string | undefined): string | undefined {
  return sent !== undefined && client.redirectUris.includes(sent) ? sent : undefined;
}

/**
 * The request's redirect_uri, which the authorization endpoint and PAR both
 * require to be registered for the client. Its errors are never redirected:
 * the target is what is being checked.
 */
export function requireRegisteredRedirectUri(client: OidcClient, sent: string | undefined): string {
  if (sent === undefined) throw new OAuthError("invalid_request", "redirect_uri is required");
  const matched = matchingRedirectUri(client, sent);
  if (matched === undefined) throw new OAuthError("invalid_request", "redirect_uri does not match a registered redirect URI of this client");
  return matched;
}

/** A client_id in the parameters must name the client that authenticated (PAR), when one is sent at all. */
export function requireSameClient(client: OidcClient, sentClientId: string | undefined): void {
  if (sentClientId !== undefined && sentClientId !== client.clientId) {
    throw new OAuthError("invalid_request", "client_id does not match the authenticated client");
  }
}
