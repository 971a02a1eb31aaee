import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Accounts } from "../../src/domain/accounts/accounts.ts";
import { DomainError } from "../../src/domain/errors.ts";
import { AccountsRepository } from "../../src/storage/accounts-repository.ts";
import { CachedAccountStore } from "../../src/storage/cached-account-store.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { StatementCounter } from "../support/statement-counter.ts";

const targets = await databaseTargets();

/** Version reads that, once held, finish their statement and then wait to be released before answering. */
class HeldVersionReads extends AccountsRepository {
  private gate: Promise<void> | undefined;
  private finished: () => void = () => undefined;
  /** Resolves when a held read has its answer from the database. */
  readDone: Promise<void> = Promise.resolve();

  hold(): () => void {
    let release!: () => void;
    this.gate = new Promise((resolve) => (release = resolve));
    this.readDone = new Promise((resolve) => (this.finished = resolve));
    return () => {
      this.gate = undefined;
      release();
    };
  }

  override async authVersion(): Promise<number | undefined> {
    const version = await super.authVersion();
    const gate = this.gate;
    this.finished();
    await gate;
    return version;
  }
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  return (error as DomainError).code;
}

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let scratch: ScratchDatabase;
    /** Two instances: each its own connection and its own cache, one database. */
    let first: Database;
    let second: Database;
    let now = 1_700_000_000_000;
    const clock = () => now;
    let counter: StatementCounter;
    let a: Accounts;
    let b: Accounts;

    beforeAll(async () => {
      scratch = await target.create();
      first = await openDatabase(scratch.url);
      second = await openDatabase(scratch.url);
      await migrateToLatest(first);
    });

    afterAll(async () => {
      await first?.close();
      await second?.close();
      await scratch?.drop();
    });

    beforeEach(() => {
      counter = new StatementCounter();
      a = new Accounts(new CachedAccountStore(new AccountsRepository({ ...first, db: first.db.withPlugin(counter) })), clock);
      b = new Accounts(new CachedAccountStore(new AccountsRepository(second)), clock);
    });

    async function activeToken(name: string): Promise<{ token: string; prefix: string }> {
      await b.create(name, "active");
      const { token, summary } = await b.createToken(name, "t");
      return { token, prefix: summary.prefix };
    }

    it("a warm token costs one statement per call, and the touch is written once per interval", async () => {
      const { token } = await activeToken("warm");
      expect((await a.authenticate(token)).name).toBe("warm");
      counter.count = 0;
      now += 1_000;
      expect((await a.authenticate(token)).name).toBe("warm");
      expect(counter.count).toBe(1);
      now += 60_001;
      expect((await a.authenticate(token)).name).toBe("warm");
      expect(counter.count).toBe(3); // the version, then the touch the interval allows
      const [row] = await b.listTokens("warm");
      expect(row!.lastUsedAt).toBe(now);
    });

    it("a token revoked on this instance is refused on the next call, its account's other tokens still work", async () => {
      const { token, prefix } = await activeToken("same");
      const other = (await a.createToken("same", "other")).token;
      expect((await a.authenticate(token)).name).toBe("same");
      expect((await a.authenticate(other)).name).toBe("same");
      await a.revokeToken(prefix);
      expect(await refusal(a.authenticate(token))).toBe("token_invalid");
      expect((await a.authenticate(other)).name).toBe("same");
    });

    it("a token revoked by another instance is refused on the next call with the cache warm", async () => {
      const { token, prefix } = await activeToken("elsewhere");
      expect((await a.authenticate(token)).name).toBe("elsewhere");
      expect((await a.authenticate(token)).name).toBe("elsewhere");
      await b.revokeToken(prefix);
      expect(await refusal(a.authenticate(token))).toBe("token_invalid");
    });

    it("a revocation by a bare statement (no shomei code involved) is honoured too", async () => {
      const { token, prefix } = await activeToken("by-hand");
      expect((await a.authenticate(token)).name).toBe("by-hand");
      await second.db.updateTable("api_tokens").set({ revoked_at: now }).where("prefix", "=", prefix).execute();
      expect(await refusal(a.authenticate(token))).toBe("token_invalid");
    });

    it("an account suspended and started again by another instance is refused, then admitted", async () => {
      const { token } = await activeToken("paused");
      expect((await a.authenticate(token)).name).toBe("paused");
      await b.setApiStatus("paused", "suspended");
      expect(await refusal(a.authenticate(token))).toBe("api_use_suspended");
      await b.setApiStatus("paused", "active");
      expect((await a.authenticate(token)).apiStatus).toBe("active");
    });

    it("a wrong secret with a cached prefix is refused: the cache holds lookups, not verdicts", async () => {
      const { token } = await activeToken("secret");
      expect((await a.authenticate(token)).name).toBe("secret");
      const wrong = token.slice(0, -1) + (token.endsWith("A") ? "B" : "A");
      expect(await refusal(a.authenticate(wrong))).toBe("token_invalid");
      expect((await a.authenticate(token)).name).toBe("secret");
    });

    const together =
      target.name === "postgres"
        ? "share one version read: 2 statements (the first alone, the rest together)"
        : "share one version read, at the end of the turn they were made in: 1 statement";
    it(`20 warm calls made at the same time ${together}`, async () => {
      const { token } = await activeToken("together");
      expect((await a.authenticate(token)).name).toBe("together");
      counter.count = 0;
      const accounts = await Promise.all(Array.from({ length: 20 }, () => a.authenticate(token)));
      expect(accounts.map((account) => account.name)).toEqual(Array.from({ length: 20 }, () => "together"));
      expect(counter.count).toBe(target.name === "postgres" ? 2 : 1);
    });

    it("a call made after a revocation is refused although a version read begun before it was still running", async () => {
      const { token, prefix } = await activeToken("in-flight");
      const held = new HeldVersionReads(first);
      const c = new Accounts(new CachedAccountStore(held), clock);
      expect((await c.authenticate(token)).name).toBe("in-flight");

      const release = held.hold();
      const early = c.authenticate(token);
      await held.readDone; // the first read has its answer (the version before the revocation), not yet handed out
      await b.revokeToken(prefix);
      const late = c.authenticate(token);
      release();
      expect((await early).name).toBe("in-flight"); // made before the revocation
      expect(await refusal(late)).toBe("token_invalid");
    });

    it("a touch by the database rule is not lost: another instance's touch does not stop this one's after the interval", async () => {
      const { token } = await activeToken("touch");
      await a.authenticate(token);
      const first = (await b.listTokens("touch"))[0]!.lastUsedAt;
      expect(first).toBe(now);
      now += 30_000;
      await a.authenticate(token);
      expect((await b.listTokens("touch"))[0]!.lastUsedAt).toBe(first);
    });
  });
}
