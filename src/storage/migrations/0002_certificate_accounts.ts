import type { Kysely } from "kysely";

/**
 * API accounts (tenants), their tokens, and what they own: users,
 * certificates, status records. Every owned row carries account_id, and every
 * read filters by it: a foreign id must look exactly like an unknown one.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("accounts")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("name", "varchar(200)", (c) => c.notNull().unique())
    .addColumn("api_status", "varchar(16)", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("api_tokens")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("account_id", "varchar(36)", (c) => c.notNull().references("accounts.id"))
    .addColumn("prefix", "varchar(32)", (c) => c.notNull().unique())
    .addColumn("secret_hash", "varchar(64)", (c) => c.notNull())
    .addColumn("name", "varchar(200)", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("last_used_at", "bigint")
    .addColumn("revoked_at", "bigint")
    .execute();
  await db.schema.createIndex("api_tokens_account").on("api_tokens").column("account_id").execute();

  await db.schema
    .createTable("certificate_users")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("account_id", "varchar(36)", (c) => c.notNull().references("accounts.id"))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("certificate_users_account").on("certificate_users").column("account_id").execute();

  await db.schema
    .createTable("certificates")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("account_id", "varchar(36)", (c) => c.notNull().references("accounts.id"))
    .addColumn("user_id", "varchar(36)", (c) => c.notNull().references("certificate_users.id"))
    .addColumn("type", "varchar(48)", (c) => c.notNull())
    .addColumn("origin", "varchar(16)", (c) => c.notNull())
    .addColumn("serial_number", "varchar(64)", (c) => c.notNull())
    .addColumn("issuer", "text", (c) => c.notNull())
    .addColumn("subject", "text", (c) => c.notNull())
    .addColumn("not_before", "bigint", (c) => c.notNull())
    .addColumn("not_after", "bigint", (c) => c.notNull())
    .addColumn("fingerprint_sha256", "varchar(64)", (c) => c.notNull())
    .addColumn("crl_distribution_points", "text", (c) => c.notNull())
    .addColumn("certificate_pem", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("certificates_user_latest")
    .on("certificates")
    .columns(["account_id", "user_id", "created_at"])
    .execute();

  await db.schema
    .createTable("certificate_statuses")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("account_id", "varchar(36)", (c) => c.notNull().references("accounts.id"))
    .addColumn("certificate_id", "varchar(36)", (c) => c.notNull().references("certificates.id"))
    .addColumn("status", "varchar(16)", (c) => c.notNull())
    .addColumn("check_method", "varchar(8)", (c) => c.notNull())
    .addColumn("check_purpose", "varchar(32)", (c) => c.notNull())
    .addColumn("source_updated_at", "bigint", (c) => c.notNull())
    .addColumn("revoked_at", "bigint")
    .addColumn("revoked_reason", "integer")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("certificate_statuses_history")
    .on("certificate_statuses")
    .columns(["certificate_id", "created_at", "id"])
    .execute();

  // Mock environment only: the mock CA, and what checks of a mock certificate report.
  await db.schema
    .createTable("mock_authorities")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("certificate_pem", "text", (c) => c.notNull())
    .addColumn("private_key_pem", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("mock_certificate_states")
    .addColumn("certificate_id", "varchar(36)", (c) => c.primaryKey().references("certificates.id"))
    .addColumn("status", "varchar(16)", (c) => c.notNull())
    .addColumn("revoked_at", "bigint")
    .addColumn("revoked_reason", "integer")
    .addColumn("source_updated_at", "bigint")
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    "mock_certificate_states", "mock_authorities", "certificate_statuses", "certificates", "certificate_users", "api_tokens", "accounts",
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
