import type { AccountRow, AccountStore, ApiStatus, ApiTokenRow, TokenWithAccount } from "../domain/accounts/model.ts";
import { sql, type Kysely } from "kysely";
import type { Database, Dialect } from "./database.ts";
import { preparedQuery } from "./prepared-query.ts";
import type { Tables } from "./schema.ts";

export class AccountsRepository implements AccountStore {
  constructor(private readonly database: Database) {}

  get dialect(): Dialect {
    return this.database.dialect;
  }

  async insertAccount(account: AccountRow): Promise<void> {
    await this.database.db
      .insertInto("accounts")
      .values({
        id: account.id,
        name: account.name,
        api_status: account.apiStatus,
        created_at: account.createdAt,
        updated_at: account.updatedAt,
      })
      .execute();
  }

  async findAccountByName(name: string): Promise<AccountRow | undefined> {
    const row = await this.database.db.selectFrom("accounts").selectAll().where("name", "=", name).executeTakeFirst();
    return row && toAccount(row);
  }

  async findAccountById(id: string): Promise<AccountRow | undefined> {
    const row = await this.database.db.selectFrom("accounts").selectAll().where("id", "=", id).executeTakeFirst();
    return row && toAccount(row);
  }

  async listAccounts(): Promise<AccountRow[]> {
    const rows = await this.database.db.selectFrom("accounts").selectAll().orderBy("name").execute();
    return rows.map(toAccount);
  }

  async setApiStatus(id: string, status: ApiStatus, now: number): Promise<void> {
    await this.database.db.updateTable("accounts").set({ api_status: status, updated_at: now }).where("id", "=", id).execute();
  }

  async insertToken(token: ApiTokenRow): Promise<void> {
    await this.database.db
      .insertInto("api_tokens")
      .values({
        id: token.id,
        account_id: token.accountId,
        prefix: token.prefix,
        secret_hash: token.secretHash,
        name: token.name,
        created_at: token.createdAt,
        last_used_at: token.lastUsedAt,
        revoked_at: token.revokedAt,
      })
      .execute();
  }

  async findTokenWithAccount(prefix: string): Promise<TokenWithAccount | undefined> {
    const row = await this.database.db
      .selectFrom("api_tokens as t")
      .innerJoin("accounts as a", "a.id", "t.account_id")
      .selectAll("t")
      .select([
        "a.name as account_name",
        "a.api_status as account_api_status",
        "a.created_at as account_created_at",
        "a.updated_at as account_updated_at",
      ])
      .where("t.prefix", "=", prefix)
      .executeTakeFirst();
    if (!row) return undefined;
    const account = toAccount({
      id: row.account_id,
      name: row.account_name,
      api_status: row.account_api_status,
      created_at: row.account_created_at,
      updated_at: row.account_updated_at,
    });
    return { token: toToken(row), account };
  }

  /** Changes whenever a token is revoked or an account's API status changes, whoever changed it (triggers keep it). */
  async authVersion(): Promise<number | undefined> {
    const [row] = await authVersion(this.database.db);
    return row && Number(row.version);
  }

  async listTokens(accountId: string): Promise<ApiTokenRow[]> {
    const rows = await this.database.db
      .selectFrom("api_tokens")
      .selectAll()
      .where("account_id", "=", accountId)
      .orderBy("created_at", "desc")
      .execute();
    return rows.map(toToken);
  }

  /** Returns false when there was no such unrevoked token. */
  async revokeToken(prefix: string, now: number): Promise<boolean> {
    const result = await this.database.db
      .updateTable("api_tokens")
      .set({ revoked_at: now })
      .where("prefix", "=", prefix)
      .where("revoked_at", "is", null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Records use at most once per interval, so a busy token does not turn every read into a write. */
  async touchToken(id: string, now: number, intervalMs: number): Promise<void> {
    await this.database.db
      .updateTable("api_tokens")
      .set({ last_used_at: now })
      .where("id", "=", id)
      .where((eb) => eb.or([eb("last_used_at", "is", null), eb("last_used_at", "<", now - intervalMs)]))
      .execute();
  }
}

function toAccount(row: { id: string; name: string; api_status: string; created_at: number; updated_at: number }): AccountRow {
  return {
    id: row.id,
    name: row.name,
    apiStatus: row.api_status as ApiStatus,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

function toToken(row: {
  id: string;
  account_id: string;
  prefix: string;
  secret_hash: string;
  name: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}): ApiTokenRow {
  return {
    id: row.id,
    accountId: row.account_id,
    prefix: row.prefix,
    secretHash: row.secret_hash,
    name: row.name,
    createdAt: Number(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}

/**
 * The row `authVersion` reads, as a column of another statement: a status
 * check reads it beside its certificate, and a caller admitted on a
 * remembered token is confirmed with it, with no statement of its own (see
 * Caller).
 */
export const authVersionColumn = sql<number | null>`(select "version" from "api_auth_version" where "id" = 1)`.as("auth_version");

/** The auth version a read's rows carry (every row the same). */
export function authVersionOf(rows: readonly { auth_version: unknown }[]): number | undefined {
  return rows.length === 0 || rows[0]!.auth_version === null ? undefined : Number(rows[0]!.auth_version);
}

/** Read by every authenticated RPC (the API token cache's check): built and compiled once (see preparedQuery). */
const authVersion = preparedQuery((db: Kysely<Tables>) => db.selectFrom("api_auth_version").select("version").where("id", "=", 1));
