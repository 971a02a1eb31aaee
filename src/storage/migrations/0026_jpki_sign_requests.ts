import type { Kysely } from "kysely";

/**
 * Signing requests for a JPKI app (a phone reading the card, or a smartphone
 * certificate), and the consent to the signature certificate's 基本4情報.
 *
 * - oidc_jpki_sign_requests: one row per request, found by the hash of its id
 *   (the id is in the QR code and the app link). browser_hash binds it to the
 *   browser that asked for it; state moves pending → answered or refused
 *   (one conditional UPDATE decides), then → used when that browser takes the
 *   outcome. The binding code and the app's answer (a certificate, which
 *   carries the holder's facts) are sealed with the server key.
 * - oidc_sessions.basic_info_consent_at: when the holder agreed, before
 *   signing with the signature certificate, to what the service does with
 *   the name, address, date of birth and gender it carries.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("oidc_jpki_sign_requests")
    .addColumn("id_hash", "varchar(64)", (c) => c.primaryKey())
    .addColumn("browser_hash", "varchar(64)", (c) => c.notNull())
    .addColumn("purpose", "varchar(16)", (c) => c.notNull())
    .addColumn("challenge", "varchar(64)", (c) => c.notNull())
    .addColumn("certificate_kind", "varchar(32)", (c) => c.notNull())
    .addColumn("client_name", "text", (c) => c.notNull())
    .addColumn("binding_code_sealed", "text", (c) => c.notNull())
    .addColumn("state", "varchar(16)", (c) => c.notNull())
    .addColumn("refusal", "varchar(32)")
    .addColumn("answer_sealed", "text")
    .addColumn("pin_attempts_remaining", "integer")
    .addColumn("basic_info_consent_at", "bigint")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("oidc_jpki_sign_requests_expiry").on("oidc_jpki_sign_requests").column("expires_at").execute();
  await db.schema.alterTable("oidc_sessions").addColumn("basic_info_consent_at", "bigint").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("oidc_sessions").dropColumn("basic_info_consent_at").execute();
  await db.schema.dropTable("oidc_jpki_sign_requests").execute();
}
