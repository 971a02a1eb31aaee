import { sql, type Kysely } from "kysely";

/**
 * DPoP (RFC 9449). `oidc_dpop_proof_jtis` remembers the proofs already used,
 * by a hash of the key thumbprint and jti, until their iat window has passed
 * (a later replay fails the iat check); one INSERT decides which of two
 * concurrent uses wins, across every instance on the database.
 * `oidc_tokens.dpop_jkt` is the thumbprint a token is bound to (null: a
 * Bearer token, or a refresh token of a confidential client), and
 * `oidc_clients.dpop_bound_access_tokens` (0 or 1) makes DPoP mandatory for a
 * client at the token endpoint (RFC 9449 section 5.2).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("oidc_dpop_proof_jtis")
    .addColumn("jti_hash", "varchar(64)", (c) => c.primaryKey())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("oidc_dpop_proof_jtis_expiry").on("oidc_dpop_proof_jtis").column("expires_at").execute();
  await db.schema.alterTable("oidc_tokens").addColumn("dpop_jkt", "varchar(64)").execute();
  await db.schema
    .alterTable("oidc_clients")
    .addColumn("dpop_bound_access_tokens", "integer", (c) => c.notNull().defaultTo(sql`0`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("oidc_clients").dropColumn("dpop_bound_access_tokens").execute();
  await db.schema.alterTable("oidc_tokens").dropColumn("dpop_jkt").execute();
  await db.schema.dropTable("oidc_dpop_proof_jtis").execute();
}
