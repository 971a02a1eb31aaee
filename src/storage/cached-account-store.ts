import type { AccountRow, AccountStore, ApiStatus, ApiTokenRow, RememberedTokenWithAccount, TokenWithAccount } from "../domain/accounts/model.ts";
import type { AccountsRepository } from "./accounts-repository.ts";
import { sharedRowReads, type StatementCalls } from "./coalesced-calls.ts";

/** Tokens kept; beyond this the oldest entry goes first. */
const capacity = 10_000;

/**
 * The accounts store with authenticated-call lookups kept in memory. Every
 * call still reads one row, `api_auth_version`, which triggers change on
 * every token revocation or deletion and every change of an account's API
 * status, whichever instance or tool made it; an entry read under another
 * version is read again. So a revoked token is refused on the very next call
 * on every instance, and a busy token costs one indexed one-row read instead
 * of the token, its account and a touch.
 *
 * Touches are also remembered: a token touched within the interval by this
 * instance is not touched again (the database keeps the same rule, so this
 * only saves the statement).
 */
export class CachedAccountStore implements AccountStore {
  private readonly tokens = new Map<string, RememberedTokenWithAccount>();
  private readonly touched = new Map<string, number>();
  /** Calls made at the same time share one read of the version, begun after each of them (see sharedRowReads). */
  private readonly versionReads: StatementCalls<undefined, number | undefined>;

  constructor(private readonly inner: AccountsRepository) {
    this.versionReads = sharedRowReads(inner.dialect, () => this.inner.authVersion());
  }

  async findTokenWithAccount(prefix: string): Promise<TokenWithAccount | undefined> {
    // Read before the token: a change committed in between leaves the entry under the older version.
    const version = await this.versionReads.call(undefined);
    const cached = this.tokens.get(prefix);
    if (cached && cached.version === version) return cached.found;
    const found = await this.inner.findTokenWithAccount(prefix);
    this.tokens.delete(prefix);
    if (found && version !== undefined) {
      this.tokens.set(prefix, { version, found });
      if (this.tokens.size > capacity) this.tokens.delete(this.tokens.keys().next().value!);
    }
    return found;
  }

  /** The lookup as last read, under the version it was read under; nothing is read (see Accounts.authenticateRemembered). */
  rememberedTokenWithAccount(prefix: string): RememberedTokenWithAccount | undefined {
    return this.tokens.get(prefix);
  }

  async touchToken(id: string, now: number, intervalMs: number): Promise<void> {
    const last = this.touched.get(id);
    if (last !== undefined && last > now - intervalMs) return;
    await this.inner.touchToken(id, now, intervalMs);
    this.touched.delete(id);
    this.touched.set(id, now);
    if (this.touched.size > capacity) this.touched.delete(this.touched.keys().next().value!);
  }

  async revokeToken(prefix: string, now: number): Promise<boolean> {
    this.tokens.delete(prefix);
    return this.inner.revokeToken(prefix, now);
  }

  async setApiStatus(id: string, status: ApiStatus, now: number): Promise<void> {
    this.tokens.clear();
    return this.inner.setApiStatus(id, status, now);
  }

  insertAccount(account: AccountRow): Promise<void> {
    return this.inner.insertAccount(account);
  }

  findAccountByName(name: string): Promise<AccountRow | undefined> {
    return this.inner.findAccountByName(name);
  }

  findAccountById(id: string): Promise<AccountRow | undefined> {
    return this.inner.findAccountById(id);
  }

  listAccounts(): Promise<AccountRow[]> {
    return this.inner.listAccounts();
  }

  insertToken(token: ApiTokenRow): Promise<void> {
    return this.inner.insertToken(token);
  }

  listTokens(accountId: string): Promise<ApiTokenRow[]> {
    return this.inner.listTokens(accountId);
  }
}
