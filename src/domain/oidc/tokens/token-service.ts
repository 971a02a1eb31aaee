import type { OneTimeStore } from "../../single-use.ts";
import type { TokenRow } from "../model.ts";
import type { GrantStore, OidcUserStore, TokenStore } from "../stores.ts";
import type { Clock } from "../../clock.ts";
import type { AuthorizationDetail } from "../authorization-details.ts";
import type { OidcClient } from "../client.ts";
import { orderedSecret, storedKeyOf } from "../flow/secrets.ts";
import { requestCovered } from "../grants/coverage.ts";
import { signIdToken } from "../keys/id-token.ts";
import type { SigningKeys } from "../keys/signing-keys.ts";
import type { RawParameters } from "../parameters.ts";
import { pkceMatches } from "./pkce.ts";
import { readTokenRequest } from "./token-request.ts";
import { OAuthError } from "../oauth-error.ts";
import { nameClaims } from "../name-claims.ts";
import { keyMismatch } from "../dpop/jkt.ts";
import { invalidProof } from "../dpop/proof.ts";
import type { ApiAccessTokens, ClientCredentialsResponse } from "../../accounts/api-access-tokens.ts";
import { rotatesRefreshTokens } from "../fapi2-profile.ts";

/** One-time record kind marking a family whose code or refresh token was presented again after use. */
export const replayedFamilyKind = "replayed_family";
/** Only needed while a first redemption may still be running; kept generously. */
const replayMarkLifetimeMs = 10 * 60 * 1000;

export interface TokenSettings {
  issuer: string;
  accessTokenLifetimeSeconds: number;
  refreshTokenLifetimeSeconds: number;
  idTokenLifetimeSeconds: number;
}

export interface TokenResponse {
  access_token: string;
  token_type: "Bearer" | "DPoP";
  expires_in: number;
  scope: string;
  id_token?: string;
  refresh_token?: string;
  grant_id: string;
  authorization_details?: AuthorizationDetail[];
}

/** What a token stands for; the same for the tokens of one code and its refreshes. */
type Authorization = Pick<TokenRow, "family" | "clientId" | "userId" | "grantId" | "scopes" | "authorizationDetails" | "authTime" | "acr" | "amr" | "sid" | "claimsLocales"> & {
  nonce: string | null;
};

/**
 * The token endpoint's grants. Codes and rotated refresh tokens are used once;
 * a second use is taken as theft and revokes every token of the family (RFC
 * 6749 §4.1.2, OAuth 2.0 Security BCP §4.14).
 */
export class TokenService {
  constructor(
    private readonly codes: OneTimeStore,
    private readonly tokens: TokenStore,
    /** Grants, and the users whose names ID tokens may carry (one repository holds both). */
    private readonly grants: Pick<GrantStore, "findGrant"> & Pick<OidcUserStore, "findUser">,
    private readonly keys: SigningKeys,
    private readonly settings: TokenSettings,
    private readonly clock: Clock,
    /** `jpki_verified`: whether the user has a current, good JPKI certificate linked (JPKI sign-in). */
    private readonly jpkiVerified: (userId: string) => Promise<boolean> = async () => false,
    /** client_credentials, for the clients of API accounts (their tokens reach the certificate API, not userinfo). */
    private readonly clientCredentials?: Pick<ApiAccessTokens, "grant">,
  ) {}

  /**
   * The token endpoint: the grant the request names, for a client registered
   * for it. `dpopJkt` is the thumbprint of the key of the request's valid
   * DPoP proof: the access token is bound to it (RFC 9449 section 5).
   */
  grant(client: OidcClient, form: RawParameters, dpopJkt?: string): Promise<TokenResponse | ClientCredentialsResponse> {
    const { grantType, params } = readTokenRequest(client, form);
    if (client.dpopBoundAccessTokens && dpopJkt === undefined) {
      throw invalidProof("this client must send a DPoP proof with every token request");
    }
    if (grantType === "client_credentials") {
      if (!this.clientCredentials) throw new OAuthError("unsupported_grant_type", "grant_type client_credentials is not supported");
      return this.clientCredentials.grant(client, params, dpopJkt);
    }
    return grantType === "authorization_code" ? this.exchangeCode(client, params, dpopJkt) : this.refresh(client, params, dpopJkt);
  }

