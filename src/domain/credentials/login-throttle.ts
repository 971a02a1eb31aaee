import { systemClock, type Clock } from "../clock.ts";
import { addressKey } from "./client-address.ts";

/**
 * Limits failed logins in a sliding window, counted both per account (against
 * guessing one user's password from many addresses) and per client address
 * (against trying many accounts from one place). Check before verifying a
 * password, record the outcome after.
 *
 * State lives in memory, per process: several replicas each allow the full
 * limits, and a restart forgets everything. Memory is bounded: each key keeps
 * at most `limit` timestamps, expired ones are dropped as keys are touched and
 * in periodic sweeps, and past `maxTrackedKeys` per scope the keys whose last
 * failure is oldest are forgotten first.
 *
 * Accounts are compared after NFKC normalization and lower-casing, so case
 * variants of one login share a counter (at worst stricter than needed when
 * logins are case-sensitive). Addresses are grouped by addressKey (IPv6 per /64).
 */

export interface LoginThrottleOptions {
  /** Failures per account within the window before further attempts are refused; default 5. */
  maxFailuresPerAccount?: number;
  /** Failures per client address within the window; default 20. */
  maxFailuresPerAddress?: number;
  /** Default 15 minutes. */
  windowMs?: number;
  /** Per scope; default 10 000. */
  maxTrackedKeys?: number;
}

export type ThrottleScope = "account" | "address";

export type ThrottleDecision =
  | { allowed: true }
  | { allowed: false; retryAfterSeconds: number; scope: ThrottleScope };

/** How many failures are recorded between sweeps of expired keys. */
const sweepEvery = 1000;

export class LoginThrottle {
  private readonly clock: Clock;
  private readonly windowMs: number;
  private readonly maxTrackedKeys: number;
  private readonly counters: Record<ThrottleScope, FailureCounter>;
  private recordedSinceSweep = 0;

  constructor(clock: Clock = systemClock, options: LoginThrottleOptions = {}) {
    this.clock = clock;
    this.windowMs = positiveInteger(options.windowMs ?? 15 * 60 * 1000, "windowMs");
    this.maxTrackedKeys = positiveInteger(options.maxTrackedKeys ?? 10_000, "maxTrackedKeys");
    this.counters = {
      account: new FailureCounter(positiveInteger(options.maxFailuresPerAccount ?? 5, "maxFailuresPerAccount")),
      address: new FailureCounter(positiveInteger(options.maxFailuresPerAddress ?? 20, "maxFailuresPerAddress")),
    };
  }

  /** Whether a login attempt may go ahead. When both scopes are blocked, the longer wait is reported. */
  check(account: string, address: string): ThrottleDecision {
    const now = this.clock();
    const horizon = now - this.windowMs;
    let decision: ThrottleDecision = { allowed: true };
    for (const [scope, key] of this.keys(account, address)) {
      const oldest = this.counters[scope].oldestBlocking(key, horizon);
      if (oldest === undefined) continue;
      const retryAfterSeconds = Math.max(1, Math.ceil((oldest + this.windowMs - now) / 1000));
      if (decision.allowed || retryAfterSeconds > decision.retryAfterSeconds) {
        decision = { allowed: false, retryAfterSeconds, scope };
      }
    }
    return decision;
  }

  recordFailure(account: string, address: string): void {
    const now = this.clock();
    const horizon = now - this.windowMs;
    if (++this.recordedSinceSweep >= sweepEvery) {
      this.recordedSinceSweep = 0;
      for (const counter of Object.values(this.counters)) counter.sweep(horizon);
    }
    for (const [scope, key] of this.keys(account, address)) {
      this.counters[scope].record(key, now, horizon, this.maxTrackedKeys);
    }
  }

  /**
   * Clears the account's failures. The address's stay: otherwise a client
   * could reset its address count by logging in to an account of its own
   * between guesses at others.
   */
  recordSuccess(account: string): void {
    this.counters.account.clear(accountKey(account));
  }

  /** How many keys each scope tracks now (expired ones may linger until touched or swept). */
  trackedKeys(): Record<ThrottleScope, number> {
    return { account: this.counters.account.size, address: this.counters.address.size };
  }

  private keys(account: string, address: string): [ThrottleScope, string][] {
    return [
      ["account", accountKey(account)],
      ["address", addressKey(address)],
    ];
  }
}

/** Failure timestamps per key, in a Map ordered by each key's latest failure. */
class FailureCounter {
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly limit: number) {}

  get size(): number {
    return this.failures.size;
  }

  /** When the key is at its limit, the timestamp whose expiry lifts the block; else undefined. */
  oldestBlocking(key: string, horizon: number): number | undefined {
    const times = this.current(key, horizon);
    return times.length >= this.limit ? times[0] : undefined;
  }

  record(key: string, now: number, horizon: number, maxKeys: number): void {
    const times = this.current(key, horizon);
    times.push(now);
    // Only the latest `limit` failures can decide a block.
    if (times.length > this.limit) times.splice(0, times.length - this.limit);
    this.failures.delete(key);
    this.failures.set(key, times);
    if (this.failures.size > maxKeys) this.sweep(horizon);
    for (const oldestKey of this.failures.keys()) {
      if (this.failures.size <= maxKeys) break;
      this.failures.delete(oldestKey);
    }
  }

  clear(key: string): void {
    this.failures.delete(key);
  }

  sweep(horizon: number): void {
    for (const [key, times] of this.failures) {
      if (times.length === 0 || times[times.length - 1]! <= horizon) this.failures.delete(key);
    }
  }

  /** The key's unexpired timestamps (dropping expired ones in place), oldest first. */
  private current(key: string, horizon: number): number[] {
    const times = this.failures.get(key);
    if (times === undefined) return [];
    const firstLive = times.findIndex((time) => time > horizon);
    if (firstLive === -1) {
      this.failures.delete(key);
      return [];
    }
    if (firstLive > 0) times.splice(0, firstLive);
    return times;
  }
}

function accountKey(account: string): string {
  return account.normalize("NFKC").toLowerCase();
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive integer`);
  return value;
}
