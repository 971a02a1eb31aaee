import type { Kysely } from "kysely";

/**
 * Language-tagged names (OIDC Core 5.2): a user's name in other languages and
 * scripts, e.g. `[{"tag":"ja","value":"見本 太郎"},{"tag":"ja-Kana-JP","value":"ミホン タロウ"}]`,
 * JSON in preference order; and the claims_locales a token was issued for, so
 * that userinfo answers in the languages the authorization request asked for.
 * Null for users without such names and tokens issued without claims_locales.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("oidc_users").addColumn("localized_names", "text").execute();
  await db.schema.alterTable("oidc_tokens").addColumn("claims_locales", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("oidc_tokens").dropColumn("claims_locales").execute();
  await db.schema.alterTable("oidc_users").dropColumn("localized_names").execute();
}
