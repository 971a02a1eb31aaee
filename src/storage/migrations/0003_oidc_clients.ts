import type { Kysely } from "kysely";

/** Registered relying parties. Lists (redirect URIs, scopes, detail types) and the JWKS are JSON text. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("oidc_clients")
    .addColumn("client_id", "varchar(255)", (c) => c.primaryKey())
    .addColumn("name", "varchar(200)", (c) => c.notNull())
    .addColumn("type", "varchar(16)", (c) => c.notNull())
    .addColumn("auth_method", "varchar(32)", (c) => c.notNull())
    .addColumn("secret_hash", "varchar(64)")
    .addColumn("jwks", "text")
    .addColumn("redirect_uris", "text", (c) => c.notNull())
    .addColumn("allowed_scopes", "text", (c) => c.notNull())
    .addColumn("allowed_authorization_details_types", "text", (c) => c.notNull())
    .addColumn("require_par", "integer", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("oidc_clients").execute();
}
