import type { Clock } from "../clock.ts";
import type { OneTimeStore } from "../single-use.ts";

/** The tables the store sweeps, each by its own cutoff. */
export type SweptTable = "tokens" | "interactions" | "sessions" | "loginAttempts" | "ocspResponses" | "dpopProofs" | "jpkiSignRequests";

/** A number per swept table: its cutoff (epoch milliseconds), or the rows it lost. */
export type PerSweptTable = Record<SweptTable, number>;

/** How many rows each table lost in one sweep. */
export type SweepCounts = PerSweptTable & { oneTimeRecords: number };

/** Deletes the rows older than each table's cutoff and says how many (single-use records have their own). */
export interface ExpiredRowsStore {
  deleteExpired(cutoffs: PerSweptTable): Promise<PerSweptTable>;
}
/**
 * Keeps short-lived rows from piling up: anonymous authorization requests
 * create interactions, every flow creates codes and tokens. Interactions and
 * sessions go as soon as they expire. Single-use records (codes, request_uris,
 * assertion jtis, replay marks) and tokens are kept a day longer than their
 * lifetime, so that a late replay of a used code or rotated refresh token is
 * still recognised as one (and revokes what it must) rather than being taken
 * for an unknown value. Sign-in attempts go once they leave the throttle's window
 * (the longest window of the throttles sharing the table). Used DPoP proofs go
 * once their iat window has passed: a replay then fails the iat check.
 * Stored OCSP responses go once they are no longer usable: a lapsed response
 * never answers a check, and the next check fetches a fresh one.
 */
export class ExpiredRowsSweeper {
  static readonly replayMemoryMs = 24 * 60 * 60 * 1000;
  /** How long an ended interaction is kept past its expiry, so its page can still say "start again" with the way back. */
  static readonly endedInteractionMemoryMs = 60 * 60 * 1000;

  constructor(
    private readonly records: Pick<OneTimeStore, "deleteExpired">,
    private readonly repository: ExpiredRowsStore,
    private readonly clock: Clock,
    private readonly options: { loginAttemptWindowMs: number },
  ) {}

  async sweep(): Promise<SweepCounts> {
    const now = this.clock();
    const kept = now - ExpiredRowsSweeper.replayMemoryMs;
    const oneTimeRecords = await this.records.deleteExpired(kept);
    return { oneTimeRecords, ...(await this.repository.deleteExpired({
        tokens: kept,
        interactions: now - ExpiredRowsSweeper.endedInteractionMemoryMs,
        sessions: now,
        loginAttempts: now - this.options.loginAttemptWindowMs,
        ocspResponses: now,
        dpopProofs: now,
        // Kept a while past expiry, so that a late answer is told it expired rather than that there is no such request.
        jpkiSignRequests: kept,
      })) };
  }
}
