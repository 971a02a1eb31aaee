import type { JSONWebKeySet } from "jose";
import type { SigningAlg } from "./keys/signing-algorithms.ts";

/** How a client proves its identity at the PAR and token endpoints. */
export type ClientAuthMethod = "client_secret_basic" | "client_secret_post" | "private_key_jwt" | "none";

export const clientAuthMethods: readonly ClientAuthMethod[] = ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"];

/** The method of client metadata that names none (RFC 7591 section 2). */
export const defaultClientAuthMethod: ClientAuthMethod = "client_secret_basic";

/** Whether a token_endpoint_auth_method authenticates with a client secret, whose hash the registration keeps. */
export function usesClientSecret(method: unknown): boolean {
  return method === "client_secret_basic" || method === "client_secret_post";
}

/**
 * The token endpoint grants the provider offers (RFC 7591 grant_types
 * values). client_credentials is for the clients API accounts register for
 * the certificate API only (accountId); relying parties use the first two.
 */
export type GrantType = "authorization_code" | "refresh_token" | "client_credentials";
export const grantTypes: readonly GrantType[] = ["authorization_code", "refresh_token", "client_credentials"];
export const relyingPartyGrantTypes = ["authorization_code", "refresh_token"] as const;

/** A named set of rules a client is held to beyond its metadata: "fapi2" is the FAPI 2.0 Security Profile (fapi2-profile.ts). */
export type ClientProfile = "fapi2";
export const clientProfiles: readonly ClientProfile[] = ["fapi2"];

/** A registered relying party. */
export interface OidcClient {
  clientId: string;
  name: string;
  /** Confidential clients authenticate; public clients ("none") rely on PKCE alone. */
  type: "confidential" | "public";
  tokenEndpointAuthMethod: ClientAuthMethod;
  /** SHA-256 (hex) of the client secret, for the client_secret_* methods; the secret itself is never stored. */
  secretHash: string | null;
  /** The client's public keys, for private_key_jwt and request objects. */
  jwks: JSONWebKeySet | null;
  /** Where its public keys are fetched from instead (never with `jwks`); read through ClientKeys (client-keys.ts). */
  jwksUri?: string | undefined;
  /** Matched exactly, character for character. */
  redirectUris: string[];
  allowedScopes: string[];
  allowedAuthorizationDetailsTypes: string[];
  requirePushedAuthorizationRequests: boolean;
  /** Grants it may use at the token endpoint; without refresh_token it never gets a refresh token. */
  grantTypes: GrantType[];
  /** Where RP-initiated logout may return the browser; matched exactly, like redirectUris. */
  postLogoutRedirectUris: string[];
  /** How its ID tokens are signed (OIDC Dynamic Registration id_token_signed_response_alg). */
  idTokenSignedResponseAlg: SigningAlg;
  /** RFC 9449 section 5.2: every token request must carry a DPoP proof, so its access tokens are always DPoP-bound. */
  dpopBoundAccessTokens: boolean;
  /** Back-Channel Logout 1.0: where logout tokens are POSTed when a session it was issued codes in ends. */
  backchannelLogoutUri?: string | undefined;
  /** Back-Channel Logout 1.0: its logout tokens must carry `sid` (ours always do: docs/backchannel-logout.md). */
  backchannelLogoutSessionRequired?: boolean | undefined;
  /** The API account a client of the certificate API acts for (client_credentials); absent for relying parties. */
  accountId?: string;
  /** The profile whose rules apply to it (docs/fapi2.md); absent or null for a client held to its metadata alone. */
  profile?: ClientProfile | null | undefined;
  /** RFC 9101 section 10.5: its authorization requests must come as a signed request object (`request`). */
  requireSignedRequestObject?: boolean | undefined;
  createdAt: number;
}
