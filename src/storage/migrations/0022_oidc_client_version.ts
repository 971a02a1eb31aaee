import { PostgresAdapter, sql, type Kysely } from "kysely";

/**
 * A counter that changes whenever a client registration is added, changed
 * or removed, kept by triggers so that no writer (another instance, the
 * admin CLI, the clients file, a hand-run statement) can forget it.
 * Instances keep the clients they read in memory and read this one row per
 * lookup instead of the registration: a change anywhere is seen on the
 * next lookup (src/storage/clients-repository.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("oidc_client_version")
    .addColumn("id", "integer", (c) => c.primaryKey())
    .addColumn("version", "bigint", (c) => c.notNull())
    .execute();
  await sql`insert into oidc_client_version (id, version) values (1, 0)`.execute(db);
  const bump = "update oidc_client_version set version = version + 1 where id = 1";
  if (isPostgres(db)) {
    await sql.raw(`create function oidc_client_version_bump() returns trigger language plpgsql set search_path from current as $$ begin ${bump}; return null; end $$`).execute(db);
    await sql.raw(`create trigger oidc_clients_version after insert or update or delete on oidc_clients for each statement execute function oidc_client_version_bump()`).execute(db);
  } else {
    for (const event of ["insert", "update", "delete"]) {
      await sql.raw(`create trigger oidc_clients_version_${event} after ${event} on oidc_clients begin ${bump}; end`).execute(db);
    }
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    await sql.raw("drop trigger oidc_clients_version on oidc_clients").execute(db);
    await sql.raw("drop function oidc_client_version_bump()").execute(db);
  } else {
    for (const event of ["insert", "update", "delete"]) await sql.raw(`drop trigger oidc_clients_version_${event}`).execute(db);
  }
  await db.schema.dropTable("oidc_client_version").execute();
}

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
