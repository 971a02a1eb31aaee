import { PostgresAdapter, sql, type Kysely } from "kysely";

/**
 * A counter that changes whenever an API token is revoked or deleted or an
 * account's API status changes, kept by triggers so that no writer (another
 * instance, the admin CLI, a hand-run statement) can forget it. Instances
 * keep authenticated tokens in memory and read this one row per call instead
 * of the token, its account and a touch: a change anywhere is seen on the
 * next call.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("api_auth_version")
    .addColumn("id", "integer", (c) => c.primaryKey())
    .addColumn("version", "bigint", (c) => c.notNull())
    .execute();
  await sql`insert into api_auth_version (id, version) values (1, 0)`.execute(db);
  const bump = "update api_auth_version set version = version + 1 where id = 1";
  if (isPostgres(db)) {
    await sql.raw(`create function api_auth_version_bump() returns trigger language plpgsql set search_path from current as $$ begin ${bump}; return null; end $$`).execute(db);
    await sql.raw(`create trigger api_tokens_auth_update after update of revoked_at, secret_hash, account_id on api_tokens for each statement execute function api_auth_version_bump()`).execute(db);
    await sql.raw(`create trigger api_tokens_auth_delete after delete on api_tokens for each statement execute function api_auth_version_bump()`).execute(db);
    await sql.raw(`create trigger accounts_auth_update after update of api_status on accounts for each statement execute function api_auth_version_bump()`).execute(db);
    await sql.raw(`create trigger accounts_auth_delete after delete on accounts for each statement execute function api_auth_version_bump()`).execute(db);
  } else {
    await sql.raw(`create trigger api_tokens_auth_update after update of revoked_at, secret_hash, account_id on api_tokens begin ${bump}; end`).execute(db);
    await sql.raw(`create trigger api_tokens_auth_delete after delete on api_tokens begin ${bump}; end`).execute(db);
    await sql.raw(`create trigger accounts_auth_update after update of api_status on accounts begin ${bump}; end`).execute(db);
    await sql.raw(`create trigger accounts_auth_delete after delete on accounts begin ${bump}; end`).execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [trigger, table] of [
    ["api_tokens_auth_update", "api_tokens"],
    ["api_tokens_auth_delete", "api_tokens"],
    ["accounts_auth_update", "accounts"],
    ["accounts_auth_delete", "accounts"],
  ] as const) {
    await sql.raw(isPostgres(db) ? `drop trigger ${trigger} on ${table}` : `drop trigger ${trigger}`).execute(db);
  }
  if (isPostgres(db)) await sql.raw("drop function api_auth_version_bump()").execute(db);
  await db.schema.dropTable("api_auth_version").execute();
}

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
