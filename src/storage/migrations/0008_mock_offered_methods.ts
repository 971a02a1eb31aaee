import type { Kysely } from "kysely";

/**
 * The check methods the mock source offers for a certificate (JSON array, in
 * order of preference); null means both, CRL first, as before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("mock_certificate_states").addColumn("offered_methods", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("mock_certificate_states").dropColumn("offered_methods").execute();
}
