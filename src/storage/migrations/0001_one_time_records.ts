import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("one_time_records")
    .addColumn("kind", "varchar(32)", (c) => c.notNull())
    .addColumn("key_hash", "varchar(128)", (c) => c.notNull())
    .addColumn("owner", "varchar(255)", (c) => c.notNull())
    .addColumn("payload", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .addColumn("consumed_at", "bigint")
    .addPrimaryKeyConstraint("one_time_records_pk", ["kind", "key_hash"])
    .execute();
  // The sweeper deletes by expiry; without this index it scans the table.
  await db.schema.createIndex("one_time_records_expires_at").on("one_time_records").column("expires_at").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("one_time_records").execute();
}
