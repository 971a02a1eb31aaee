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
  /** Up to `limit` certificates due at `now` and not leased, longest due first, leased until now + leaseMs. */
  claim(now: number, limit: number, leaseMs: number): Promise<SweepClaim>;
  /** The certificate is next due at dueAt, and its lease ends; nothing when the lease is no longer this claim's. */
  reschedule(key: OcspResponseKey, leaseToken: string, dueAt: number): Promise<void>;
}
