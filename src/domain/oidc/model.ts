import type { AuthorizationDetail } from "./authorization-details.ts";

/** An end user of the provider. Secrets are held only as a password hash and a sealed TOTP secret. */
export interface OidcUserRow {
  id: string;
  login: string;
  passwordHash: string;
  totpSecretSealed: string | null;
  totpLastStep: number | null;
  name: string | null;
  /** The name in other languages and scripts (OIDC Core 5.2), in preference order; empty when there are none. */
  localizedNames: LocalizedName[];
  email: string | null;
  createdAt: number;
}

/** One language-tagged value of a claim, e.g. `{ tag: "ja-Kana-JP", value: "ミホン タロウ" }`. */
export interface LocalizedName {
  tag: string;
  value: string;
}

/** A signed-in browser session, known by the hash of the id in its cookie. */
export interface SessionRow {
  idHash: string;
  userId: string;
  authTime: number;
  acr: string;
  amr: string[];
  createdAt: number;
  expiresAt: number;
}

/** One authorization request on its way through the pages, bound to the browser that started it. */
export interface InteractionRow {
  idHash: string;
  browserHash: string;
  state: unknown;
  createdAt: number;
  expiresAt: number;
}

/** What a user granted a client: scopes and authorization_details, until revoked. */
export interface GrantRow {
  id: string;
  userId: string;
  clientId: string;
  scopes: string[];
  authorizationDetails: AuthorizationDetail[];
  createdAt: number;
  updatedAt: number;
  revokedAt: number | null;
}

export type TokenKind = "access" | "refresh";

/** An access or refresh token, known by its hash; `family` ties together every token descended from one code. */
export interface TokenRow {
  tokenHash: string;
  kind: TokenKind;
  family: string;
  clientId: string;
  userId: string;
  grantId: string;
  scopes: string[];
  authorizationDetails: AuthorizationDetail[];
  authTime: number;
  acr: string;
  amr: string[];
  /** The session's identifier for clients (ID token `sid`); null for tokens issued before it was kept. */
  sid: string | null;
  /** The request's claims_locales (OIDC Core 5.2), for userinfo; null or absent when it named none. */
  claimsLocales?: string[] | null;
  /**
   * The JWK SHA-256 thumbprint (RFC 7638) of the DPoP key the token is bound
   * to (RFC 9449 `cnf.jkt`); null for Bearer tokens and for the refresh tokens
   * of confidential clients, which their client authentication protects.
   */
  dpopJkt: string | null;
  createdAt: number;
  expiresAt: number;
  consumedAt: number | null;
  revokedAt: number | null;
}

/** Which tokens: one, every token descended from one code (family), of one grant, or of one client. */
export type TokenSelection = { tokenHash: string } | { family: string } | { grantId: string } | { clientId: string };

/** A public JWK as stored: its key members plus kid, alg and use. Never holds private members. */
export type StoredPublicJwk = Record<string, unknown>;

export interface SigningKeyRow {
  kid: string;
  /** Unique and increasing within its alg: the alg's key of the highest generation signs, unless it is retired. */
  generation: number;
  alg: string;
  publicJwk: StoredPublicJwk;
  /** The private JWK (JSON) sealed with the server key, associated data = kid. */
  privateJwkSealed: string;
  createdAt: number;
  activatedAt: number;
  retiredAt: number | null;
}
