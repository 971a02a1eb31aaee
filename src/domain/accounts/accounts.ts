import type { AccountRow, AccountStore, ApiStatus, ApiTokenRow, TokenWithAccount } from "./model.ts";
import type { Clock } from "../clock.ts";
import { DomainError } from "../errors.ts";
import { newId } from "../ids.ts";
import { apiTokenMatches, apiTokenPrefix, generateApiToken, isApiTokenPrefix } from "./api-token.ts";

export type { AccountRow, ApiStatus, ApiTokenRow };

/** Token listings never carry the hash. */
export type ApiTokenSummary = Omit<ApiTokenRow, "secretHash">;

const tokenTouchIntervalMs = 60_000;
const accountNamePattern = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/** API accounts (tenants) and their tokens. */
export class Accounts {
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
    const found = prefix ? await this.repository.findTokenWithAccount(prefix) : undefined;
    const account = admitted(token, found);
    await this.repository.touchToken(found!.token.id, this.clock(), tokenTouchIntervalMs);
    return account;
  }

  /**
   * authenticate() from the lookup this instance remembers, without reading
   * the auth version: undefined when nothing is remembered or the remembered
   * lookup would not admit the token (authenticate() then decides). The
   * caller must confirm it (confirmRemembered) with the auth version read by
   * its own first statement, before it writes or answers anything: that is
   * what lets a status check read the version with its certificate instead
   * of in a statement of its own.
   */
  authenticateRemembered(token: string): RememberedAuthentication | undefined {
    const prefix = apiTokenPrefix(token);
    const remembered = prefix ? this.repository.rememberedTokenWithAccount?.(prefix) : undefined;
    if (!remembered) return undefined;
    try {
      return { account: admitted(token, remembered.found), version: remembered.version, tokenId: remembered.found.token.id };
    } catch {
      return undefined;
    }
  }

  /**
   * Confirms a remembered authentication with the auth version the caller
   * read after the call began (undefined: none was read, so read it now).
   * The same version: the remembered lookup still holds. Another: the token
   * is authenticated afresh, and refused if it no longer passes.
   */
  async confirmRemembered(token: string, remembered: RememberedAuthentication, observedVersion: number | undefined): Promise<AccountRow> {
    if (observedVersion !== remembered.version) {
      const account = await this.authenticate(token);
      if (account.id !== remembered.account.id) throw new DomainError("token_invalid", "the API token is not valid");
      return account;
    }
    await this.repository.touchToken(remembered.tokenId, this.clock(), tokenTouchIntervalMs);
    return remembered.account;
  }
}

/** An authentication from a remembered lookup, valid once confirmed (Accounts.confirmRemembered). */
export interface RememberedAuthentication {
  account: AccountRow;
  /** The auth version the lookup was read under. */
  version: number;
  tokenId: string;
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
