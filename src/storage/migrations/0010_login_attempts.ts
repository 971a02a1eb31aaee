import type { Kysely } from "kysely";

/**
 * Sign-in attempts that count against the throttle, shared by every instance
 * on the database. A row is written before a password or code is checked (a
 * reservation) and kept when the check fails; it is removed when the check
 * succeeds or the attempt was refused. Keys are HMACs of the login and the
 * client address under the server key, so neither is stored in the clear.
 * account_key is cleared (not the row) when the account signs in, so that
 * the address keeps its count.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("login_attempts")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("account_key", "varchar(64)")
    .addColumn("address_key", "varchar(64)", (c) => c.notNull())
    .addColumn("attempted_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("login_attempts_account").on("login_attempts").columns(["account_key", "attempted_at"]).execute();
  await db.schema.createIndex("login_attempts_address").on("login_attempts").columns(["address_key", "attempted_at"]).execute();
  await db.schema.createIndex("login_attempts_time").on("login_attempts").column("attempted_at").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("login_attempts").execute();
}
