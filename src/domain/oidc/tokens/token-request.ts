import { grantTypes, type GrantType, type OidcClient } from "../client.ts";
import { OAuthError } from "../oauth-error.ts";
import { singleValues, type RawParameters } from "../parameters.ts";

const tokenParameters = ["grant_type", "code", "redirect_uri", "code_verifier", "refresh_token", "scope"] as const;

const isGrantType = (value: string): value is GrantType => (grantTypes as readonly string[]).includes(value);

/**
 * A token endpoint request (RFC 6749 §4.1.3, §6): one grant_type the provider
 * offers and the client is registered for, and its parameters, each once.
 */
export function readTokenRequest(client: OidcClient, form: RawParameters): { grantType: GrantType; params: Map<string, string> } {
  const params = singleValues(form, tokenParameters);
  const grantType = params.get("grant_type");
  if (!grantType) throw new OAuthError("invalid_request", "grant_type is required");
  if (!isGrantType(grantType)) throw new OAuthError("unsupported_grant_type", `grant_type ${grantType} is not supported`);
  if (!client.grantTypes.includes(grantType)) {
    throw new OAuthError("unauthorized_client", `this client is not registered for grant_type ${grantType}`);
  }
  return { grantType, params };
}

/** The `token` parameter of a revocation (RFC 7009 §2.1) or introspection (RFC 7662 §2.1) request. */
export function readPresentedToken(form: RawParameters): string {
  const value = singleValues(form, ["token"]).get("token");
  if (value === undefined) throw new OAuthError("invalid_request", "token is required");
  return value;
}
