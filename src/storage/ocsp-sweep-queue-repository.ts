import { sql } from "kysely";
import type { OcspResponseKey } from "../domain/certificates/ocsp/ocsp-response-store.ts";
import type { OcspSweepQueue, SweepClaim } from "../domain/certificates/ocsp/ocsp-sweep-queue.ts";
import { newId } from "../domain/ids.ts";
import type { Database } from "./database.ts";

/** The OCSP sweep's queue (migration 0035). */
export class OcspSweepQueueRepository implements OcspSweepQueue {
  constructor(private readonly database: Database) {}

  /**
   * In one transaction: the turn is taken (its row locked on PostgreSQL, so
   * a claim at the same time waits and then finds the turn taken; on SQLite
   * the transaction holds the one write lock), and the longest due rows
   * whose lease is free or lapsed are leased to a token of this claim.
   */
  async claim(now: number, limit: number, leaseMs: number): Promise<SweepClaim> {
    const leaseToken = newId();
    const postgres = this.database.dialect === "postgres";
    return this.database.db.transaction().execute(async (trx) => {
      const turn = await sql`update ocsp_sweep_turn set next_claim_at = ${now + leaseMs}, holder = ${leaseToken}
        where id = 1 and next_claim_at <= ${now} returning id`.execute(trx);
      if (turn.rows.length === 0) return { leaseToken, keys: [] };
      const result = await sql<{ issuer_anchor: string; serial_number: string }>`
        update ocsp_sweep_queue set lease_token = ${leaseToken}, leased_until = ${now + leaseMs}
        where (issuer_anchor, serial_number) in (
          select issuer_anchor, serial_number from ocsp_sweep_queue
          where due_at <= ${now} and (leased_until is null or leased_until <= ${now})
          order by due_at
          limit ${limit}
          ${postgres ? sql`for update skip locked` : sql``})
        returning issuer_anchor, serial_number`.execute(trx);
      return { leaseToken, keys: result.rows.map((r) => ({ issuerAnchor: r.issuer_anchor, serialNumber: r.serial_number })) };
    });
  }

  async endTurn(leaseToken: string, nextClaimAt: number): Promise<void> {
    await this.database.db.updateTable("ocsp_sweep_turn").set({ next_claim_at: nextClaimAt, holder: null }).where("id", "=", 1).where("holder", "=", leaseToken).execute();
  }

  async reschedule(key: OcspResponseKey, leaseToken: string, dueAt: number): Promise<void> {
    await this.database.db
      .updateTable("ocsp_sweep_queue")
      .set({ due_at: dueAt, lease_token: null, leased_until: null })
      .where("issuer_anchor", "=", key.issuerAnchor)
      .where("serial_number", "=", key.serialNumber)
      .where("lease_token", "=", leaseToken)
      .execute();
  }
}
