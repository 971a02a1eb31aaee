import type { Kysely } from "kysely";

/**
 * End users of the OpenID Connect provider, their browser sessions, the
 * interactions in progress (one per authorization request being worked
 * through pages), and the grants they gave clients.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("oidc_users")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("login", "varchar(200)", (c) => c.notNull().unique())
    .addColumn("password_hash", "text", (c) => c.notNull())
    // AES-256-GCM sealed; TOTP verification needs the secret itself, so it cannot be hashed.
    .addColumn("totp_secret_sealed", "text")
    .addColumn("totp_last_step", "bigint")
    .addColumn("name", "varchar(200)")
    .addColumn("email", "varchar(320)")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("oidc_sessions")
    .addColumn("id_hash", "varchar(64)", (c) => c.primaryKey())
    .addColumn("user_id", "varchar(36)", (c) => c.notNull().references("oidc_users.id"))
    .addColumn("auth_time", "bigint", (c) => c.notNull())
    .addColumn("acr", "varchar(64)", (c) => c.notNull())
    .addColumn("amr", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("oidc_sessions_user").on("oidc_sessions").column("user_id").execute();

  await db.schema
    .createTable("oidc_interactions")
    .addColumn("id_hash", "varchar(64)", (c) => c.primaryKey())
    .addColumn("browser_hash", "varchar(64)", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("oidc_grants")
    .addColumn("id", "varchar(64)", (c) => c.primaryKey())
    .addColumn("user_id", "varchar(36)", (c) => c.notNull().references("oidc_users.id"))
    .addColumn("client_id", "varchar(255)", (c) => c.notNull())
    .addColumn("scopes", "text", (c) => c.notNull())
    .addColumn("authorization_details", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addColumn("revoked_at", "bigint")
    .execute();
  await db.schema.createIndex("oidc_grants_user_client").on("oidc_grants").columns(["user_id", "client_id", "updated_at"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ["oidc_grants", "oidc_interactions", "oidc_sessions", "oidc_users"]) {
    await db.schema.dropTable(table).execute();
  }
}
