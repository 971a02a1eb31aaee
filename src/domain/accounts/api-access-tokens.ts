import type { Clock } from "../clock.ts";
import { DomainError } from "../errors.ts";
import type { OidcClient } from "../oidc/client.ts";
import { orderedSecret, sha256Hex, storedKeyOf } from "../oidc/flow/secrets.ts";
import { OAuthError } from "../oidc/oauth-error.ts";
import { scopeList } from "./api-scopes.ts";
import type { ApiStatus } from "./model.ts";
import { VersionedLookups } from "./versioned-lookups.ts";

/** An access token of an account's OAuth client; only the hash of its value is kept. */
export interface ApiAccessTokenRow {
  tokenHash: string;
  clientId: string;
  accountId: string;
  scopes: string[];
  /** The DPoP key it is bound to (RFC 9449), or null for a Bearer token. */
  dpopJkt: string | null;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
}

/** A token and the API status of its account, in one read: what every call with it needs. */
export interface ApiAccessTokenWithAccount {
  token: ApiAccessTokenRow;
  apiStatus: ApiStatus;
}

/** What ApiAccessTokens needs from storage (src/storage/api-access-tokens-repository.ts). */
export interface ApiAccessTokenStore {
  insert(token: ApiAccessTokenRow): Promise<void>;
  findWithAccount(tokenHash: string): Promise<ApiAccessTokenWithAccount | undefined>;
  /** The API status of an account; undefined when there is no such account. */
  apiStatus(accountId: string): Promise<ApiStatus | undefined>;
  /** Revokes the token when it belongs to the client; false otherwise. */
  revoke(tokenHash: string, clientId: string, now: number): Promise<boolean>;
  /** The API auth version (see AccountStore.authVersion); revoking or deleting a token changes it too. */
  authVersion(): Promise<number | undefined>;
}

/** The client_credentials token response (RFC 6749 section 4.4.3): no refresh token, no ID token. */
export interface ClientCredentialsResponse {
  access_token: string;
  token_type: "Bearer" | "DPoP";
  expires_in: number;
  scope: string;
}

/** Who a call with an access token acts for, what it may call, and the key its proofs must be signed with. */
export interface OAuthCaller {
  accountId: string;
  clientId: string;
  scopes: readonly string[];
  dpopJkt: string | null;
}

/** Introspection of one of these tokens (RFC 7662 section 2.2). */
export type ApiTokenIntrospection =
  | { active: false }
  | { active: true; token_type: "Bearer" | "DPoP"; client_id: string; sub: string; scope: string; exp: number; iat: number; iss: string; cnf?: { jkt: string } };

/** Access token values begin so, which tells them from API tokens (shm_…) without a read. */
const valuePrefix = "shmat_";
/** After the prefix, an orderedSecret (51 characters), or a randomToken (43) as tokens were issued before. */
const valuePattern = /^shmat_(?:[A-Za-z0-9_-]{51}|[A-Za-z0-9_-]{43})$/;

/**
 * What a token is stored and looked up under. A token is written on every
 * client_credentials grant, as often as the OIDC access tokens, so it is
 * keyed as they are: storedKeyOf its orderedSecret, which begins with the
 * issue time, puts each new row at the end of the primary-key index rather
 * than on a random page of it. A token issued before (a randomToken after
 * the prefix) was stored under the SHA-256 of its whole value, and is
 * still found there until it expires.
 */
export function accessTokenKeyOf(value: string): string {
  const secret = value.slice(valuePrefix.length);
  return secret.length === 43 ? sha256Hex(value) : storedKeyOf(secret);
}

/**
 * The access tokens of the OAuth clients API accounts register (see
 * ApiOAuthClients): issued by the client_credentials grant, accepted by the
 * RPCs beside API tokens. A token acts for its client's account, under the
 * same rules as an API token: refused when revoked, expired, or its account's
 * API use is not active. Lookups are remembered under the API auth version,
 * as API tokens' are (Accounts), so a busy token costs a read of the version.
 */
export class ApiAccessTokens {
  /** Token lookups by hash, remembered under the auth version. */
  private readonly lookups = new VersionedLookups<ApiAccessTokenWithAccount>(
    () => this.store.authVersion(),
    (hash) => this.store.findWithAccount(hash),
  );

  constructor(
    private readonly store: ApiAccessTokenStore,
    private readonly settings: { issuer: string; accessTokenLifetimeSeconds: number },
    private readonly clock: Clock,
  ) {}