  async exchangeCode(client: OidcClient, params: Map<string, string>, dpopJkt?: string): Promise<TokenResponse> {
    const code = params.get("code");
    if (!code) throw new OAuthError("invalid_request", "code is required");
    const redirectUri = params.get("redirect_uri");
    if (!redirectUri) throw new OAuthError("invalid_request", "redirect_uri is required");
    const family = storedKeyOf(code);
    const now = this.clock();
    // A code bound to a key is refused without being used up, so a stolen one neither works nor spoils the real one.
    const unused = await this.codes.find("authorization_code", family);
    if (unused && unused.consumedAt === null && unused.owner === client.clientId) {
      requireBinding(unused.payload.dpopJkt, dpopJkt, "authorization code");
    }
    const result = await this.codes.consume("authorization_code", family, now, client.clientId);
    if (!result.ok) {
      if (result.reason === "consumed") {
        await this.revokeReplayed(family, client, now);
        throw new OAuthError("invalid_grant", "the authorization code was already used; the tokens issued for it are revoked");
      }
      throw new OAuthError("invalid_grant", result.reason === "expired" ? "the authorization code has expired" : "the authorization code is not valid");
    }
    const payload = result.record.payload;
    requireBinding(payload.dpopJkt, dpopJkt, "authorization code");
    if (payload.redirectUri !== redirectUri) throw new OAuthError("invalid_grant", "redirect_uri does not match the authorization request");
    const verifier = params.get("code_verifier");
    if (payload.codeChallenge) {
      if (!verifier) throw new OAuthError("invalid_grant", "code_verifier is required for this code");
      if (!pkceMatches(verifier, payload.codeChallenge)) throw new OAuthError("invalid_grant", "code_verifier does not match the code_challenge");
    } else if (verifier !== undefined) {
      throw new OAuthError("invalid_grant", "code_verifier sent for a code issued without code_challenge");
    } else if (client.type === "public") {
      throw new OAuthError("invalid_grant", "public clients must use PKCE");
    }
    const grant = await this.grants.findGrant(payload.grantId);
    if (!grant) throw new OAuthError("invalid_grant", "the grant behind this code was revoked");
    if (!requestCovered(grant, payload)) throw new OAuthError("invalid_grant", "the grant behind this code was since replaced with fewer rights");
    const response = await this.issue(
      client,
      {
        family,
        clientId: client.clientId,
        userId: payload.userId,
        grantId: payload.grantId,
        scopes: payload.scopes,
        authorizationDetails: payload.authorizationDetails,
        authTime: payload.authTime,
        acr: payload.acr,
        amr: payload.amr,
        sid: payload.sid ?? null,
        claimsLocales: payload.claimsLocales ?? null,
        nonce: payload.nonce,
      },
      now,
      dpopJkt,
    );
    await this.failIfReplayedMeanwhile(family, now, "the authorization code was used twice; the tokens issued for it are revoked");
    return response;
  }

