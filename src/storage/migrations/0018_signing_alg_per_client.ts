import { sql, type Kysely } from "kysely";

/**
 * RS256 beside ES256 for ID tokens.
 *
 * oidc_clients.id_token_signed_response_alg: how a client's ID tokens are
 * signed. Clients registered before get ES256, the only algorithm their ID
 * tokens were ever signed with, so nothing changes for them.
 *
 * oidc_signing_keys: each algorithm has its own line of keys, so generation
 * (which arbitrates instances creating a key at the same moment, see 0005)
 * becomes unique per alg instead of across all keys. SQLite cannot drop a
 * column's UNIQUE constraint, so the table is rebuilt, the same way on both
 * databases: the existing ES256 keys are copied over unchanged (same kid,
 * generation, sealed private key and dates) and go on signing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("oidc_clients")
    .addColumn("id_token_signed_response_alg", "varchar(16)", (c) => c.notNull().defaultTo("ES256"))
    .execute();
  await rebuildSigningKeys(db, ["alg", "generation"], "0018");
}

/** Going back leaves only ES256 keys (the only ones 0005's single line of generations can hold) and ES256 clients. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from oidc_signing_keys where alg <> 'ES256'`.execute(db);
  await rebuildSigningKeys(db, ["generation"], "0005");
  await db.schema.alterTable("oidc_clients").dropColumn("id_token_signed_response_alg").execute();
}

/**
 * Replaces oidc_signing_keys by a copy whose generation is unique within
 * `unique`. Constraint names carry `shape` (the migration whose shape the
 * table takes): PostgreSQL names must differ from those of the table being
 * replaced, whose indexes exist until it is dropped.
 */
async function rebuildSigningKeys(db: Kysely<unknown>, unique: ("alg" | "generation")[], shape: "0005" | "0018"): Promise<void> {
  const columns = ["kid", "generation", "alg", "public_jwk", "private_jwk_sealed", "created_at", "activated_at", "retired_at"];
  await db.schema
    .createTable("oidc_signing_keys_rebuilt")
    .addColumn("kid", "varchar(100)", (c) => c.notNull())
    .addColumn("generation", "bigint", (c) => c.notNull())
    .addColumn("alg", "varchar(16)", (c) => c.notNull())
    .addColumn("public_jwk", "text", (c) => c.notNull())
    .addColumn("private_jwk_sealed", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("activated_at", "bigint", (c) => c.notNull())
    .addColumn("retired_at", "bigint")
    .addPrimaryKeyConstraint(`oidc_signing_keys_pkey_${shape}`, ["kid"])
    .addUniqueConstraint(`oidc_signing_keys_generation_${shape}`, unique)
    .execute();
  const list = sql.join(columns.map((c) => sql.ref(c)));
  await sql`insert into oidc_signing_keys_rebuilt (${list}) select ${list} from oidc_signing_keys`.execute(db);
  await db.schema.dropTable("oidc_signing_keys").execute();
  await db.schema.alterTable("oidc_signing_keys_rebuilt").renameTo("oidc_signing_keys").execute();
}
