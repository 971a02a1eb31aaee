import type { AccountRow, AccountStore, ApiStatus, ApiTokenRow, TokenWithAccount } from "../domain/accounts/model.ts";
import type { AccountsRepository } from "./accounts-repository.ts";
import { sharedRowReads, type StatementCalls } from "./coalesced-calls.ts";

/** Touches remembered; beyond this the oldest entry goes first. */
const capacity = 10_000;

/**
 * The accounts repository with the two statements every authenticated call
 * makes made cheaper. The auth version (Accounts reads it on every call to
 * know whether the token lookup it remembers still holds) is read once for
 * the calls made at the same time. Touches are remembered: a token touched
 * within the interval by this instance is not touched again (the database
 * keeps the same rule, so this only saves the statement).
 */
export class CachedAccountStore implements AccountStore {
  private readonly touched = new Map<string, number>();
  /** Calls made at the same time share one read of the version, begun after each of them (see sharedRowReads). */
  private readonly versionReads: StatementCalls<undefined, number | undefined>;

  constructor(private readonly inner: AccountsRepository) {
    this.versionReads = sharedRowReads(inner.dialect, () => this.inner.authVersion());
  }

  authVersion(): Promise<number | undefined> {
    return this.versionReads.call(undefined);
  }

  findTokenWithAccount(prefix: string): Promise<TokenWithAccount | undefined> {
    return this.inner.findTokenWithAccount(prefix);
  }

  async touchToken(id: string, now: number, intervalMs: number): Promise<void> {
    const last = this.touched.get(id);
    if (last !== undefined && last > now - intervalMs) return;
    await this.inner.touchToken(id, now, intervalMs);
    this.touched.delete(id);
    this.touched.set(id, now);
    if (this.touched.size > capacity) this.touched.delete(this.touched.keys().next().value!);
  }

  revokeToken(prefix: string, now: number): Promise<boolean> {
    return this.inner.revokeToken(prefix, now);
  }

  setApiStatus(id: string, status: ApiStatus, now: number): Promise<void> {
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
