import type { Kysely } from "kysely";

/**
 * Dynamic client registration (RFC 7591 and 7592, docs/client-registration.md):
 * - oidc_client_registrations: the clients that registered themselves, each
 *   with the SHA-256 of its registration access token (the one credential of
 *   its configuration endpoint). A row goes with its client (cascade), so a
 *   client removed by any means leaves no token that could manage it again.
 * - oidc_registration_tokens: initial access tokens made by
 *   `shomei client registration-token create`, kept as their SHA-256.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("oidc_client_registrations")
    .addColumn("client_id", "varchar(255)", (c) => c.primaryKey().references("oidc_clients.client_id").onDelete("cascade"))
    .addColumn("access_token_hash", "varchar(64)", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("oidc_registration_tokens")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("token_hash", "varchar(64)", (c) => c.notNull().unique())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("oidc_registration_tokens").execute();
  await db.schema.dropTable("oidc_client_registrations").execute();
}
