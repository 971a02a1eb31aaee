import type { Kysely } from "kysely";

/**
 * One row that ties the database to the server key its sealed values (TOTP
 * secrets, signing keys, certificate content) are written with: an HMAC of a
 * fixed text under that key, never the key. An instance started with another
 * key is refused before it can fail on every sealed value.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("server_key_check")
    .addColumn("id", "varchar(16)", (c) => c.primaryKey())
    .addColumn("key_check", "varchar(64)", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("server_key_check").execute();
}
