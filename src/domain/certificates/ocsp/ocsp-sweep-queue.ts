import type { OcspResponseKey } from "./ocsp-response-store.ts";

/** Certificates the sweep claimed for one round, under one lease. */
export interface SweepClaim {
  keys: OcspResponseKey[];
  leaseToken: string;
}

/**
 * The certificates the OCSP sweep may ask for, by issuing anchor and serial
 * number, each with the time it is next due. Instances sharing a database
 * claim from it with a lease, so that no two ask for one certificate at once.
 */
export interface OcspSweepQueue {
  /**
   * Up to `limit` certificates due at `now` and not leased, longest due
   * first, leased until now + leaseMs. Claims of every instance take turns:
   * a claim takes the turn (until its lease ends) and gets none while
   * another holds it or before the time it was given back for.
   */
  claim(now: number, limit: number, leaseMs: number): Promise<SweepClaim>;
  /** The claim gives the turn back: the next claim may be made at nextClaimAt. Nothing when it no longer holds it. */
  endTurn(leaseToken: string, nextClaimAt: number): Promise<void>;
  /** The certificate is next due at dueAt, and its lease ends; nothing when the lease is no longer this claim's. */
  reschedule(key: OcspResponseKey, leaseToken: string, dueAt: number): Promise<void>;
}
