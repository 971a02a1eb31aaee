/**
 * Builds the redirect back to the client: the response parameters added to the
 * registered redirect_uri's own query (RFC 6749 §4.1.2), plus `iss`
 * (RFC 9207) so the client can tell which server answered.
 */
export function redirectTo(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) url.searchParams.append(name, value);
  }
  return url.toString();
}

export function errorRedirect(
  redirectUri: string,
  issuer: string,
  error: string,
  description: string,
  state: string | undefined,
): string {
  return redirectTo(redirectUri, { error, error_description: description, state, iss: issuer });
}
