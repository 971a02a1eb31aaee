import type { OneTimeStore } from "../../single-use.ts";
import type { TokenRow } from "../model.ts";
import type { GrantStore, TokenStore } from "../stores.ts";
import type { Clock } from "../../clock.ts";
import type { AuthorizationDetail } from "../authorization-details.ts";
import type { OidcClient } from "../client.ts";
import type { AuthorizationCodePayload } from "../flow/authorization-flow.ts";
import { randomToken, sha256Hex } from "../flow/secrets.ts";
import { requestCovered } from "../grants/coverage.ts";
import { signIdToken } from "../keys/id-token.ts";
import type { SigningKeys } from "../keys/signing-keys.ts";
import type { RawParameters } from "../parameters.ts";
import { pkceMatches } from "./pkce.ts";
import { readTokenRequest } from "./token-request.ts";
import { OAuthError } from "../oauth-error.ts";

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
  token_type: "Bearer";
  expires_in: number;
  scope: string;
  id_token?: string;
  refresh_token?: string;
  grant_id: string;
  authorization_details?: AuthorizationDetail[];
}

/** What a token stands for; the same for the tokens of one code and its refreshes. */
type Authorization = Pick<TokenRow, "family" | "clientId" | "userId" | "grantId" | "scopes" | "authorizationDetails" | "authTime" | "acr" | "amr" | "sid"> & {
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
    private readonly grants: Pick<GrantStore, "findGrant">,
    private readonly keys: SigningKeys,
    private readonly settings: TokenSettings,
    private readonly clock: Clock,
    /** `jpki_verified`: whether the user has a current, good JPKI certificate linked (JPKI sign-in). */
    private readonly jpkiVerified: (userId: string) => Promise<boolean> = async () => false,
  ) {}

  /** The token endpoint: the grant the request names, for a client registered for it. */
  grant(client: OidcClient, form: RawParameters): Promise<TokenResponse> {
    const { grantType, params } = readTokenRequest(client, form);
    return grantType === "authorization_code" ? this.exchangeCode(client, params) : this.refresh(client, params);
  }

  async exchangeCode(client: OidcClient, params: Map<string, string>): Promise<TokenResponse> {
    const code = params.get("code");
    if (!code) throw new OAuthError("invalid_request", "code is required");
    const redirectUri = params.get("redirect_uri");
    if (!redirectUri) throw new OAuthError("invalid_request", "redirect_uri is required");
    const family = sha256Hex(code);
    const now = this.clock();
    const result = await this.codes.consume("authorization_code", family, now, client.clientId);
    if (!result.ok) {
      if (result.reason === "consumed") {
        await this.revokeReplayed(family, client, now);
        throw new OAuthError("invalid_grant", "the authorization code was already used; the tokens issued for it are revoked");
      }
      throw new OAuthError("invalid_grant", result.reason === "expired" ? "the authorization code has expired" : "the authorization code is not valid");
    }
    const payload = result.record.payload as AuthorizationCodePayload;
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
        nonce: payload.nonce,
      },
      now,
    );
    await this.failIfReplayedMeanwhile(family, now, "the authorization code was used twice; the tokens issued for it are revoked");
    return response;
  }

  async refresh(client: OidcClient, params: Map<string, string>): Promise<TokenResponse> {
    const presented = params.get("refresh_token");
    if (!presented) throw new OAuthError("invalid_request", "refresh_token is required");
    const hash = sha256Hex(presented);
    const now = this.clock();
    const requested = params.get("scope");
    if (requested !== undefined) {
      // Checked before the token is used up, so that a refused request leaves it valid (a retry is not a replay).
      const current = await this.tokens.find(hash);
      const live = current?.kind === "refresh" && current.clientId === client.clientId && current.consumedAt === null && current.revokedAt === null;
      refreshScopes(requested, live ? current.scopes : undefined);
    }
    const used = await this.tokens.consumeRefresh(hash, client.clientId, now);
    if (!used) {
      const known = await this.tokens.find(hash);
      if (known && known.kind === "refresh" && known.clientId === client.clientId && known.consumedAt !== null) {
        await this.revokeReplayed(known.family, client, now);
        throw new OAuthError("invalid_grant", "the refresh token was already used; its whole family is revoked");
      }
      throw new OAuthError("invalid_grant", "the refresh token is not valid");
    }
    const grant = await this.grants.findGrant(used.grantId);
    if (!grant) throw new OAuthError("invalid_grant", "the grant behind this refresh token was revoked");
    // A grant replaced with fewer rights ends the tokens it no longer covers (Grant Management "replace").
    if (!requestCovered(grant, used)) {
      throw new OAuthError("invalid_grant", "the grant behind this refresh token was replaced with fewer rights; authorize again");
    }
    const scopes = requested === undefined ? used.scopes : refreshScopes(requested, used.scopes);
    // RFC 6749 §6: the new refresh token keeps the scope of the one presented; only the access token is narrowed.
    const response = await this.issue(client, { ...used, scopes, nonce: null }, now, used.scopes);
    await this.failIfReplayedMeanwhile(used.family, now, "the refresh token was used twice; its whole family is revoked");
    return response;
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

  private async issue(client: OidcClient, a: Authorization, now: number, refreshScopes: string[] = a.scopes): Promise<TokenResponse> {
    const accessToken = randomToken();
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
      createdAt: now,
      consumedAt: null,
      revokedAt: null,
    } satisfies Partial<TokenRow>;
    await this.tokens.insert({
      ...base,
      tokenHash: sha256Hex(accessToken),
      kind: "access",
      expiresAt: now + this.settings.accessTokenLifetimeSeconds * 1000,
    });
    const response: TokenResponse = {
      access_token: accessToken,
      token_type: "Bearer",
      expires_in: this.settings.accessTokenLifetimeSeconds,
      scope: a.scopes.join(" "),
      grant_id: a.grantId,
      ...(a.authorizationDetails.length ? { authorization_details: a.authorizationDetails } : {}),
    };
    // offline_access reached the grant only through a consent page the user saw (docs/oidc-decisions.md).
    if (refreshScopes.includes("offline_access") && client.grantTypes.includes("refresh_token")) {
      const refreshToken = randomToken();
      await this.tokens.insert({
        ...base,
        scopes: refreshScopes,
        tokenHash: sha256Hex(refreshToken),
        kind: "refresh",
        expiresAt: now + this.settings.refreshTokenLifetimeSeconds * 1000,
      });
      response.refresh_token = refreshToken;
    }
    if (a.scopes.includes("openid")) {
      const iat = Math.floor(now / 1000);
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
        jpki_verified: await this.jpkiVerified(a.userId),
      }, { accessToken });
    }
    return response;
  }
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
