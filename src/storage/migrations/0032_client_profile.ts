import type { Kysely } from "kysely";

/**
 * oidc_clients.profile: the rules a client is held to beyond its metadata
 * ("fapi2", the FAPI 2.0 Security Profile; null for none).
 * oidc_clients.require_signed_request_object: RFC 9101's client metadata, 0
 * or 1. Clients registered before have neither, which is how they behaved.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("oidc_clients").addColumn("profile", "varchar(16)").execute();
  await db.schema.alterTable("oidc_clients").addColumn("require_signed_request_object", "integer", (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("oidc_clients").dropColumn("require_signed_request_object").execute();
  await db.schema.alterTable("oidc_clients").dropColumn("profile").execute();
}
