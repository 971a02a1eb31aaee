import type { DpopProofStore } from "../domain/oidc/stores.ts";
import type { Database } from "./database.ts";

/**
 * Used DPoP proofs (migration 0017). One INSERT … ON CONFLICT per proof: the
 * primary key lets exactly one of concurrent uses insert (or take over an
 * expired row the sweeper has not deleted yet); the others change no row.
 */
export class DpopProofsRepository implements DpopProofStore {
  constructor(private readonly database: Database) {}

  async useOnce(proofHash: string, expiresAt: number, now: number): Promise<boolean> {
    const result = await this.database.db
      .insertInto("oidc_dpop_proof_jtis")
      .values({ jti_hash: proofHash, expires_at: expiresAt })
      .onConflict((oc) =>
        oc
          .column("jti_hash")
          .doUpdateSet({ expires_at: expiresAt })
          .where("oidc_dpop_proof_jtis.expires_at", "<=", now),
      )
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
  }
}
