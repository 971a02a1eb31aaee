import { sql, type Kysely } from "kysely";

/**
 * Revoked token families (a replayed code or refresh token, or a refresh
 * token its client revoked: docs/oidc-decisions.md) are recorded once, in a
 * row of their own, and every read of a token and the rotation's update
 * join that row; the tokens of the family are no longer updated one by one
 * through an index on `family`, which every issuance paid for: the
 * families of concurrent refreshes interleave, so each family a grouped
 * insert touched was a leaf page of its own written to the log. A token
 * stored into a family after its revocation is revoked too, and revoking a
 * family is one row. (The refresh benchmark showed no change of speed
 * within its noise: docs/performance.md.)
 *
 * - revoked_at: when the family was revoked; a token's own revocation, if
 *   earlier, is the one a read shows.
 * - expires_at: when no token of the family can still be live (the longest
 *   token lifetime after revoked_at: none is issued into a revoked family);
 *   expired rows are swept with the tokens.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("oidc_revoked_families")
    .addColumn("family", "varchar(64)", (c) => c.primaryKey())
    .addColumn("revoked_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.dropIndex("oidc_tokens_family").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex("oidc_tokens_family").on("oidc_tokens").column("family").execute();
  // The families' revocations go back onto their tokens, as they were kept before.
  await sql`
    update oidc_tokens set revoked_at = (select f.revoked_at from oidc_revoked_families f where f.family = oidc_tokens.family)
    where revoked_at is null and family in (select family from oidc_revoked_families)`.execute(db);
  await db.schema.dropTable("oidc_revoked_families").execute();
}
