import type { Database } from "./database.ts";

/** How many rows each table lost in one sweep. */
export interface SweepCounts {
  oneTimeRecords: number;
  tokens: number;
  interactions: number;
  sessions: number;
}

/** Deletes rows whose time is over; see ExpiredRowsSweeper for the margins. */
export class ExpiredRowsRepository {
  constructor(private readonly database: Database) {}

  async deleteExpired(cutoffs: { oneTimeRecords: number; tokens: number; interactions: number; sessions: number }): Promise<SweepCounts> {
    const db = this.database.db;
    const deleted = (result: { numDeletedRows: bigint }) => Number(result.numDeletedRows);
    return {
      oneTimeRecords: deleted(await db.deleteFrom("one_time_records").where("expires_at", "<", cutoffs.oneTimeRecords).executeTakeFirst()),
      tokens: deleted(await db.deleteFrom("oidc_tokens").where("expires_at", "<", cutoffs.tokens).executeTakeFirst()),
      interactions: deleted(await db.deleteFrom("oidc_interactions").where("expires_at", "<", cutoffs.interactions).executeTakeFirst()),
      sessions: deleted(await db.deleteFrom("oidc_sessions").where("expires_at", "<", cutoffs.sessions).executeTakeFirst()),
    };
  }
}
