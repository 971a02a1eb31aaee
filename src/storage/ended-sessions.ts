import type { Kysely, Transaction } from "kysely";
import { newId } from "../domain/ids.ts";
import type { EndedSessions } from "../domain/oidc/backchannel-logout/model.ts";
import type { Tables } from "./schema.ts";

/** Ids in one `in (…)` at most (both databases bound the number of parameters). */
const chunkSize = 500;

/**
 * Deletes the selected sessions and queues, in the same transaction, one
 * logout delivery per (session, client issued a code in it that has a
 * backchannel_logout_uri now). The sessions are deleted first, with
 * `returning`: of two transactions ending the same session, the second
 * waits for the first's row lock and then deletes (and queues) nothing.
 * Every way a session ends calls this, the expiry sweep included.
 */
export async function endSessionsIn(trx: Transaction<Tables>, selection: EndedSessions, now: number): Promise<{ sessions: number; deliveries: number }> {
  let query = trx.deleteFrom("oidc_sessions");
  if ("idHash" in selection) query = query.where("id_hash", "=", selection.idHash);
  else if ("userId" in selection) query = query.where("user_id", "=", selection.userId);
  else query = query.where("expires_at", "<", selection.expiredBefore);
  const ended = (await query.returning("id_hash").execute()).map((row) => row.id_hash);
  let deliveries = 0;
  for (let i = 0; i < ended.length; i += chunkSize) {
    const hashes = ended.slice(i, i + chunkSize);
    const pairs = await trx.deleteFrom("oidc_session_clients").where("session_id_hash", "in", hashes).returning(["client_id", "sid", "user_id"]).execute();
    if (!pairs.length) continue;
    const listening = await trx
      .selectFrom("oidc_clients")
      .select("client_id")
      .where("client_id", "in", [...new Set(pairs.map((p) => p.client_id))])
      .where("backchannel_logout_uri", "is not", null)
      .execute();
    const told = new Set(listening.map((c) => c.client_id));
    const rows = pairs
      .filter((p) => told.has(p.client_id))
      .map((p) => ({
        id: newId(),
        client_id: p.client_id,
        user_id: p.user_id,
        sid: p.sid,
        state: "pending",
        attempts: 0,
        next_attempt_at: now,
        lease_token: null,
        lease_until: null,
        last_status_code: null,
        last_error: null,
        created_at: now,
        updated_at: now,
      }));
    for (let j = 0; j < rows.length; j += 100) await trx.insertInto("oidc_logout_deliveries").values(rows.slice(j, j + 100)).execute();
    deliveries += rows.length;
  }
  return { sessions: ended.length, deliveries };
}

/** The same, in a transaction of its own. */
export function endSessions(db: Kysely<Tables>, selection: EndedSessions, now: number): Promise<{ sessions: number; deliveries: number }> {
  return db.transaction().execute((trx) => endSessionsIn(trx, selection, now));
}
