import type { OidcUserRow } from "./model.ts";
import { nameClaims } from "./name-claims.ts";
import { OAuthError } from "./oauth-error.ts";

/** What the UserInfo response depends on in the access token that asked for it. */
export interface UserinfoToken {
  scopes: readonly string[];
  dpopJkt: string | null;
  authTime: number;
  acr: string;
  amr: readonly string[];
  sid: string | null;
  claimsLocales?: readonly string[] | null;
}

/** OIDC Core 5.3.3: a token without the openid scope may not read UserInfo (403 insufficient_scope). */
export function requireOpenidScope(token: Pick<UserinfoToken, "scopes" | "dpopJkt">): void {
  if (token.scopes.includes("openid")) return;
  throw new OAuthError("insufficient_scope", "the access token was not issued with the openid scope", {
    status: 403,
    wwwAuthenticate: `${token.dpopJkt === null ? "Bearer" : "DPoP"} realm="shomei", error="insufficient_scope", scope="openid"`,
  });
}

/**
 * OIDC Core 5.3: claims of the token's user, by granted scope (profile: name;
 * email: email), and always the authentication the token stems from (`acr`,
 * `amr`, `auth_time`, `sid`), as in its ID token, and `jpki_verified`. The
 * name follows the request's claims_locales (see nameClaims).
 */
export function userinfoClaims(
  token: UserinfoToken,
  user: Pick<OidcUserRow, "id" | "login" | "email" | "name" | "localizedNames">,
  /** As it is now, not as it was when the token was issued: a revoked certificate shows at once. */
  jpkiVerified: boolean,
): Record<string, unknown> {
  return {
    sub: user.id,
    auth_time: Math.floor(token.authTime / 1000),
    acr: token.acr,
    amr: token.amr,
    ...(token.sid !== null ? { sid: token.sid } : {}),
    jpki_verified: jpkiVerified,
    ...(token.scopes.includes("profile") ? { ...nameClaims(user, token.claimsLocales), preferred_username: user.login } : {}),
    ...(token.scopes.includes("email") && user.email ? { email: user.email, email_verified: false } : {}),
  };
}
