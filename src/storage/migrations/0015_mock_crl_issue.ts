import type { Kysely } from "kysely";

/**
 * The mock CA's CRL issue: every SetMockCertificateStatus issues a new list,
 * with the next cRLNumber and a thisUpdate of its own (the sourceUpdatedAt
 * set, or the time of the change), so that the CRL source sees the change as
 * a later list. Null thisUpdate: no change yet (the list is dated at the
 * CA's creation).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("mock_authorities").addColumn("crl_number", "bigint", (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable("mock_authorities").addColumn("crl_this_update", "bigint").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("mock_authorities").dropColumn("crl_this_update").execute();
  await db.schema.alterTable("mock_authorities").dropColumn("crl_number").execute();
}