  /** Whether a presented value has the shape of these tokens (and so is not an API token). */
  static isAccessTokenValue(value: string): boolean {
    return valuePattern.test(value);
  }

  /**
   * RFC 6749 section 4.4: a token for the scopes asked (each one the client
   * was registered for), or all of them when none is asked, bound to the
   * request's DPoP key when it sent a proof.
   */
  async grant(client: OidcClient, params: ReadonlyMap<string, string>, dpopJkt: string | undefined): Promise<ClientCredentialsResponse> {
    if (client.accountId === undefined) throw new OAuthError("unauthorized_client", "client_credentials is for the clients of API accounts");
    const requested = params.get("scope");
    const scopes = requested === undefined ? client.allowedScopes : scopeList(requested);
    if (scopes.length === 0) throw new OAuthError("invalid_scope", "scope must name at least one scope");
    const extra = scopes.find((s) => !client.allowedScopes.includes(s));
    if (extra !== undefined) throw new OAuthError("invalid_scope", `this client is not registered for scope ${extra}`);
    const status = await this.store.apiStatus(client.accountId);
    if (status !== "active") {
      throw new OAuthError("unauthorized_client", status === "suspended" ? "API use is suspended for this account" : "API use has not been started for this account");
    }
    const now = this.clock();
    const value = `${valuePrefix}${orderedSecret(now)}`;
    const lifetime = this.settings.accessTokenLifetimeSeconds;
    await this.store.insert({
      tokenHash: accessTokenKeyOf(value),
      clientId: client.clientId,
      accountId: client.accountId,
      scopes: [...scopes],
      dpopJkt: dpopJkt ?? null,
      createdAt: now,
      expiresAt: now + lifetime * 1000,
      revokedAt: null,
    });
    return { access_token: value, token_type: dpopJkt === undefined ? "Bearer" : "DPoP", expires_in: lifetime, scope: scopes.join(" ") };
  }

  /** The caller a token acts for, read under the current auth version; refused like an API token otherwise. */
  async authenticate(value: string): Promise<OAuthCaller> {
    // A value no token can have is refused as an unknown one is, without a read.
    if (!valuePattern.test(value)) return this.admitted(undefined);
    return this.admitted(await this.lookups.lookup(accessTokenKeyOf(value)));
  }

  /** A caller from the lookup this instance remembers, with the auth version to confirm (see Caller); undefined when none would admit it. */
  rememberedCaller(value: string): { caller: OAuthCaller; version: number } | undefined {
    const remembered = this.lookups.remembered(accessTokenKeyOf(value));
    if (!remembered) return undefined;
    try {
      return { caller: this.admitted(remembered.found), version: remembered.version };
    } catch {
      return undefined;
    }
  }

  /** RFC 7009 for these tokens: the client's own token is revoked; anything else is ignored alike. */
  async revoke(client: OidcClient, value: string): Promise<void> {
    await this.store.revoke(accessTokenKeyOf(value), client.clientId, this.clock());
  }

  /** RFC 7662 for these tokens: a client sees only its own live tokens as active. */
  async introspect(client: OidcClient, value: string): Promise<ApiTokenIntrospection> {
    if (!valuePattern.test(value)) return { active: false };
    const found = await this.store.findWithAccount(accessTokenKeyOf(value));
    if (!found || found.token.clientId !== client.clientId) return { active: false };
    try {
      this.admitted(found);
    } catch {
      return { active: false };
    }
    const { token } = found;
    return {
      active: true,
      token_type: token.dpopJkt === null ? "Bearer" : "DPoP",
      client_id: token.clientId,
      sub: token.clientId,
      scope: token.scopes.join(" "),
      exp: Math.floor(token.expiresAt / 1000),
      iat: Math.floor(token.createdAt / 1000),
      iss: this.settings.issuer,
      ...(token.dpopJkt !== null ? { cnf: { jkt: token.dpopJkt } } : {}),
    };
  }

  private admitted(found: ApiAccessTokenWithAccount | undefined): OAuthCaller {
    if (!found || found.token.revokedAt !== null || found.token.expiresAt <= this.clock()) {
      throw new DomainError("token_invalid", "the access token is invalid, expired or revoked");
    }
    if (found.apiStatus === "not_started") throw new DomainError("api_use_not_started", "API use has not been started for this account");
    if (found.apiStatus === "suspended") throw new DomainError("api_use_suspended", "API use is suspended for this account");
    const { token } = found;
    return { accountId: token.accountId, clientId: token.clientId, scopes: token.scopes, dpopJkt: token.dpopJkt };
  }
}