  async refresh(client: OidcClient, params: Map<string, string>, dpopJkt?: string): Promise<TokenResponse> {
    const presented = params.get("refresh_token");
    if (!presented) throw new OAuthError("invalid_request", "refresh_token is required");
    const hash = storedKeyOf(presented);
    const now = this.clock();
    const requested = params.get("scope");
    if (!rotatesRefreshTokens(client)) return this.refreshWithoutRotation(client, hash, requested, now, dpopJkt);
    if (requested !== undefined) {
      // Checked before the token is used up, so that a refused request leaves it valid (a retry is not a replay).
      const current = await this.tokens.find(hash);
      const live = current?.kind === "refresh" && current.clientId === client.clientId && current.consumedAt === null && current.revokedAt === null;
      if (live) requireBinding(current.dpopJkt, dpopJkt, "refresh token");
      refreshScopes(requested, live ? current.scopes : undefined);
    }
    // Only a token bound to this proof's key, or to none, is used up: one bound to another key stays valid.
    const consumed = await this.tokens.consumeRefresh(hash, client.clientId, now, dpopJkt ?? null);
    if (!consumed) {
      const known = await this.tokens.find(hash);
      if (known && known.kind === "refresh" && known.clientId === client.clientId) {
        if (known.consumedAt !== null) {
          await this.revokeReplayed(known.family, client, now);
          throw new OAuthError("invalid_grant", "the refresh token was already used; its whole family is revoked");
        }
        if (known.revokedAt === null && known.expiresAt > now) requireBinding(known.dpopJkt, dpopJkt, "refresh token");
      }
      throw new OAuthError("invalid_grant", "the refresh token is not valid");
    }
    const { token: used, grant } = consumed;
    if (!grant) throw new OAuthError("invalid_grant", "the grant behind this refresh token was revoked");
    // A grant replaced with fewer rights ends the tokens it no longer covers (Grant Management "replace").
    if (!requestCovered(grant, used)) {
      throw new OAuthError("invalid_grant", "the grant behind this refresh token was replaced with fewer rights; authorize again");
    }
    const scopes = requested === undefined ? used.scopes : refreshScopes(requested, used.scopes);
    // RFC 6749 §6: the new refresh token keeps the scope of the one presented; only the access token is narrowed.
    const response = await this.issue(client, { ...used, scopes, nonce: null }, now, dpopJkt, used.scopes);
    await this.failIfReplayedMeanwhile(used.family, now, "the refresh token was used twice; its whole family is revoked");
    return response;
  }

  /**
   * A refresh that leaves the refresh token as it is (the fapi2 profile,
   * fapi2-profile.ts): the token stays valid until it expires or is revoked,
   * so a client that never received an answer simply sends it again. Only an
   * access token (and an ID token) is issued; no refresh_token is returned,
   * which tells the client to keep the one it has (RFC 6749 section 5.1).
   */
  private async refreshWithoutRotation(
    client: OidcClient,
    hash: string,
    requested: string | undefined,
    now: number,
    dpopJkt: string | undefined,
  ): Promise<TokenResponse> {
    const found = await this.tokens.findWithGrant(hash);
    const token = found?.token;
    const live = token?.kind === "refresh" && token.clientId === client.clientId && token.consumedAt === null && token.revokedAt === null && token.expiresAt > now;
    if (!found || !token || !live) throw new OAuthError("invalid_grant", "the refresh token is not valid");
    requireBinding(token.dpopJkt, dpopJkt, "refresh token");
    if (!found.grant) throw new OAuthError("invalid_grant", "the grant behind this refresh token was revoked");
    if (!requestCovered(found.grant, token)) {
      throw new OAuthError("invalid_grant", "the grant behind this refresh token was replaced with fewer rights; authorize again");
    }
    const scopes = requested === undefined ? token.scopes : refreshScopes(requested, token.scopes);
    return this.issue(client, { ...token, scopes, nonce: null }, now, dpopJkt, []);
  }

  /**
   * Revokes a family after a replay. The mark comes first: a use that won the
   * race and is still storing its tokens finds the mark once they are stored
   * (failIfReplayedMeanwhile) and revokes them, which this revocation, running
   * before they exist, cannot do.
   */
  private async revokeReplayed(family: string, client: OidcClient, now: number): Promise<void> {
    await this.codes.issueIfAbsent({ kind: replayedFamilyKind, keyHash: family, owner: client.clientId, payload: null, now, ttlMs: replayMarkLifetimeMs });
    await this.tokens.revoke({ family }, now);
  }

  private async failIfReplayedMeanwhile(family: string, now: number, description: string): Promise<void> {
    if (!(await this.codes.find(replayedFamilyKind, family))) return;
    await this.tokens.revoke({ family }, now);
    throw new OAuthError("invalid_grant", description);
  }

