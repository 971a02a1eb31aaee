import type { Kysely } from "kysely";

/**
 * JPKI sign-in.
 *
 * - oidc_jpki_links: the certificates linked to each end user, one row per
 *   certificate (a certificate belongs to one user at most). certificate_id is
 *   the provider's own row in certificates (its certificate account); status
 *   is what the last check found (good or revoked), so that `jpki_verified`
 *   needs no network. No certificate content is kept here.
 * - oidc_mock_cards: mock mode only, the demo user's mock card (certificate and
 *   private key), sealed with the server key as one value.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("oidc_jpki_links")
    .addColumn("certificate_id", "varchar(36)", (c) => c.primaryKey().references("certificates.id"))
    .addColumn("user_id", "varchar(36)", (c) => c.notNull().references("oidc_users.id").onDelete("cascade"))
    .addColumn("fingerprint_sha256", "varchar(64)", (c) => c.notNull().unique())
    .addColumn("certificate_type", "varchar(40)", (c) => c.notNull())
    .addColumn("not_after", "bigint", (c) => c.notNull())
    .addColumn("status", "varchar(16)", (c) => c.notNull())
    .addColumn("linked_at", "bigint", (c) => c.notNull())
    .addColumn("checked_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("oidc_jpki_links_user").on("oidc_jpki_links").columns(["user_id", "linked_at"]).execute();

  await db.schema
    .createTable("oidc_mock_cards")
    .addColumn("user_id", "varchar(36)", (c) => c.primaryKey().references("oidc_users.id").onDelete("cascade"))
    .addColumn("card_sealed", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("oidc_mock_cards").execute();
  await db.schema.dropTable("oidc_jpki_links").execute();
}
