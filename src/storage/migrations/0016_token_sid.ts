import type { Kysely } from "kysely";

/**
 * The session identifier (`sid`) an ID token names, kept with the tokens so
 * that refreshed ID tokens carry it too. Null for tokens issued before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("oidc_tokens").addColumn("sid", "varchar(64)").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("oidc_tokens").dropColumn("sid").execute();
}
