import type { Selectable } from "kysely";
import type { SigningKeyRow, StoredPublicJwk } from "../domain/oidc/model.ts";
import type { SigningKeyStore } from "../domain/oidc/stores.ts";
import type { Database } from "./database.ts";
import type { OidcSigningKeyTable } from "./schema.ts";

/** The OpenID Connect provider's signing keys. */
export class SigningKeysRepository implements SigningKeyStore {
  constructor(private readonly database: Database) {}

  private get db() {
    return this.database.db;
  }

  /**
   * The algorithm's key of the highest generation, retired or not: the one
   * that signs unless it is retired. One row from one statement, so what it
   * says about "is there an active key" and "which generation comes next" agrees.
   */
  async findNewest(alg: string): Promise<SigningKeyRow | undefined> {
    const row = await this.db
      .selectFrom("oidc_signing_keys")
      .selectAll()
      .where("alg", "=", alg)
      .orderBy("generation", "desc")
      .limit(1)
      .executeTakeFirst();
    return row && toRow(row);
  }

  /**
   * Inserts the key unless its generation (within its alg) or its kid is
   * taken; true if it was inserted. One statement, so of several instances
   * inserting the same generation of an algorithm at once exactly one
   * succeeds and the others see false (migration 0018).
   */
  async insertIfAbsent(key: SigningKeyRow): Promise<boolean> {
    const result = await this.db
      .insertInto("oidc_signing_keys")
      .values({
        kid: key.kid,
        generation: key.generation,
        alg: key.alg,
        public_jwk: JSON.stringify(key.publicJwk),
        private_jwk_sealed: key.privateJwkSealed,
        created_at: key.createdAt,
        activated_at: key.activatedAt,
        retired_at: key.retiredAt,
      })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  /** Retires every unretired key of alg older than the given generation; returns how many. */
  async retireOlderThan(alg: string, generation: number, now: number): Promise<number> {
    const result = await this.db
      .updateTable("oidc_signing_keys")
      .set({ retired_at: now })
      .where("alg", "=", alg)
      .where("retired_at", "is", null)
      .where("generation", "<", generation)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** Keys to publish: unretired ones and those retired after `retiredAfter`; by alg, newest first. */
  async listPublished(retiredAfter: number): Promise<SigningKeyRow[]> {
    const rows = await this.db
      .selectFrom("oidc_signing_keys")
      .selectAll()
      .where((eb) => eb.or([eb("retired_at", "is", null), eb("retired_at", ">", retiredAfter)]))
      .orderBy("alg")
      .orderBy("generation", "desc")
      .execute();
    return rows.map(toRow);
  }
}

function toRow(row: Selectable<OidcSigningKeyTable>): SigningKeyRow {
  return {
    kid: row.kid,
    generation: Number(row.generation),
    alg: row.alg,
    publicJwk: JSON.parse(row.public_jwk) as StoredPublicJwk,
    privateJwkSealed: row.private_jwk_sealed,
    createdAt: Number(row.created_at),
    activatedAt: Number(row.activated_at),
    retiredAt: row.retired_at === null ? null : Number(row.retired_at),
  };
}
