import { sql, type Kysely } from "kysely";

/**
 * The grant types a client may use at the token endpoint (RFC 7591
 * grant_types), JSON text. Clients registered before get both grants the
 * provider offers, which is what they could use until now.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("oidc_clients")
    .addColumn("grant_types", "text", (c) => c.notNull().defaultTo(sql`'["authorization_code","refresh_token"]'`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("oidc_clients").dropColumn("grant_types").execute();
}
