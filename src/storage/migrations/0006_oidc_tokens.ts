import type { Kysely } from "kysely";

/**
 * Access and refresh tokens, stored by the SHA-256 of the value the client
 * holds. `family` ties every token that descends from one authorization code,
 * so replaying the code or a rotated refresh token revokes them all at once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("oidc_tokens")
    .addColumn("token_hash", "varchar(64)", (c) => c.primaryKey())
    .addColumn("kind", "varchar(16)", (c) => c.notNull())
    .addColumn("family", "varchar(64)", (c) => c.notNull())
    .addColumn("client_id", "varchar(255)", (c) => c.notNull())
    .addColumn("user_id", "varchar(36)", (c) => c.notNull())
    .addColumn("grant_id", "varchar(64)", (c) => c.notNull())
    .addColumn("scopes", "text", (c) => c.notNull())
    .addColumn("authorization_details", "text", (c) => c.notNull())
    .addColumn("auth_time", "bigint", (c) => c.notNull())
    .addColumn("acr", "varchar(64)", (c) => c.notNull())
    .addColumn("amr", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .addColumn("consumed_at", "bigint")
    .addColumn("revoked_at", "bigint")
    .execute();
  await db.schema.createIndex("oidc_tokens_family").on("oidc_tokens").column("family").execute();
  await db.schema.createIndex("oidc_tokens_grant").on("oidc_tokens").column("grant_id").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("oidc_tokens").execute();
}
