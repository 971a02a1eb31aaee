import { PostgresAdapter, type Kysely } from "kysely";

/**
 * The CRLs instances fetch, shared through the database so that instances
 * behind one load balancer answer from the same list (see
 * docs/certificate-status.md, "CRL source"). One row per list: a
 * distribution point URL for one issuing trust anchor.
 *
 * - der: the list as fetched (BLOB / BYTEA); null until a list has been
 *   fetched and verified, while failures are already recorded.
 * - crl_number: the cRLNumber as 49 decimal digits, zero-padded (it may be
 *   up to 20 octets), so that both databases order it as text and a write
 *   can refuse a lower number in its WHERE clause.
 * - checked_at: when the list was last confirmed at its source (fetched or
 *   answered 304); an instance that sees a recent one need not ask again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const binary = db.getExecutor().adapter instanceof PostgresAdapter ? "bytea" : "blob";
  await db.schema
    .createTable("crl_lists")
    .addColumn("issuer_anchor", "varchar(80)", (c) => c.notNull())
    .addColumn("url", "varchar(2048)", (c) => c.notNull())
    .addColumn("der", binary)
    .addColumn("sha256", "varchar(64)")
    .addColumn("etag", "varchar(1024)")
    .addColumn("last_modified", "varchar(128)")
    .addColumn("this_update", "bigint")
    .addColumn("next_update", "bigint")
    .addColumn("crl_number", "varchar(49)")
    .addColumn("entries", "bigint")
    .addColumn("bytes", "bigint")
    .addColumn("fetched_at", "bigint")
    .addColumn("checked_at", "bigint")
    .addColumn("last_error", "varchar(1024)")
    .addColumn("last_error_at", "bigint")
    .addPrimaryKeyConstraint("crl_lists_pk", ["issuer_anchor", "url"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("crl_lists").execute();
}
