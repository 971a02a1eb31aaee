import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoginThrottle, type LoginThrottleOptions } from "../../src/domain/credentials/login-throttle.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { LoginAttemptsRepository } from "../../src/storage/login-attempts-repository.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { runInWorkers } from "../support/workers.ts";

const targets = await databaseTargets();
const minute = 60_000;

for (const t of targets) {
  describe.skipIf(!!t.unavailable)(`login throttle on ${targetTitle(t)}`, () => {
    let scratch: ScratchDatabase;
    let database: Database;
    const secretKey = randomBytes(32);
    const time = { now: 1_700_000_000_000 };
    let start = time.now;
    const at = (ms: number) => {
      time.now = start + ms;
    };

    beforeAll(async () => {
      scratch = await t.create();
      database = await openDatabase(scratch.url);
      await migrateToLatest(database);
    });
    afterAll(async () => {
      await database?.close();
      await scratch?.drop();
    });

    /** A throttle over a fresh window (time moves on a day per test, so earlier tests' attempts are out of it). */
    function throttle(options: LoginThrottleOptions = {}): LoginThrottle {
      return new LoginThrottle(new LoginAttemptsRepository(database), secretKey, () => time.now, options);
    }
    const fresh = () => {
      start += 24 * 60 * minute;
      time.now = start;
    };
    const fail = (th: LoginThrottle, account: string, address: string, factor: "password" | "otp" = "password") =>
      th.attempt(account, address, [factor], async () => ({ ok: false as const, reason: factor }));
    const succeed = (th: LoginThrottle, account: string, address: string) =>
      th.attempt(account, address, ["password"], async () => ({ ok: true as const, value: account }));

    it("admits 5 failures for an account and refuses the 6th until the oldest is 15 minutes old", async () => {
      fresh();
      const th = throttle();
      for (let i = 0; i < 5; i++) {
        at(i * minute);
        expect(await fail(th, "alice", `192.0.2.${i}`)).toMatchObject({ outcome: "failed", reason: "password" });
      }
      at(5 * minute);
      expect(await fail(th, "alice", "198.51.100.7")).toEqual({ outcome: "refused", retryAfterSeconds: 600, scope: "account" });
      at(15 * minute - 1);
      expect(await fail(th, "alice", "198.51.100.7")).toEqual({ outcome: "refused", retryAfterSeconds: 1, scope: "account" });
      // The window slides: the first failure leaves it, one more attempt is admitted.
      at(15 * minute);
      expect(await fail(th, "alice", "198.51.100.7")).toMatchObject({ outcome: "failed" });
      expect(await succeed(th, "alice", "198.51.100.7")).toEqual({ outcome: "refused", retryAfterSeconds: 60, scope: "account" });
      at(19 * minute);
      expect(await succeed(th, "alice", "198.51.100.7")).toEqual({ outcome: "succeeded", value: "alice" });
    });

    it("counts case variants of one account together, and other accounts apart", async () => {
      fresh();
      const th = throttle();
      for (let i = 0; i < 5; i++) await fail(th, i % 2 ? "Alice" : "ALICE", "192.0.2.1");
      expect(await fail(th, "alice", "192.0.2.2")).toMatchObject({ outcome: "refused", scope: "account", retryAfterSeconds: 900 });
      expect(await fail(th, "bob", "192.0.2.1")).toMatchObject({ outcome: "failed" });
    });

    it("a success clears the account's failures, not the address's", async () => {
      fresh();
      const th = throttle({ maxFailuresPerAddress: 6 });
      for (let i = 0; i < 4; i++) await fail(th, "carol", "192.0.2.1");
      expect(await succeed(th, "Carol", "192.0.2.1")).toMatchObject({ outcome: "succeeded" });
      for (let i = 0; i < 2; i++) await fail(th, "carol", "192.0.2.1");
      expect(await fail(th, "carol", "192.0.2.1")).toEqual({ outcome: "refused", retryAfterSeconds: 900, scope: "address" });
      expect(await fail(th, "carol", "192.0.2.99")).toMatchObject({ outcome: "failed" });
    });

    it("refuses an address after 20 failures whatever the accounts, and not other addresses", async () => {
      fresh();
      const th = throttle();
      for (let i = 0; i < 20; i++) {
        at(i * 1000);
        expect(await fail(th, `user${i}`, "203.0.113.9")).toMatchObject({ outcome: "failed" });
      }
      at(20_000);
      expect(await fail(th, "someone-new", "203.0.113.9")).toEqual({ outcome: "refused", retryAfterSeconds: 880, scope: "address" });
      expect(await fail(th, "user3", "203.0.113.10")).toMatchObject({ outcome: "failed" });
    });

    it("counts an IPv6 /64 as one address and an IPv4-mapped address as its IPv4 address", async () => {
      fresh();
      const th = throttle({ maxFailuresPerAddress: 3 });
      for (let i = 1; i <= 3; i++) await fail(th, `u${i}`, `2001:db8:0:1::${i}`);
      expect(await fail(th, "x", "2001:db8:0:1:ffff:ffff:ffff:ffff")).toMatchObject({ outcome: "refused", scope: "address" });
      expect(await fail(th, "x", "2001:db8:0:2::1")).toMatchObject({ outcome: "failed" });
      for (let i = 1; i <= 3; i++) await fail(th, `v${i}`, i % 2 ? "::ffff:192.0.2.1" : "192.0.2.1");
      expect(await fail(th, "y", "192.0.2.1")).toMatchObject({ outcome: "refused", scope: "address" });
    });

    it("reports the longer wait when both scopes are refused", async () => {
      fresh();
      const th = throttle({ maxFailuresPerAccount: 2, maxFailuresPerAddress: 2 });
      await fail(th, "other", "192.0.2.1");
      at(minute);
      await fail(th, "dave", "192.0.2.1");
      at(2 * minute);
      await fail(th, "dave", "198.51.100.1");
      expect(await fail(th, "dave", "192.0.2.1")).toEqual({ outcome: "refused", retryAfterSeconds: 840, scope: "account" });
    });

    it("a burst of 60 concurrent wrong passwords and the right one checks exactly 5 of them", async () => {
      fresh();
      const th = throttle({ maxFailuresPerAddress: 1000 });
      let checks = 0;
      let admittedRight = false;
      const guess = (right: boolean, i: number) =>
        th.attempt("erin", `198.51.100.${i % 250}`, ["password"], async () => {
          checks++;
          // The check takes time, as a password hash does: every attempt of the burst is in flight at once.
          await new Promise((r) => setTimeout(r, 20));
          if (right) admittedRight = true;
          return right ? { ok: true as const, value: "erin" } : { ok: false as const, reason: "password" };
        });
      const outcomes = await Promise.all(Array.from({ length: 61 }, (_, i) => guess(i === 60, i)));
      expect(checks).toBe(5);
      expect(outcomes.filter((o) => o.outcome === "refused")).toHaveLength(56);
      // The right password was sent last, after five wrong ones had been admitted.
      expect(admittedRight).toBe(false);
    });

    it("holds across instances: two connections of their own admit 5 of 40 concurrent attempts between them", async () => {
      fresh();
      const secretKeyHex = secretKey.toString("hex");
      const task = { type: "login-attempts" as const, secretKeyHex, account: "grace", count: 20, checkMs: 20, now: time.now };
      const outcomes = (await runInWorkers(scratch.url, [[task], [task]])).map(([outcome]) => outcome!);
      const checks = outcomes.map((o) => (o.type === "attempted" ? o.checks : Number.NaN));
      expect(checks.reduce((a, b) => a + b)).toBe(5);
      // Sequential attempts from this process see the failures the workers recorded.
      expect(await fail(throttle(), "grace", "192.0.2.200")).toMatchObject({ outcome: "refused", scope: "account" });
    });

    it("stores neither the login nor the address in the clear", async () => {
      fresh();
      await fail(throttle(), "heidi@example.com", "192.0.2.77");
      const rows = await database.db.selectFrom("login_attempts").selectAll().execute();
      expect(rows.length).toBeGreaterThan(0);
      const text = JSON.stringify(rows);
      expect(text).not.toMatch(/heidi|192\.0\.2\.77/i);
    });

    it("admit counts every request (a rate limit), and a throttle of another purpose keeps counters of its own", async () => {
      fresh();
      const limit = throttle({ maxFailuresPerAccount: 2, maxFailuresPerAddress: 3, windowMs: minute, purpose: "public-par" });
      const login = throttle({ maxFailuresPerAccount: 2 });
      expect(await limit.admit("app", "192.0.2.1")).toBeUndefined();
      expect(await limit.admit("app", "192.0.2.1")).toBeUndefined();
      expect(await limit.admit("app", "192.0.2.1")).toEqual({ outcome: "refused", retryAfterSeconds: 60, scope: "account" });
      // The login throttle does not see those requests, for the same name and address.
      expect(await fail(login, "app", "192.0.2.1")).toMatchObject({ outcome: "failed" });
      // Another name from the address fills the address's limit.
      expect(await limit.admit("other-app", "192.0.2.1")).toBeUndefined();
      expect(await limit.admit("other-app", "192.0.2.1")).toEqual({ outcome: "refused", retryAfterSeconds: 60, scope: "address" });
      at(minute);
      expect(await limit.admit("app", "192.0.2.1")).toBeUndefined();
    });

    describe("as the sign-in pages use it: per account at an address, per account, per address, each factor apart", () => {
      const signIn = () => throttle({ maxFailuresPerAccountAtAddress: 5, maxFailuresPerAccount: 20, maxFailuresPerAddress: 20 });

      it("5 failures from one address pause the account there only; elsewhere it goes on until 20 in all", async () => {
        fresh();
        const th = signIn();
        for (let i = 0; i < 5; i++) await fail(th, "judy", "203.0.113.66");
        expect(await succeed(th, "judy", "203.0.113.66")).toEqual({ outcome: "refused", retryAfterSeconds: 900, scope: "account_at_address" });
        // The holder at home is not locked out by someone guessing from elsewhere.
        expect(await succeed(th, "judy", "192.0.2.10")).toEqual({ outcome: "succeeded", value: "judy" });
        // Guessing from many addresses: 20 failures of the account in all pause it everywhere.
        fresh();
        for (let i = 0; i < 20; i++) await fail(th, "judy", `198.51.100.${i}`);
        expect(await succeed(th, "judy", "192.0.2.10")).toMatchObject({ outcome: "refused", scope: "account" });
      });

      it("warns before the last attempt, and the failure that pauses says for how long", async () => {
        fresh();
        const th = signIn();
        const left: unknown[] = [];
        for (let i = 0; i < 5; i++) {
          at(i * minute);
          left.push(await fail(th, "kim", "192.0.2.5"));
        }
        expect(left).toEqual([
          { outcome: "failed", reason: "password", attemptsLeft: 4 },
          { outcome: "failed", reason: "password", attemptsLeft: 3 },
          { outcome: "failed", reason: "password", attemptsLeft: 2 },
          { outcome: "failed", reason: "password", attemptsLeft: 1 },
          // The first of the five leaves the window 15 minutes after it was made: 11 minutes from now.
          { outcome: "failed", reason: "password", attemptsLeft: 0, retryAfterSeconds: 660 },
        ]);
        expect(await fail(th, "kim", "192.0.2.5")).toEqual({ outcome: "refused", retryAfterSeconds: 660, scope: "account_at_address" });
      });

      it("counts passwords and one-time codes apart; a two-factor attempt keeps only the failure of the wrong one", async () => {
        fresh();
        const th = signIn();
        for (let i = 0; i < 5; i++) await fail(th, "leo", "192.0.2.6", "otp");
        expect(await fail(th, "leo", "192.0.2.6", "otp")).toMatchObject({ outcome: "refused", scope: "account_at_address" });
        // The password still has all its attempts.
        expect(await fail(th, "leo", "192.0.2.6", "password")).toMatchObject({ outcome: "failed", attemptsLeft: 4 });
        // A step asking for both is refused while either is paused…
        const both = (address: string, reason: "password" | "otp") =>
          th.attempt("leo", address, ["password", "otp"], async () => ({ ok: false as const, reason }));
        expect(await both("192.0.2.6", "password")).toMatchObject({ outcome: "refused" });
        // …and elsewhere, a wrong code among both uses up a code attempt, not a password one.
        expect(await both("192.0.2.7", "otp")).toEqual({ outcome: "failed", reason: "otp", attemptsLeft: 4 });
        expect(await fail(th, "leo", "192.0.2.7", "password")).toEqual({ outcome: "failed", reason: "password", attemptsLeft: 4 });
      });

      it("an unknown login is counted and answered exactly as a known one: nothing reads the user", async () => {
        fresh();
        const th = signIn();
        const known: unknown[] = [];
        const unknown: unknown[] = [];
        for (let i = 0; i < 6; i++) {
          known.push(await fail(th, "existing-user", "192.0.2.8"));
          unknown.push(await fail(th, "no-such-user", "192.0.2.9"));
        }
        expect(unknown).toEqual(known);
      });
    });

    it("a check that throws leaves no attempt behind", async () => {
      fresh();
      const th = throttle({ maxFailuresPerAccount: 1 });
      await expect(th.attempt("ivan", "192.0.2.1", ["password"], async () => Promise.reject(new Error("database away")))).rejects.toThrow("database away");
      expect(await fail(th, "ivan", "192.0.2.1")).toMatchObject({ outcome: "failed" });
    });
  });
}

describe("login throttle options", () => {
  it("rejects nonsensical limits", () => {
    const store = {} as ConstructorParameters<typeof LoginThrottle>[0];
    expect(() => new LoginThrottle(store, randomBytes(32), () => 0, { maxFailuresPerAccount: 0 })).toThrow(RangeError);
    expect(() => new LoginThrottle(store, randomBytes(32), () => 0, { windowMs: 1.5 })).toThrow(RangeError);
  });
});
