import type { JSONWebKeySet } from "jose";

/** How a client proves its identity at the PAR and token endpoints. */
export type ClientAuthMethod = "client_secret_basic" | "client_secret_post" | "private_key_jwt" | "none";

export const clientAuthMethods: readonly ClientAuthMethod[] = ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"];

/** A registered relying party. */
export interface OidcClient {
  clientId: string;
  name: string;
  /** Confidential clients authenticate; public clients ("none") rely on PKCE alone. */
  type: "confidential" | "public";
  tokenEndpointAuthMethod: ClientAuthMethod;
  /** SHA-256 (hex) of the client secret, for the client_secret_* methods; the secret itself is never stored. */
  secretHash: string | null;
  /** The client's public keys, for private_key_jwt. */
  jwks: JSONWebKeySet | null;
  /** Matched exactly, character for character. */
  redirectUris: string[];
  allowedScopes: string[];
  allowedAuthorizationDetailsTypes: string[];
  requirePushedAuthorizationRequests: boolean;
  createdAt: number;
}
