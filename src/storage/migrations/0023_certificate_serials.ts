import type { Kysely } from "kysely";

/**
 * Certificates by serial number. The mock CA's OCSP responder looks its
 * certificates up by the serial numbers a request names (of any account),
 * and without an index every OCSP request read every certificate of every
 * account: linear in the registry, where a deployment holds millions.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex("certificates_serial_number").on("certificates").column("serial_number").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("certificates_serial_number").execute();
}
