import { PostgresAdapter, type Kysely } from "kysely";

/**
 * The OCSP responses instances fetch, shared through the database so that
 * one instance's request answers every instance until the response lapses
 * (see docs/certificate-status.md, "OCSP source"). One row per certificate:
 * its issuing trust anchor and serial number (lowercase hex, at most 20
 * octets). The response is kept as received and verified again by whoever
 * reads it; the times are copied out so that a reader can tell a lapsed one
 * without parsing it.
 *
 * - usable_until: nextUpdate, or thisUpdate plus the configured period for a
 *   response without one.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const binary = db.getExecutor().adapter instanceof PostgresAdapter ? "bytea" : "blob";
  await db.schema
    .createTable("ocsp_responses")
    .addColumn("issuer_anchor", "varchar(80)", (c) => c.notNull())
    .addColumn("serial_number", "varchar(64)", (c) => c.notNull())
    .addColumn("url", "varchar(2048)", (c) => c.notNull())
    .addColumn("der", binary, (c) => c.notNull())
    .addColumn("sha256", "varchar(64)", (c) => c.notNull())
    .addColumn("produced_at", "bigint", (c) => c.notNull())
    .addColumn("this_update", "bigint", (c) => c.notNull())
    .addColumn("next_update", "bigint")
    .addColumn("usable_until", "bigint", (c) => c.notNull())
    .addColumn("fetched_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("ocsp_responses_pk", ["issuer_anchor", "serial_number"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("ocsp_responses").execute();
}