  /**
   * Issues the tokens. With a DPoP key, the access token is bound to it, and
   * so is a public client's refresh token (RFC 9449 section 5: a confidential
   * client's refresh token is protected by its authentication, so each of its
   * refreshes may bind the new access token to a new key).
   */
  private async issue(
    client: OidcClient,
    a: Authorization,
    now: number,
    dpopJkt: string | undefined,
    refreshScopes: string[] = a.scopes,
  ): Promise<TokenResponse> {
    const accessToken = orderedSecret(now);
    const base = {
      family: a.family,
      clientId: a.clientId,
      userId: a.userId,
      grantId: a.grantId,
      scopes: a.scopes,
      authorizationDetails: a.authorizationDetails,
      authTime: a.authTime,
      acr: a.acr,
      amr: a.amr,
      sid: a.sid,
      claimsLocales: a.claimsLocales ?? null,
      createdAt: now,
      consumedAt: null,
      revokedAt: null,
    } satisfies Partial<TokenRow>;
    const issued: TokenRow[] = [
      {
        ...base,
        tokenHash: storedKeyOf(accessToken),
        kind: "access",
        dpopJkt: dpopJkt ?? null,
        expiresAt: now + this.settings.accessTokenLifetimeSeconds * 1000,
      },
    ];
    const response: TokenResponse = {
      access_token: accessToken,
      token_type: dpopJkt === undefined ? "Bearer" : "DPoP",
      expires_in: this.settings.accessTokenLifetimeSeconds,
      scope: a.scopes.join(" "),
      grant_id: a.grantId,
      ...(a.authorizationDetails.length ? { authorization_details: a.authorizationDetails } : {}),
    };
    // offline_access reached the grant only through a consent page the user saw (docs/oidc-decisions.md).
    if (refreshScopes.includes("offline_access") && client.grantTypes.includes("refresh_token")) {
      const refreshToken = orderedSecret(now);
      issued.push({
        ...base,
        scopes: refreshScopes,
        tokenHash: storedKeyOf(refreshToken),
        kind: "refresh",
        dpopJkt: client.type === "public" ? (dpopJkt ?? null) : null,
        expiresAt: now + this.settings.refreshTokenLifetimeSeconds * 1000,
      });
      response.refresh_token = refreshToken;
    }
    await this.tokens.insert(issued);
    if (a.scopes.includes("openid")) {
      const iat = Math.floor(now / 1000);
      const [names, jpkiVerified] = await Promise.all([this.idTokenNames(a), this.jpkiVerified(a.userId)]);
      response.id_token = await signIdToken(this.keys, {
        iss: this.settings.issuer,
        sub: a.userId,
        aud: a.clientId,
        azp: a.clientId,
        iat,
        exp: iat + this.settings.idTokenLifetimeSeconds,
        auth_time: Math.floor(a.authTime / 1000),
        ...(a.nonce ? { nonce: a.nonce } : {}),
        acr: a.acr,
        amr: a.amr,
        sid: a.sid ?? undefined,
        ...names,
        jpki_verified: jpkiVerified,
      }, { alg: client.idTokenSignedResponseAlg, accessToken });
    }
    return response;
  }

  /**
   * Name claims in the ID token only when the request named claims_locales
   * and was granted profile: the client asked for names in its languages, and
   * gets them without a userinfo call. Otherwise names come from userinfo
   * alone (OIDC Core 5.4), as before.
   */
  private async idTokenNames(a: Authorization): Promise<Record<string, string | undefined>> {
    if (!a.claimsLocales || a.claimsLocales.length === 0 || !a.scopes.includes("profile")) return {};
    const user = await this.grants.findUser(a.userId);
    return user ? nameClaims(user, a.claimsLocales) : {};
  }
}

/** A code or refresh token bound to a DPoP key needs a proof of that key (RFC 9449 sections 5 and 10). */
function requireBinding(bound: string | null | undefined, presented: string | undefined, what: string): void {
  if (bound !== undefined && bound !== null && bound !== presented) throw keyMismatch(what);
}

/**
 * The scopes a refresh asks for: a non-empty subset of what the refresh token
 * holds (invalid_scope otherwise). Without `held`, only emptiness is checked.
 */
function refreshScopes(requested: string, held: readonly string[] | undefined): string[] {
  const scopes = [...new Set(requested.split(" ").filter(Boolean))];
  if (scopes.length === 0) throw new OAuthError("invalid_scope", "scope must name at least one scope");
  const extra = held && scopes.find((s) => !held.includes(s));
  if (extra) throw new OAuthError("invalid_scope", `scope ${extra} was not granted`);
  return scopes;
}
