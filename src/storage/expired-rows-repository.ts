import type { ExpiredRowsStore, PerSweptTable } from "../domain/maintenance/expired-rows-sweeper.ts";
import type { Database } from "./database.ts";
import { endSessions } from "./ended-sessions.ts";


/** Deletes OIDC rows, sign-in attempts and lapsed OCSP responses whose time is over (single-use records have their own, OneTimeRecords.deleteExpired); see ExpiredRowsSweeper for the margins. */
export class ExpiredRowsRepository implements ExpiredRowsStore {
  constructor(private readonly database: Database) {}

  /** Each count is the rows deleted from that table. */
  async deleteExpired(cutoffs: PerSweptTable): Promise<PerSweptTable> {
    const db = this.database.db;
    const deleted = (result: { numDeletedRows: bigint }) => Number(result.numDeletedRows);
    return {
      // The certificate API's access tokens (migration 0033) are tokens too, kept as long, and so are revoked families (0037) once none of their tokens can be live.
      tokens:
        deleted(await db.deleteFrom("oidc_tokens").where("expires_at", "<", cutoffs.tokens).executeTakeFirst()) +
        deleted(await db.deleteFrom("api_access_tokens").where("expires_at", "<", cutoffs.tokens).executeTakeFirst()) +
        deleted(await db.deleteFrom("oidc_revoked_families").where("expires_at", "<", cutoffs.tokens).executeTakeFirst()),
      interactions: deleted(await db.deleteFrom("oidc_interactions").where("expires_at", "<", cutoffs.interactions).executeTakeFirst()),
      // An expired session ends like any other: its clients' logout tokens are queued with its deletion.
      sessions: (await endSessions(db, { expiredBefore: cutoffs.sessions }, cutoffs.sessions)).sessions,
      loginAttempts: deleted(await db.deleteFrom("login_attempts").where("attempted_at", "<=", cutoffs.loginAttempts).executeTakeFirst()),
      ocspResponses: deleted(await db.deleteFrom("ocsp_responses").where("usable_until", "<=", cutoffs.ocspResponses).executeTakeFirst()),
      dpopProofs: deleted(await db.deleteFrom("oidc_dpop_proof_jtis").where("expires_at", "<=", cutoffs.dpopProofs).executeTakeFirst()),
      jpkiSignRequests: deleted(await db.deleteFrom("oidc_jpki_sign_requests").where("expires_at", "<", cutoffs.jpkiSignRequests).executeTakeFirst()),
    };
  }
}
