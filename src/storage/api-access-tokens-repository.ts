import type { Kysely, Selectable } from "kysely";
import type { ApiAccessTokenRow, ApiAccessTokenStore, ApiAccessTokenWithAccount } from "../domain/accounts/api-access-tokens.ts";
import type { ApiStatus } from "../domain/accounts/model.ts";
import type { AccountStore } from "../domain/accounts/model.ts";
import type { Database } from "./database.ts";
import { preparedQuery } from "./prepared-query.ts";
import type { ApiAccessTokenTable, Tables } from "./schema.ts";

/** Every call with an access token whose lookup this instance does not remember reads this. */
const tokenWithAccount = preparedQuery((db: Kysely<Tables>, tokenHash: string) =>
  db
    .selectFrom("api_access_tokens as t")
    .innerJoin("accounts as a", "a.id", "t.account_id")
    .selectAll("t")
    .select("a.api_status")
    .where("t.token_hash", "=", tokenHash),
);

/** The access tokens of API accounts' OAuth clients (migration 0033). */
export class ApiAccessTokensRepository implements ApiAccessTokenStore {
  constructor(
    private readonly database: Database,
    /** The auth version, read as the API token lookups read it (shared with them). */
    private readonly accounts: Pick<AccountStore, "authVersion" | "findAccountById">,
  ) {}

  async insert(token: ApiAccessTokenRow): Promise<void> {
    await this.database.db
      .insertInto("api_access_tokens")
      .values({
        token_hash: token.tokenHash,
        client_id: token.clientId,
        account_id: token.accountId,
        scopes: token.scopes.join(" "),
        dpop_jkt: token.dpopJkt,
        created_at: token.createdAt,
        expires_at: token.expiresAt,
        revoked_at: token.revokedAt,
      })
      .execute();
  }

  async findWithAccount(tokenHash: string): Promise<ApiAccessTokenWithAccount | undefined> {
    const [row] = await tokenWithAccount(this.database.db, tokenHash);
    return row && { token: toToken(row), apiStatus: row.api_status as ApiStatus };
  }

  async apiStatus(accountId: string): Promise<ApiStatus | undefined> {
    return (await this.accounts.findAccountById(accountId))?.apiStatus;
  }

  async revoke(tokenHash: string, clientId: string, now: number): Promise<boolean> {
    const result = await this.database.db
      .updateTable("api_access_tokens")
      .set({ revoked_at: now })
      .where("token_hash", "=", tokenHash)
      .where("client_id", "=", clientId)
      .where("revoked_at", "is", null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  authVersion(): Promise<number | undefined> {
    return this.accounts.authVersion();
  }
}

function toToken(row: Selectable<ApiAccessTokenTable>): ApiAccessTokenRow {
  return {
    tokenHash: row.token_hash,
    clientId: row.client_id,
    accountId: row.account_id,
    scopes: row.scopes.split(" ").filter(Boolean),
    dpopJkt: row.dpop_jkt,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}
