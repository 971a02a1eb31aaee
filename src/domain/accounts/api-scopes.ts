/**
 * The scopes of an OAuth access token to the certificate API: each names a
 * group of RPCs (the mapping is in src/rpc/routes.ts, the table in
 * docs/reference/api-oauth.md). A method no scope names (the OAuth client
 * registry itself) answers API tokens only, so a leaked access token can
 * never mint more credentials.
 */
export const apiScopes = ["certificate.status", "verify", "events", "webhooks", "mock"] as const;

export type ApiScope = (typeof apiScopes)[number];

export function isApiScope(value: string): value is ApiScope {
  return (apiScopes as readonly string[]).includes(value);
}

/** A space-separated scope value as a list without repeats (RFC 6749 section 3.3). */
export function scopeList(value: string): string[] {
  return [...new Set(value.split(" ").filter(Boolean))];
}
