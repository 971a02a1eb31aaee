import { sql } from "kysely";
import { newId } from "../domain/ids.ts";
import type {
  ClaimedLogout,
  EndedSessions,
  LogoutAfterAttempt,
  LogoutAttemptResult,
  LogoutOutboxStore,
} from "../domain/oidc/backchannel-logout/model.ts";
import { sqliteTurnTransactions, type StatementCalls } from "./coalesced-calls.ts";
import type { Database } from "./database.ts";
import { endSessions } from "./ended-sessions.ts";
import { maxExcerptChars } from "./webhooks-repository.ts";

/** Who was issued codes in which session, and the outbox of logout tokens (migration 0030). */
export class LogoutOutboxRepository implements LogoutOutboxStore {
  /** Taken once, as in WebhooksRepository: the loop's statements run in the background. */
  private readonly db: Database["db"];
  /** On SQLite the attempts finished in one turn of the event loop are recorded in one transaction, as the webhooks' are. */
  private readonly sqliteFinishes: StatementCalls<Finish, boolean>;

  constructor(private readonly database: Database) {
    this.db = database.db;
    this.sqliteFinishes = sqliteTurnTransactions(this.db, finishOne, 64);
  }

  endSessions(selection: EndedSessions, now: number): Promise<{ sessions: number; deliveries: number }> {
    return endSessions(this.db, selection, now);
  }

  async claimDue(now: number, leaseMs: number, limit: number): Promise<ClaimedLogout[]> {
    const token = newId();
    const postgres = this.database.dialect === "postgres";
    // One statement, as WebhooksRepository.claimDue: rows another instance is claiming are skipped on PostgreSQL.
    const result = await sql<{ id: string; client_id: string; user_id: string; sid: string; attempts: number | string; lease_token: string }>`
      update oidc_logout_deliveries set lease_token = ${token}, lease_until = ${now + leaseMs}, updated_at = ${now}
      where id in (
        select d.id from oidc_logout_deliveries d
        where d.state = 'pending' and d.next_attempt_at <= ${now} and (d.lease_until is null or d.lease_until <= ${now})
        order by d.next_attempt_at
        limit ${limit}
        ${postgres ? sql`for update of d skip locked` : sql``})
      returning id, client_id, user_id, sid, attempts, lease_token`.execute(this.db);
    return result.rows.map((r) => ({ id: r.id, clientId: r.client_id, userId: r.user_id, sid: r.sid, attempts: Number(r.attempts), leaseToken: r.lease_token }));
  }

  finishAttempt(d: ClaimedLogout, result: LogoutAttemptResult, after: LogoutAfterAttempt, now: number): Promise<boolean> {
    const finish = { d, result, after, now };
    return this.database.dialect === "postgres" ? finishOne(this.db, finish) : this.sqliteFinishes.call(finish);
  }

  async prune(before: number): Promise<number> {
    const result = await this.db.deleteFrom("oidc_logout_deliveries").where("state", "<>", "pending").where("updated_at", "<", before).executeTakeFirst();
    // A code issued while its session was being ended can leave a pair behind that no session end will read.
    await this.db
      .deleteFrom("oidc_session_clients")
      .where("created_at", "<", before)
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom("oidc_sessions as s").select("s.id_hash").whereRef("s.id_hash", "=", "oidc_session_clients.session_id_hash"))))
      .execute();
    return Number(result.numDeletedRows);
  }
}

/** An attempt to record: its claim, its outcome and the delivery's next state. */
interface Finish {
  d: ClaimedLogout;
  result: LogoutAttemptResult;
  after: LogoutAfterAttempt;
  now: number;
}

/** An attempt's outcome, recorded only while the delivery's lease is still this claim's; whether it was. */
async function finishOne(db: Database["db"], { d, result, after, now }: Finish): Promise<boolean> {
  const updated = await db
    .updateTable("oidc_logout_deliveries")
    .set({
      state: after.state,
      attempts: d.attempts + 1,
      next_attempt_at: after.state === "pending" ? after.nextAttemptAt : now,
      lease_token: null,
      lease_until: null,
      last_status_code: result.statusCode,
      last_error: result.error === null ? null : result.error.slice(0, maxExcerptChars),
      updated_at: now,
    })
    .where("id", "=", d.id)
    .where("lease_token", "=", d.leaseToken)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}
