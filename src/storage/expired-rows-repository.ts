import type { Database } from "./database.ts";

/** How many rows each table lost in one sweep. */
export interface SweepCounts {
  oneTimeRecords: number;
  tokens: number;
  interactions: number;
  sessions: number;
  loginAttempts: number;
}

/** Deletes OIDC rows and sign-in attempts whose time is over (single-use records have their own, OneTimeRecords.deleteExpired); see ExpiredRowsSweeper for the margins. */
export class ExpiredRowsRepository {
  constructor(private readonly database: Database) {}

  async deleteExpired(cutoffs: {
    tokens: number;
    interactions: number;
    sessions: number;
    loginAttempts: number;
  }): Promise<Omit<SweepCounts, "oneTimeRecords">> {
    const db = this.database.db;
    const deleted = (result: { numDeletedRows: bigint }) => Number(result.numDeletedRows);
    return {
      tokens: deleted(await db.deleteFrom("oidc_tokens").where("expires_at", "<", cutoffs.tokens).executeTakeFirst()),
      interactions: deleted(await db.deleteFrom("oidc_interactions").where("expires_at", "<", cutoffs.interactions).executeTakeFirst()),
      sessions: deleted(await db.deleteFrom("oidc_sessions").where("expires_at", "<", cutoffs.sessions).executeTakeFirst()),
      loginAttempts: deleted(await db.deleteFrom("login_attempts").where("attempted_at", "<=", cutoffs.loginAttempts).executeTakeFirst()),
    };
  }
}
