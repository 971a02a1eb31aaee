import type { AccountRow, AccountStore, ApiStatus, ApiTokenRow, TokenWithAccount } from "./model.ts";
import type { Caller } from "./caller.ts";
import type { Clock } from "../clock.ts";
import { DomainError } from "../errors.ts";
import { newId } from "../ids.ts";
import { apiTokenMatches, apiTokenPrefix, generateApiToken, isApiTokenPrefix } from "./api-token.ts";
import { VersionedLookups } from "./versioned-lookups.ts";

export type { AccountRow, ApiStatus, ApiTokenRow };

/** Token listings never carry the hash. */
export type ApiTokenSummary = Omit<ApiTokenRow, "secretHash">;

const tokenTouchIntervalMs = 60_000;
const accountNamePattern = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/** API accounts (tenants) and their tokens. */
export class Accounts {
  /**
   * Token lookups by prefix under the current auth version: the one
   * remembered while the version holds, read again otherwise. So a revoked
   * token is refused on the very next call on every instance, and a busy
   * token costs a read of the version instead of the token and its account.
   */
  private readonly lookups = new VersionedLookups<TokenWithAccount>(
    () => this.repository.authVersion(),
    (prefix) => this.repository.findTokenWithAccount(prefix),
  );

  constructor(
    private readonly repository: AccountStore,
    private readonly clock: Clock,
  ) {}

  async create(name: string, apiStatus: ApiStatus = "not_started"): Promise<AccountRow> {
    if (!accountNamePattern.test(name)) {
      throw new DomainError("invalid_field", "an account name is 1–63 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit", "name");
    }
    if (await this.repository.findAccountByName(name)) {
      throw new DomainError("account_exists", `an account named "${name}" already exists`);
    }
    const now = this.clock();
    const account: AccountRow = { id: newId(), name, apiStatus, createdAt: now, updatedAt: now };
    await this.repository.insertAccount(account);
    return account;
  }

  async get(name: string): Promise<AccountRow> {
    const account = await this.repository.findAccountByName(name);
    if (!account) throw new DomainError("account_not_found", `no account named "${name}"`);
    return account;
  }

  list(): Promise<AccountRow[]> {
    return this.repository.listAccounts();
  }

  async setApiStatus(name: string, status: ApiStatus): Promise<AccountRow> {
    const account = await this.get(name);
    const now = this.clock();
    this.lookups.clear();
    await this.repository.setApiStatus(account.id, status, now);
    return { ...account, apiStatus: status, updatedAt: now };
  }

  /** Creates a token; the returned `token` is the only time the secret exists outside the caller. */
  async createToken(accountName: string, tokenName: string): Promise<{ token: string; summary: ApiTokenSummary }> {
    const account = await this.get(accountName);
    const generated = generateApiToken();
    const row: ApiTokenRow = {
      id: newId(),
      accountId: account.id,
      prefix: generated.prefix,
      secretHash: generated.secretHash,
      name: tokenName,
      createdAt: this.clock(),
      lastUsedAt: null,
      revokedAt: null,
    };
    await this.repository.insertToken(row);
    return { token: generated.token, summary: summarize(row) };
  }

  async listTokens(accountName: string): Promise<ApiTokenSummary[]> {
    const account = await this.get(accountName);
    return (await this.repository.listTokens(account.id)).map(summarize);
  }

  async revokeToken(prefix: string): Promise<void> {
    if (!isApiTokenPrefix(prefix)) throw new DomainError("invalid_field", `"${prefix}" is not a token prefix (shm_ and 12 hex digits)`, "prefix");
    this.lookups.forget(prefix);
    if (!(await this.repository.revokeToken(prefix, this.clock()))) {
      throw new DomainError("token_invalid", `no active token with prefix ${prefix}`);
    }
  }

  /**
   * The account a bearer token acts for. Unknown and revoked tokens fail alike;
   * an account whose API use is not active fails with its own reason, since the
   * caller holds a valid credential and needs to know what to do next.
   */
  async authenticate(token: string): Promise<AccountRow> {
    const prefix = apiTokenPrefix(token);
    const found = prefix ? await this.lookups.lookup(prefix) : undefined;
    const account = admitted(token, found);
    await this.repository.touchToken(found!.token.id, this.clock(), tokenTouchIntervalMs);
    return account;
  }

  /**
   * A caller admitted from the lookup this instance remembers, without
   * reading anything: unconfirmed until its call reads the same auth version
   * (see Caller). Undefined when nothing remembered would admit the token;
   * authenticate() then decides.
   */
  rememberedCaller(token: string): Caller | undefined {
    const prefix = apiTokenPrefix(token);
    const remembered = prefix ? this.lookups.remembered(prefix) : undefined;
    if (!remembered) return undefined;
    try {
      return { accountId: admitted(token, remembered.found).id, unconfirmedAt: remembered.version };
    } catch {
      return undefined;
    }
  }

  /** Records the use of a token whose remembered caller its call confirmed, as authenticate() does (at most once per interval). */
  async confirmedUse(token: string): Promise<void> {
    const remembered = this.lookups.remembered(apiTokenPrefix(token) ?? "");
    if (remembered) await this.repository.touchToken(remembered.found.token.id, this.clock(), tokenTouchIntervalMs);
  }
}

/**
 * The account a token acts for, or why it is refused. Unknown and revoked
 * tokens fail alike; an account whose API use is not active fails with its
 * own reason, since the caller holds a valid credential and needs to know
 * what to do next.
 */
function admitted(token: string, found: TokenWithAccount | undefined): AccountRow {
  if (!found || !apiTokenMatches(token, found.token.secretHash) || found.token.revokedAt !== null) {
    throw new DomainError("token_invalid", "the API token is not valid");
  }
  const { account } = found;
  if (account.apiStatus === "not_started") {
    throw new DomainError("api_use_not_started", "API use has not been started for this account");
  }
  if (account.apiStatus === "suspended") {
    throw new DomainError("api_use_suspended", "API use is suspended for this account");
  }
  return account;
}

function summarize(row: ApiTokenRow): ApiTokenSummary {
  const { secretHash: _hidden, ...summary } = row;
  return summary;
}
