import type { Kysely } from "kysely";

/**
 * Passkeys (WebAuthn credentials) of end users, one row per credential:
 * its id (base64url, as browsers give it), the user, the random user handle
 * the authenticator keeps (the same for all of a user's passkeys), the COSE
 * public key (base64url), the last signature counter, the transports the
 * browser named (JSON), the backup flags (eligible: fixed at creation;
 * backed up: as of the last use), the name the user gave it, and when it was
 * made and last used. Nothing here is secret.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("oidc_passkeys")
    .addColumn("credential_id", "varchar(1366)", (c) => c.primaryKey())
    .addColumn("user_id", "varchar(36)", (c) => c.notNull().references("oidc_users.id").onDelete("cascade"))
    .addColumn("user_handle", "varchar(64)", (c) => c.notNull())
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("sign_count", "bigint", (c) => c.notNull())
    .addColumn("transports", "text", (c) => c.notNull())
    .addColumn("backup_eligible", "integer", (c) => c.notNull())
    .addColumn("backed_up", "integer", (c) => c.notNull())
    .addColumn("name", "varchar(256)", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("last_used_at", "bigint")
    .execute();
  await db.schema.createIndex("oidc_passkeys_user").on("oidc_passkeys").columns(["user_id", "created_at"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("oidc_passkeys").execute();
}
