import { sql, type Kysely } from "kysely";

/** Where a client may send the browser after RP-initiated logout (JSON array, matched exactly). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("oidc_clients")
    .addColumn("post_logout_redirect_uris", "text", (c) => c.notNull().defaultTo(sql`'[]'`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("oidc_clients").dropColumn("post_logout_redirect_uris").execute();
}
