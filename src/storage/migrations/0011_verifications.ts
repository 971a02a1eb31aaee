import { sql, type Kysely } from "kysely";

/**
 * Signature verifications and the certificate registry they feed.
 *
 * - verifications: one row per Verify that ran to a result. content_sealed is
 *   the certificate's personal facts sealed with the server key (associated
 *   data "verification:<id>"), or null (not a signature certificate, result not
 *   OK, or storage of content turned off). Deleting the row deletes them.
 * - certificates: the anchor a certificate chains to (the mock CA or a
 *   configured one) and its OCSP URLs; one row per certificate per account, by
 *   fingerprint, so verifying a certificate twice gives the same id even when
 *   two calls race.
 * - The certificate itself is no longer kept: a signature certificate carries
 *   its holder's name, date of birth, gender and address, and nothing needs it
 *   after registration. Rows stored before are cleared here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("certificates").addColumn("trust_anchor", "varchar(80)").execute();
  await db.schema.alterTable("certificates").addColumn("ocsp_urls", "text").execute();
  await sql`update certificates set certificate_pem = '', subject = ''`.execute(db);
  await db.schema
    .createIndex("certificates_account_fingerprint")
    .on("certificates")
    .columns(["account_id", "fingerprint_sha256"])
    .unique()
    .execute();
  // The user's latest certificate is the one with the latest notBefore.
  await db.schema
    .createIndex("certificates_user_not_before")
    .on("certificates")
    .columns(["account_id", "user_id", "not_before"])
    .execute();

  await db.schema
    .createTable("verifications")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("account_id", "varchar(36)", (c) => c.notNull().references("accounts.id"))
    .addColumn("certificate_id", "varchar(36)", (c) => c.notNull().references("certificates.id"))
    .addColumn("user_id", "varchar(36)", (c) => c.references("certificate_users.id"))
    .addColumn("is_new_user", "integer", (c) => c.notNull())
    .addColumn("result", "varchar(32)", (c) => c.notNull())
    .addColumn("hash_algorithm", "varchar(16)", (c) => c.notNull())
    .addColumn("certificate_status_id", "varchar(36)", (c) => c.references("certificate_statuses.id"))
    .addColumn("content_sealed", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("verifications_account_time").on("verifications").columns(["account_id", "created_at", "id"]).execute();
  await db.schema.createIndex("verifications_user_time").on("verifications").columns(["account_id", "user_id", "created_at"]).execute();
  await db.schema
    .createIndex("verifications_certificate_time")
    .on("verifications")
    .columns(["account_id", "certificate_id", "created_at"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("verifications").execute();
  await db.schema.dropIndex("certificates_user_not_before").execute();
  await db.schema.dropIndex("certificates_account_fingerprint").execute();
  await db.schema.alterTable("certificates").dropColumn("ocsp_urls").execute();
  await db.schema.alterTable("certificates").dropColumn("trust_anchor").execute();
}
