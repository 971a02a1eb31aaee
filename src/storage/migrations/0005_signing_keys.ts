import type { Kysely } from "kysely";

/**
 * The OpenID Connect provider's signing keys (ID tokens). The private JWK is
 * sealed with the server key (AES-256-GCM, associated data = kid), never
 * stored in the clear.
 *
 * generation orders the keys and arbitrates races: a new key takes the next
 * generation number, and the unique constraint lets only one of several
 * instances creating a key at once succeed. The key of the highest generation
 * signs (unless retired); a retired key is still published for verification
 * for a grace period after retired_at.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("oidc_signing_keys")
    .addColumn("kid", "varchar(100)", (c) => c.primaryKey())
    .addColumn("generation", "bigint", (c) => c.notNull().unique())
    .addColumn("alg", "varchar(16)", (c) => c.notNull())
    .addColumn("public_jwk", "text", (c) => c.notNull())
    .addColumn("private_jwk_sealed", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("activated_at", "bigint", (c) => c.notNull())
    .addColumn("retired_at", "bigint")
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("oidc_signing_keys").execute();
}
