import type { Kysely } from "kysely";

/**
 * oidc_clients.jwks_uri: where a client's public keys are fetched from
 * (OIDC Dynamic Registration, RFC 7591), instead of the `jwks` column; never
 * both. Null for the clients registered before, which all have inline keys
 * or none.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("oidc_clients").addColumn("jwks_uri", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("oidc_clients").dropColumn("jwks_uri").execute();
}
