import { PostgresAdapter, sql, type Kysely } from "kysely";

/**
 * OAuth access to the certificate API (docs/reference/api-oauth.md):
 * - oidc_clients.account_id: the API account a client belongs to, for the
 *   clients an account registers for itself (client_credentials only); null
 *   for the relying parties of the OpenID Connect provider.
 * - api_access_tokens: the access tokens those clients obtain, each for the
 *   account of its client, with the scopes it may use and the DPoP key it is
 *   bound to. Only their hash is kept.
 * - Revoking or deleting one changes the API auth version (migration 0021),
 *   so that an instance that remembers the token's lookup reads it again on
 *   the next call, as for API tokens.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("oidc_clients").addColumn("account_id", "varchar(36)").execute();
  await db.schema.createIndex("oidc_clients_account").on("oidc_clients").columns(["account_id", "created_at"]).execute();
  await db.schema
    .createTable("api_access_tokens")
    .addColumn("token_hash", "varchar(64)", (c) => c.primaryKey())
    .addColumn("client_id", "varchar(255)", (c) => c.notNull())
    .addColumn("account_id", "varchar(36)", (c) => c.notNull())
    .addColumn("scopes", "text", (c) => c.notNull())
    .addColumn("dpop_jkt", "varchar(64)")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .addColumn("revoked_at", "bigint")
    .execute();
  await db.schema.createIndex("api_access_tokens_client").on("api_access_tokens").columns(["client_id"]).execute();
  await db.schema.createIndex("api_access_tokens_expiry").on("api_access_tokens").columns(["expires_at"]).execute();
  const bump = "update api_auth_version set version = version + 1 where id = 1";
  if (isPostgres(db)) {
    // Row triggers: a sweep of expired tokens that deletes nothing leaves the version alone.
    await sql.raw(`create trigger api_access_tokens_auth_update after update of revoked_at on api_access_tokens for each row execute function api_auth_version_bump()`).execute(db);
    await sql.raw(`create trigger api_access_tokens_auth_delete after delete on api_access_tokens for each row execute function api_auth_version_bump()`).execute(db);
  } else {
    await sql.raw(`create trigger api_access_tokens_auth_update after update of revoked_at on api_access_tokens begin ${bump}; end`).execute(db);
    await sql.raw(`create trigger api_access_tokens_auth_delete after delete on api_access_tokens begin ${bump}; end`).execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const trigger of ["api_access_tokens_auth_update", "api_access_tokens_auth_delete"]) {
    await sql.raw(isPostgres(db) ? `drop trigger ${trigger} on api_access_tokens` : `drop trigger ${trigger}`).execute(db);
  }
  await db.schema.dropTable("api_access_tokens").execute();
  await db.schema.dropIndex("oidc_clients_account").execute();
  await db.schema.alterTable("oidc_clients").dropColumn("account_id").execute();
}

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
