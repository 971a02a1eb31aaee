import { describe, expect, it } from "vitest";
import { Accounts } from "../../src/domain/accounts/accounts.ts";
import { generateApiToken } from "../../src/domain/accounts/api-token.ts";
import { assertCallerConfirmed, CallerNotConfirmed } from "../../src/domain/accounts/caller.ts";
import type { AccountRow, AccountStore, ApiTokenRow, TokenWithAccount } from "../../src/domain/accounts/model.ts";

/** The accounts store in memory, with an auth version moved by hand and its reads counted. */
class MemoryAccounts implements AccountStore {
  version = 1;
  reads = 0;
  accounts = new Map<string, AccountRow>();
  tokens = new Map<string, ApiTokenRow>();
  async insertAccount(account: AccountRow) {
    this.accounts.set(account.id, account);
  }
  async findAccountByName(name: string) {
    return [...this.accounts.values()].find((a) => a.name === name);
  }
  async findAccountById(id: string) {
    return this.accounts.get(id);
  }
  async listAccounts() {
    return [...this.accounts.values()];
  }
  async setApiStatus(id: string, status: AccountRow["apiStatus"]) {
    this.accounts.set(id, { ...this.accounts.get(id)!, apiStatus: status });
    this.version++;
  }
  async insertToken(token: ApiTokenRow) {
    this.tokens.set(token.prefix, token);
  }
  async findTokenWithAccount(prefix: string): Promise<TokenWithAccount | undefined> {
    this.reads++;
    const token = this.tokens.get(prefix);
    return token && { token, account: this.accounts.get(token.accountId)! };
  }
  async authVersion() {
    return this.version;
  }
  async listTokens() {
    return [...this.tokens.values()];
  }
  async revokeToken(prefix: string, now: number) {
    const token = this.tokens.get(prefix);
    if (!token) return false;
    this.tokens.set(prefix, { ...token, revokedAt: now });
    this.version++;
    return true;
  }
  async touchToken() {}
}

async function setUp() {
  const store = new MemoryAccounts();
  const accounts = new Accounts(store, () => 1_700_000_000_000);
  const account = await accounts.create("caller", "active");
  const { token } = await accounts.createToken("caller", "t");
  return { store, accounts, account, token };
}

describe("a caller admitted on a remembered token", () => {
  it("is remembered only after a full authentication, and carries the version it was read under", async () => {
    const { store, accounts, account, token } = await setUp();
    expect(accounts.rememberedCaller(token)).toBeUndefined();
    await accounts.authenticate(token);
    expect(accounts.rememberedCaller(token)).toEqual({ accountId: account.id, unconfirmedAt: store.version });
  });

  it("is not admitted with a wrong secret for a remembered prefix: the memory holds lookups, not verdicts", async () => {
    const { accounts, token } = await setUp();
    await accounts.authenticate(token);
    const forged = token.slice(0, -4) + (token.endsWith("AAAA") ? "BBBB" : "AAAA");
    expect(accounts.rememberedCaller(forged)).toBeUndefined();
    expect(accounts.rememberedCaller(generateApiToken().token)).toBeUndefined();
  });

  it("is confirmed by a read of the same version, and not by another version or by none", async () => {
    const { store, accounts, token } = await setUp();
    await accounts.authenticate(token);
    const caller = accounts.rememberedCaller(token)!;
    expect(() => assertCallerConfirmed(caller, store.version)).not.toThrow();
    expect(() => assertCallerConfirmed(caller, store.version + 1)).toThrow(CallerNotConfirmed);
    expect(() => assertCallerConfirmed(caller, undefined)).toThrow(CallerNotConfirmed);
    expect(() => assertCallerConfirmed({ accountId: caller.accountId }, undefined)).not.toThrow();
  });

  it("after a revocation elsewhere the lookup is read again, and the token refused", async () => {
    const { store, accounts, token } = await setUp();
    await accounts.authenticate(token);
    const reads = store.reads;
    await accounts.authenticate(token);
    expect(store.reads).toBe(reads);
    const caller = accounts.rememberedCaller(token)!;
    await store.revokeToken(token.slice(0, 16), Date.now());
    expect(() => assertCallerConfirmed(caller, store.version)).toThrow(CallerNotConfirmed);
    await expect(accounts.authenticate(token)).rejects.toMatchObject({ code: "token_invalid" });
    expect(store.reads).toBe(reads + 1);
  });
});
