import { createHmac } from "node:crypto";
import { systemClock, type Clock } from "../clock.ts";
import { newTimeOrderedId } from "../ids.ts";
import { addressKey } from "./client-address.ts";

/**
 * Limits failed sign-in attempts in a sliding window, in three scopes at once:
 *
 * - the account at one client address (`account_at_address`): the usual
 *   lock, which only pauses guessing from there, so someone guessing from
 *   elsewhere cannot lock the holder out at home;
 * - the account from every address (`account`): a higher limit against
 *   guessing one password from many places;
 * - the address whatever the accounts (`address`): against trying many
 *   accounts from one place.
 *
 * Each factor (a password, a one-time code) is counted apart: a wrong code
 * does not use up password attempts, nor the reverse, and a step that asks
 * for both keeps the failure of the one that was wrong.
 *
 * An attempt is a reservation taken before the secret is checked: the
 * attempts in the window are counted and, if there is room, this one is
 * written, in one step that excludes every other reservation of the same
 * account or address (see LoginAttemptStore.exclusively). So a burst of
 * concurrent guesses cannot all pass a check made before any of them is
 * recorded: exactly the limit are admitted. A failed check keeps its
 * reservation (it is a failure now); a successful one removes it and clears
 * the account's failures. The reservations live in the database, so the
 * limits hold across every instance sharing it, and survive restarts; they
 * are keyed by the login as typed, never by the user record, so a lock
 * outlasts a password reset, and an unknown login is counted and answered
 * exactly like a known one. An instance that dies while checking leaves its
 * reservation counted as a failure until the window passes: the safe side.
 *
 * Accounts are compared after NFKC normalization and lower-casing, so case
 * variants of one login share a counter; addresses are grouped by addressKey
 * (IPv6 per /64). Both are stored only as HMACs under the server key.
 */

export interface LoginThrottleOptions {
  /** Failures of one account from one address within the window before further ones are refused; no such limit without it. */
  maxFailuresPerAccountAtAddress?: number;
  /** Failures of one account from all addresses within the window; default 5. */
  maxFailuresPerAccount?: number;
  /** Failures from one client address, whatever the accounts; default 20. */
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

export type ThrottleScope = "account_at_address" | "account" | "address";

/** One reservation, as stored. */
export interface LoginAttempt {
  id: string;
  accountKey: string;
  addressKey: string;
  attemptedAt: number;
}

/** Reads and writes inside LoginAttemptStore.exclusively. */
export interface ExclusiveAttempts {
  /** Times of the attempts with the given keys (both when both are given) after `after` (exclusive), oldest first. */
  attemptTimes(keys: { accountKey?: string; addressKey?: string }, after: number): Promise<number[]>;
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

/** What a check says: `ok` with what it proved, or not with which factor was wrong. */
export type Verdict<T, F> = { ok: true; value: T } | { ok: false; reason: F };

export type AttemptOutcome<T, F> =
  | { outcome: "refused"; retryAfterSeconds: number; scope: ThrottleScope }
  /**
   * `attemptsLeft`: how many more failures of this factor are admitted before
   * the next is refused (1: warn; 0: this one paused it, for
   * `retryAfterSeconds`).
   */
  | { outcome: "failed"; reason: F; attemptsLeft: number; retryAfterSeconds?: number }
  | { outcome: "succeeded"; value: T };

type Refusal = { outcome: "refused"; retryAfterSeconds: number; scope: ThrottleScope };

/** What one factor's counters say once this attempt is counted: attempts left, and the wait if none. */
interface Headroom {
  attemptsLeft: number;
  retryAfterSeconds: number | undefined;
}

export class LoginThrottle {
  private readonly windowMs: number;
  private readonly limits: Partial<Record<ThrottleScope, number>>;
  private readonly purpose: string;

