import { createHmac } from "node:crypto";
import { systemClock, type Clock } from "../clock.ts";
import { newTimeOrderedId } from "../ids.ts";
import { addressKey } from "./client-address.ts";

/**
 * Limits sign-in attempts in a sliding window, counted both per account
 * (against guessing one user's password from many addresses) and per client
 * address (against trying many accounts from one place).
 *
 * An attempt is a reservation taken before the secret is checked: the
 * attempts in the window are counted and, if there is room, this one is
 * written, in one step that excludes every other reservation of the same
 * account or address (see LoginAttemptStore.exclusively). So a burst of
 * concurrent guesses cannot all pass a check made before any of them is
 * recorded: exactly the limit are admitted. A failed check keeps its
 * reservation (it is a failure now); a successful one removes it. The
 * reservations live in the database, so the limits hold across every
 * instance sharing it, and survive restarts. An instance that dies while
 * checking leaves its reservation counted as a failure until the window
 * passes: the safe side.
 *
 * Accounts are compared after NFKC normalization and lower-casing, so case
 * variants of one login share a counter; addresses are grouped by addressKey
 * (IPv6 per /64). Both are stored only as HMACs under the server key.
 */

export interface LoginThrottleOptions {
  /** Attempts per account within the window before further ones are refused; default 5. */
  maxFailuresPerAccount?: number;
  /** Attempts per client address within the window; default 20. */
  maxFailuresPerAddress?: number;
  /** Default 15 minutes. */
  windowMs?: number;
  /**
   * Names what is counted, so that several throttles share the attempts
   * table without sharing counters (the keys are HMACs of it); default
   * "login-throttle".
   */
  purpose?: string;
}

export type ThrottleScope = "account" | "address";

/** One reservation, as stored. */
export interface LoginAttempt {
  id: string;
  accountKey: string;
  addressKey: string;
  attemptedAt: number;
}

/** Reads and writes inside LoginAttemptStore.exclusively. */
export interface ExclusiveAttempts {
  /** Times of the attempts under the key after `after` (exclusive), oldest first. */
  attemptTimes(scope: ThrottleScope, key: string, after: number): Promise<number[]>;
  insert(attempt: LoginAttempt): Promise<void>;
}

/** Where attempts are kept; implemented by storage, shared by instances. */
export interface LoginAttemptStore {
  /**
   * Runs `work` so that no other `exclusively` naming any of the same keys
   * runs at the same time, in this process or any other on the database.
   */
  exclusively<T>(keys: string[], work: (attempts: ExclusiveAttempts) => Promise<T>): Promise<T>;
  remove(id: string): Promise<void>;
  /** Stops the account's attempts counting for the account (they still count for their addresses). */
  forgetAccount(accountKey: string): Promise<void>;
}

/** What a check says: `ok` with what it proved, or not with why not. */
export type Verdict<T, F> = { ok: true; value: T } | { ok: false; reason: F };

export type AttemptOutcome<T, F> =
  | { outcome: "refused"; retryAfterSeconds: number; scope: ThrottleScope }
  | { outcome: "failed"; reason: F }
  | { outcome: "succeeded"; value: T };

export class LoginThrottle {
  private readonly windowMs: number;
  private readonly limits: Record<ThrottleScope, number>;
  private readonly purpose: string;

  constructor(
    private readonly store: LoginAttemptStore,
    private readonly secretKey: Buffer,
    private readonly clock: Clock = systemClock,
    options: LoginThrottleOptions = {},
  ) {
    this.windowMs = positiveInteger(options.windowMs ?? 15 * 60 * 1000, "windowMs");
    this.limits = {
      account: positiveInteger(options.maxFailuresPerAccount ?? 5, "maxFailuresPerAccount"),
      address: positiveInteger(options.maxFailuresPerAddress ?? 20, "maxFailuresPerAddress"),
    };
    this.purpose = options.purpose ?? "login-throttle";
  }

  /**
   * Counts one request of the account from the address, unless the limits
   * are reached: for rate limits, where every request counts, not only
   * failures. Undefined when admitted.
   */
  async admit(account: string, address: string): Promise<AttemptOutcome<never, never> | undefined> {
    const now = this.clock();
    return this.reserve(this.reservation(account, address, now), now);
  }

  private reservation(account: string, address: string, now: number): LoginAttempt {
    return {
      id: newTimeOrderedId(now),
      accountKey: this.key("account", normalizeAccount(account)),
      addressKey: this.key("address", addressKey(address)),
      attemptedAt: now,
    };
  }

  /** Records the attempt unless the limits are reached, under the keys' lock; the refusal when they are. */
  private reserve(reservation: LoginAttempt, now: number) {
    return this.store.exclusively([reservation.accountKey, reservation.addressKey], async (attempts) => {
      const refused = await this.refusal(attempts, reservation, now);
      if (!refused) await attempts.insert(reservation);
      return refused;
    });
  }

  /**
   * Runs `check` (a password, a one-time code…) for the account from the
   * address, unless the limits are reached. Only the attempts made through
   * this method count.
   */
  async attempt<T, F>(account: string, address: string, check: () => Promise<Verdict<T, F>>): Promise<AttemptOutcome<T, F>> {
    const now = this.clock();
    const reservation = this.reservation(account, address, now);
    const refusal = await this.reserve(reservation, now);
    if (refusal) return refusal;
    let keep = false;
    try {
      const verdict = await check();
      if (!verdict.ok) {
        keep = true;
        return { outcome: "failed", reason: verdict.reason };
      }
      await this.store.forgetAccount(reservation.accountKey);
      return { outcome: "succeeded", value: verdict.value };
    } finally {
      if (!keep) await this.store.remove(reservation.id);
    }
  }

  /** Refused when either scope already holds its limit of attempts in the window. When both do, the longer wait. */
  private async refusal(
    attempts: ExclusiveAttempts,
    reservation: LoginAttempt,
    now: number,
  ): Promise<AttemptOutcome<never, never> | undefined> {
    const horizon = now - this.windowMs;
    let refusal: { outcome: "refused"; retryAfterSeconds: number; scope: ThrottleScope } | undefined;
    const scopes: [ThrottleScope, string][] = [
      ["account", reservation.accountKey],
      ["address", reservation.addressKey],
    ];
    for (const [scope, key] of scopes) {
      const limit = this.limits[scope];
      const times = await attempts.attemptTimes(scope, key, horizon);
      if (times.length < limit) continue;
      // The wait until enough of them have left the window for one more to fit.
      const lifting = times[times.length - limit]!;
      const retryAfterSeconds = Math.max(1, Math.ceil((lifting + this.windowMs - now) / 1000));
      if (!refusal || retryAfterSeconds > refusal.retryAfterSeconds) refusal = { outcome: "refused", retryAfterSeconds, scope };
    }
    return refusal;
  }

  private key(scope: ThrottleScope, value: string): string {
    return createHmac("sha256", this.secretKey).update(`${this.purpose}:${scope}:${value}`).digest("base64url");
  }
}

function normalizeAccount(account: string): string {
  return account.normalize("NFKC").toLowerCase();
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive integer`);
  return value;
}