  constructor(
    private readonly store: LoginAttemptStore,
    private readonly secretKey: Buffer,
    private readonly clock: Clock = systemClock,
    options: LoginThrottleOptions = {},
  ) {
    this.windowMs = positiveInteger(options.windowMs ?? 15 * 60 * 1000, "windowMs");
    this.limits = {
      ...(options.maxFailuresPerAccountAtAddress !== undefined
        ? { account_at_address: positiveInteger(options.maxFailuresPerAccountAtAddress, "maxFailuresPerAccountAtAddress") }
        : {}),
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
  async admit(account: string, address: string): Promise<Refusal | undefined> {
    const now = this.clock();
    const reserved = await this.reserve([this.reservation("request", account, address, now)], now);
    return "refused" in reserved ? reserved.refused : undefined;
  }

  /**
   * Runs `check` (a password, a one-time code…) for the account from the
   * address, unless a limit of one of `factors` is reached. The check's
   * failure names the factor that was wrong; only that factor's failure is
   * kept. Only the attempts made through this method count.
   */
  async attempt<T, F extends string>(
    account: string,
    address: string,
    factors: readonly F[],
    check: () => Promise<Verdict<T, F>>,
  ): Promise<AttemptOutcome<T, F>> {
    if (factors.length === 0) throw new TypeError("an attempt needs at least one factor");
    const now = this.clock();
    const reservations = new Map(factors.map((factor) => [factor, this.reservation(factor, account, address, now)] as const));
    const reserved = await this.reserve([...reservations.values()], now);
    if ("refused" in reserved) return reserved.refused;
    let kept: LoginAttempt | undefined;
    try {
      const verdict = await check();
      if (!verdict.ok) {
        kept = reservations.get(verdict.reason);
        if (!kept) throw new TypeError(`the check failed on ${verdict.reason}, which is not one of its factors`);
        const room = reserved.headroom[[...reservations.keys()].indexOf(verdict.reason)]!;
        return {
          outcome: "failed",
          reason: verdict.reason,
          attemptsLeft: room.attemptsLeft,
          ...(room.retryAfterSeconds !== undefined ? { retryAfterSeconds: room.retryAfterSeconds } : {}),
        };
      }
      for (const reservation of reservations.values()) await this.store.forgetAccount(reservation.accountKey);
      return { outcome: "succeeded", value: verdict.value };
    } finally {
      for (const reservation of reservations.values()) if (reservation !== kept) await this.store.remove(reservation.id);
    }
  }

  private reservation(factor: string, account: string, address: string, now: number): LoginAttempt {
    return {
      id: newTimeOrderedId(now),
      accountKey: this.key(factor, "account", normalizeAccount(account)),
      addressKey: this.key(factor, "address", addressKey(address)),
      attemptedAt: now,
    };
  }

  /**
   * Records the attempts unless a limit is reached, under the keys' lock:
   * the refusal when one is, else each factor's headroom once its attempt counts.
   */
  private reserve(reservations: LoginAttempt[], now: number): Promise<{ refused: Refusal } | { headroom: Headroom[] }> {
    const keys = reservations.flatMap((r) => [r.accountKey, r.addressKey]);
    return this.store.exclusively(keys, async (attempts) => {
      const counted = [];
      for (const reservation of reservations) counted.push(await this.count(attempts, reservation, now));
      const refusals = counted.flatMap((scopes) => scopes.map((scope) => this.refusal(scope, now)).filter((r) => r !== undefined));
      if (refusals.length > 0) return { refused: refusals.reduce((a, b) => (b.retryAfterSeconds > a.retryAfterSeconds ? b : a)) };
      for (const reservation of reservations) await attempts.insert(reservation);
      return { headroom: counted.map((scopes) => this.headroom(scopes, now)) };
    });
  }

  /** The attempts in the window under each limited scope of one reservation. */
  private async count(attempts: ExclusiveAttempts, reservation: LoginAttempt, now: number) {
    const horizon = now - this.windowMs;
    const where: Record<ThrottleScope, { accountKey?: string; addressKey?: string }> = {
      account_at_address: { accountKey: reservation.accountKey, addressKey: reservation.addressKey },
      account: { accountKey: reservation.accountKey },
      address: { addressKey: reservation.addressKey },
    };
    // One after the other: the store's reads run on one connection or transaction.
    const counted: { scope: ThrottleScope; limit: number; times: number[] }[] = [];
    for (const scope of Object.keys(this.limits) as ThrottleScope[]) {
      counted.push({ scope, limit: this.limits[scope]!, times: await attempts.attemptTimes(where[scope], horizon) });
    }
    return counted;
  }

  /** Refused when the scope already holds its limit of attempts in the window; the wait until one more fits. */
  private refusal(counted: { scope: ThrottleScope; limit: number; times: number[] }, now: number): Refusal | undefined {
    if (counted.times.length < counted.limit) return undefined;
    return { outcome: "refused", retryAfterSeconds: this.wait(counted.times, counted.limit, now), scope: counted.scope };
  }

  /** With this attempt counted: how many more fit in the tightest scope, and, when none, how long until one does. */
  private headroom(counted: { limit: number; times: number[] }[], now: number): Headroom {
    let attemptsLeft = Infinity;
    let retryAfterSeconds: number | undefined;
    for (const { limit, times } of counted) {
      const left = limit - times.length - 1;
      attemptsLeft = Math.min(attemptsLeft, left);
      if (left === 0) retryAfterSeconds = Math.max(retryAfterSeconds ?? 0, this.wait([...times, now], limit, now));
    }
    return { attemptsLeft, retryAfterSeconds };
  }

  /** The wait until enough of `times` have left the window for one more to fit under `limit`. */
  private wait(times: number[], limit: number, now: number): number {
    const lifting = times[times.length - limit]!;
    return Math.max(1, Math.ceil((lifting + this.windowMs - now) / 1000));
  }

  private key(factor: string, scope: "account" | "address", value: string): string {
    return createHmac("sha256", this.secretKey).update(`${this.purpose}:${factor}:${scope}:${value}`).digest("base64url");
  }
}

function normalizeAccount(account: string): string {
  return account.normalize("NFKC").toLowerCase();
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive integer`);
  return value;
}
