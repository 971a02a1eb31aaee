import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import type { AuthorizationRequest } from "../../src/domain/oidc/authorization-request.ts";
import type { AuthorizationCodePayload } from "../../src/domain/oidc/flow/authorization-code.ts";
import { OneTimePayloadMismatch } from "../../src/domain/one-time-kinds.ts";
import type { ConsumeResult, OneTimeKind } from "../../src/domain/single-use.ts";
import { OneTimeRecords } from "../../src/storage/one-time-records.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { StatementCounter } from "../support/statement-counter.ts";
import { runInWorkers } from "../support/workers.ts";

const targets = await databaseTargets();

/** A realistic epoch-millisecond clock: beyond 32 bits, so BIGINT handling matters on PostgreSQL. */
const t0 = Date.UTC(2030, 0, 1);
const minute = 60_000;

/** A pushed request, as a request_uri record carries it. */
const payload: AuthorizationRequest = {
  clientId: "client-1",
  redirectUri: "https://rp.example/cb",
  responseType: "code",
  scopes: ["openid", "profile"],
  state: "ünïcødé \u2603 \"quoted\" \\ back",
  nonce: "n-0S6_WzA2Mj",
  prompt: ["login"],
  maxAge: 300,
  acrValues: [],
  authorizationDetails: [{ type: "payment_initiation", claims: { userinfo: { email: { essential: true }, nickname: null } } }],
};

/** What an authorization code stands for, with a word to tell records apart. */
const codePayload = (which: string): AuthorizationCodePayload => ({
  clientId: "client-1",
  redirectUri: "https://rp.example/cb",
  codeChallenge: null,
  nonce: which,
  scopes: ["openid"],
  authorizationDetails: [],
  grantId: "grant-1",
  userId: "user-1",
  authTime: t0,
  acr: "low",
  amr: ["pwd"],
});

let sequence = 0;
/** A key no other test in the file uses, so tests share one database without seeing each other. */
const uniqueKey = (label: string) => `${label}-${++sequence}-${Math.random().toString(36).slice(2)}`;

for (const t of targets) {
  describe.skipIf(!!t.unavailable)(targetTitle(t), () => {
    let scratch: ScratchDatabase;
    let database: Database;
    let records: OneTimeRecords;

    beforeAll(async () => {
      scratch = await t.create();
      database = await openDatabase(scratch.url);
      await migrateToLatest(database);
      records = new OneTimeRecords(database);
    });

    afterAll(async () => {
      await database?.close();
      await scratch?.drop();
    });

    const rawRow = (kind: string, keyHash: string) =>
      database.db.selectFrom("one_time_records").selectAll().where("kind", "=", kind).where("key_hash", "=", keyHash).execute();

    it("issues a record and returns it as stored", async () => {
      const key = uniqueKey("issue");
      const issued = await records.issue({ kind: "request_uri", keyHash: key, owner: "client-1", payload, now: t0, ttlMs: minute });

      const expected = { kind: "request_uri", keyHash: key, owner: "client-1", payload, createdAt: t0, expiresAt: t0 + minute, consumedAt: null };
      expect(issued).toEqual(expected);
      expect(await records.find("request_uri", key)).toEqual(expected);
      expect(await rawRow("request_uri", key)).toEqual([
        {
          kind: "request_uri",
          key_hash: key,
          owner: "client-1",
          payload: JSON.stringify(payload),
          created_at: t0,
          expires_at: t0 + minute,
          consumed_at: null,
        },
      ]);
    });

    it("consumes once, with the payload round-tripped, and reports a second consume as consumed", async () => {
      const key = uniqueKey("consume");
      await records.issue({ kind: "request_uri", keyHash: key, owner: "client-1", payload, now: t0, ttlMs: minute });

      const first = await records.consume("request_uri", key, t0 + 1000);
      const consumed = { kind: "request_uri", keyHash: key, owner: "client-1", payload, createdAt: t0, expiresAt: t0 + minute, consumedAt: t0 + 1000 };
      expect(first).toEqual({ ok: true, record: consumed });

      expect(await records.consume("request_uri", key, t0 + 2000)).toEqual({ ok: false, reason: "consumed", record: consumed });
      // Still consumed at the first time: the losing attempt wrote nothing.
      expect(await records.find("request_uri", key)).toEqual(consumed);
    });

    it("consumes up to the last millisecond before expiry", async () => {
      const key = uniqueKey("edge");
      await records.issue({ kind: "client_assertion_jti", keyHash: key, owner: "o", payload: null, now: t0, ttlMs: minute });

      const result = await records.consume("client_assertion_jti", key, t0 + minute - 1);
      expect(result.ok).toBe(true);
      expect(await records.find("client_assertion_jti", key)).toMatchObject({ consumedAt: t0 + minute - 1 });
    });

    it("refuses an expired record (from expiresAt on) and leaves it unconsumed", async () => {
      const key = uniqueKey("expired");
      await records.issue({ kind: "request_uri", keyHash: key, owner: "o", payload, now: t0, ttlMs: minute });
      const unconsumed = { kind: "request_uri", keyHash: key, owner: "o", payload, createdAt: t0, expiresAt: t0 + minute, consumedAt: null };

      expect(await records.consume("request_uri", key, t0 + minute)).toEqual({ ok: false, reason: "expired", record: unconsumed });
      expect(await records.consume("request_uri", key, t0 + 10 * minute)).toEqual({ ok: false, reason: "expired", record: unconsumed });
      expect(await records.find("request_uri", key)).toEqual(unconsumed);
      expect((await rawRow("request_uri", key))[0]?.consumed_at).toBeNull();
    });

    it("reports an unknown key as unknown", async () => {
      expect(await records.consume("authorization_code", uniqueKey("never-issued"), t0)).toEqual({ ok: false, reason: "unknown" });
      expect(await records.find("authorization_code", uniqueKey("never-issued"))).toBeUndefined();
    });

    it("keeps kinds apart: the same key under another kind neither matches nor is consumed", async () => {
      const key = uniqueKey("kind");
      await records.issue({ kind: "request_uri", keyHash: key, owner: "o", payload, now: t0, ttlMs: minute });

      expect(await records.consume("authorization_code", key, t0 + 1)).toEqual({ ok: false, reason: "unknown" });
      expect(await records.find("request_uri", key)).toMatchObject({ consumedAt: null });

      // The same key may be issued under another kind; each is consumed on its own.
      await records.issue({ kind: "authorization_code", keyHash: key, owner: "o", payload: codePayload("code"), now: t0, ttlMs: minute });
      expect(await records.consume("authorization_code", key, t0 + 2)).toMatchObject({ ok: true, record: { kind: "authorization_code", payload: codePayload("code") } });
      expect(await records.find("request_uri", key)).toMatchObject({ consumedAt: null, payload });
      expect(await records.consume("request_uri", key, t0 + 3)).toMatchObject({ ok: true, record: { kind: "request_uri", payload } });
    });

    it("refuses to issue the same kind and key twice", async () => {
      const key = uniqueKey("twice");
      await records.issue({ kind: "client_assertion_jti", keyHash: key, owner: "first", payload: null, now: t0, ttlMs: minute });

      await expect(records.issue({ kind: "client_assertion_jti", keyHash: key, owner: "second", payload: null, now: t0, ttlMs: minute })).rejects.toThrow(
        /unique|primary key|duplicate/i,
      );
      expect(await records.find("client_assertion_jti", key)).toMatchObject({ owner: "first", payload: null });
    });

    it("records issued at once share inserts (SQLite: one for the turn; PostgreSQL: the first alone, then the rest); a repeated key fails only its own issue", async () => {
      const counter = new StatementCounter();
      const counted = new OneTimeRecords({ ...database, db: database.db.withPlugin(counter) });
      const keys = Array.from({ length: 10 }, () => uniqueKey("grouped"));
      const issued = await Promise.all(keys.map((key) => counted.issue({ kind: "request_uri", keyHash: key, owner: "client-1", payload, now: t0, ttlMs: minute })));
      expect(issued.map((r) => r.keyHash)).toEqual(keys);
      expect(counter.count).toBe(t.name === "postgres" ? 2 : 1);
      for (const key of keys) expect(await rawRow("request_uri", key)).toHaveLength(1);

      // The second of two issues of one key, in one group: the group's insert fails, each row is retried alone.
      const repeated = uniqueKey("repeated");
      const other = uniqueKey("beside-repeated");
      const outcomes = await Promise.allSettled(
        [repeated, repeated, other].map((key) => counted.issue({ kind: "request_uri", keyHash: key, owner: "client-1", payload, now: t0, ttlMs: minute })),
      );
      expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
      expect(await rawRow("request_uri", repeated)).toHaveLength(1);
      expect(await rawRow("request_uri", other)).toHaveLength(1);
    });

    it("a stored payload its kind does not carry is an internal error when read, naming the kind and where, never a value", async () => {
      const secret = "a-nonce-that-must-not-be-logged";
      const stored = (kind: OneTimeKind, value: unknown, consumedAt: number | null = null) => {
        const keyHash = uniqueKey("mismatch");
        return database.db
          .insertInto("one_time_records")
          .values({ kind, key_hash: keyHash, owner: "o", payload: JSON.stringify(value), created_at: t0, expires_at: t0 + minute, consumed_at: consumedAt })
          .execute()
          .then(() => keyHash);
      };
      const mismatch = async (read: Promise<unknown>, problem: string) => {
        const error = await read.then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(OneTimePayloadMismatch);
        expect((error as Error).message).toContain(problem);
        expect(JSON.stringify({ ...(error as object), message: (error as Error).message, stack: (error as Error).stack })).not.toContain(secret);
      };

      const wrongType = await stored("request_uri", { ...payload, nonce: secret, maxAge: "300" });
      await mismatch(records.find("request_uri", wrongType), "a one-time record of kind request_uri holds a payload that kind does not carry (maxAge: invalid_type)");
      // The conditional UPDATE has decided before the row is read: the record is used up, and nothing is handed out.
      await mismatch(records.consume("request_uri", wrongType, t0 + 1, "o"), "maxAge: invalid_type");
      expect((await rawRow("request_uri", wrongType))[0]?.consumed_at).toBe(t0 + 1);

      const extraField = await stored("authorization_code", { ...codePayload(secret), extra: secret });
      await mismatch(records.find("authorization_code", extraField), "payload: unrecognized_keys");
      const missingField = await stored("authorization_code", { ...codePayload(secret), grantId: undefined });
      await mismatch(records.consume("authorization_code", missingField, t0 + 1), "grantId: invalid_type");
      const markWithPayload = await stored("replayed_family", { family: secret }, t0);
      await mismatch(records.consume("replayed_family", markWithPayload, t0 + 1), "payload: invalid_type");

      // Each kind's own payload reads back as it was written.
      const good = await stored("authorization_code", codePayload(secret));
      expect((await records.find("authorization_code", good))?.payload).toEqual(codePayload(secret));
    });

    it("deletes only the records that expired before the given time, and says how many", async () => {
      const kind = "jpki_challenge";
      const base = t0 + 1000 * minute; // later than anything else in this file, so earlier tests' records stay out of the count
      const others = await database.db.selectFrom("one_time_records").select("key_hash").where("kind", "!=", kind).execute();
      const keys = { old: uniqueKey("old"), oldConsumed: uniqueKey("old-consumed"), edge: uniqueKey("edge"), fresh: uniqueKey("fresh") };
      await records.issue({ kind, keyHash: keys.old, owner: "o", payload: {}, now: base, ttlMs: minute }); // expires base+1m
      await records.issue({ kind, keyHash: keys.oldConsumed, owner: "o", payload: {}, now: base, ttlMs: 2 * minute }); // base+2m
      await records.consume(kind, keys.oldConsumed, base + 1);
      await records.issue({ kind, keyHash: keys.edge, owner: "o", payload: {}, now: base, ttlMs: 3 * minute }); // base+3m
      await records.issue({ kind, keyHash: keys.fresh, owner: "o", payload: {}, now: base, ttlMs: 10 * minute }); // base+10m

      // Expiring exactly at `before` is not "before": the edge record stays.
      expect(await records.deleteExpired(base + 3 * minute)).toBe(2 + others.length);
      const left = await database.db.selectFrom("one_time_records").select("key_hash").orderBy("key_hash").execute();
      expect(left.map((r) => r.key_hash)).toEqual([keys.edge, keys.fresh].sort());

      expect(await records.deleteExpired(base + 3 * minute)).toBe(0);
      expect(await records.find(kind, keys.edge)).toMatchObject({ consumedAt: null });
      expect(await records.consume(kind, keys.old, base + 2)).toEqual({ ok: false, reason: "unknown" });
    });
  });
}

/** Every consume attempt at one record, with the `now` it passed; `now` values are all distinct. */
type Attempt = { now: number; result: ConsumeResult };

/**
 * Exactly one attempt won; every other one lost with reason "consumed"; and the
 * row's consumed_at is the winner's `now`, so no losing attempt wrote it again.
 */
async function expectExactlyOneWinner(records: OneTimeRecords, kind: OneTimeKind, keyHash: string, attempts: Attempt[]) {
  const winners = attempts.filter((a) => a.result.ok);
  expect(winners).toHaveLength(1);
  const winner = winners[0]!;
  expect(attempts.filter((a) => !a.result.ok).map((a) => !a.result.ok && a.result.reason)).toEqual(
    new Array(attempts.length - 1).fill("consumed"),
  );
  expect(winner.result).toMatchObject({ ok: true, record: { kind, keyHash, consumedAt: winner.now } });
  for (const loser of attempts.filter((a) => !a.result.ok)) {
    expect(loser.result).toMatchObject({ record: { consumedAt: winner.now } });
  }
  expect(await records.find(kind, keyHash)).toMatchObject({ consumedAt: winner.now });
}

const raceRecords = 6;
/** PostgreSQL: separate pools in this thread. */
const pools = 8;
/** SQLite: writers in threads of their own (a worker costs a second or so to start, hence fewer than pools). */
const workerThreads = 4;

for (const t of targets) {
  describe.skipIf(!!t.unavailable)(`${targetTitle(t)}: concurrent consumers`, () => {
    let scratch: ScratchDatabase;
    let database: Database;
    let records: OneTimeRecords;

    beforeAll(async () => {
      scratch = await t.create();
      database = await openDatabase(scratch.url);
      await migrateToLatest(database);
      records = new OneTimeRecords(database);
    });

    afterAll(async () => {
      await database?.close();
      await scratch?.drop();
    });

    /** Distinct `now` per attempt, all before expiry, so the stored consumed_at identifies the writer. */
    const nowsFor = (connection: number, calls: number) => Array.from({ length: calls }, (_, call) => t0 + 1 + connection * calls + call);

    async function issueRaceRecords(label: string): Promise<string[]> {
      const keys = Array.from({ length: raceRecords }, () => uniqueKey(label));
      for (const key of keys) await records.issue({ kind: "replayed_family", keyHash: key, owner: "o", payload: null, now: t0, ttlMs: minute });
      return keys;
    }

    const calls = 5;
    if (t.name === "postgres") it(
      `${pools} pools × ${calls} calls at once (${pools * calls} attempts): exactly one consume wins, for each of ${raceRecords} records`,
      async () => {
        const keys = await issueRaceRecords("pg-race");
        const connections: Database[] = [];
        try {
          for (let i = 0; i < pools; i++) connections.push(await openDatabase(scratch.url));
          // Open every pool's connections before the race, so the attempts start together rather than one per connect.
          await Promise.all(
            connections.flatMap((c) => Array.from({ length: calls }, () => c.db.selectFrom("one_time_records").select("kind").limit(1).execute())),
          );
          const contenders = connections.map((c) => new OneTimeRecords(c));

          for (const key of keys) {
            const attempts = await Promise.all(
              contenders.flatMap((contender, index) =>
                nowsFor(index, calls).map(async (now): Promise<Attempt> => ({ now, result: await contender.consume("replayed_family", key, now) })),
              ),
            );
            expect(attempts).toHaveLength(pools * calls);
            await expectExactlyOneWinner(records, "replayed_family", key, attempts);
          }
        } finally {
          await Promise.all(connections.map((c) => c.close()));
        }
      },
    );

    const callsPerWorker = 10;
    if (t.name === "sqlite") it(
      `${workerThreads} worker threads, each with its own connection, × ${callsPerWorker} calls released together (${workerThreads * callsPerWorker} attempts): exactly one consume wins, for each of ${raceRecords} records`,
      { timeout: 120_000 },
      async () => {
        const keys = await issueRaceRecords("worker-race");
        const plans = Array.from({ length: workerThreads }, (_, worker) =>
          keys.map((keyHash) => ({ type: "consume" as const, kind: "replayed_family" as const, keyHash, nows: nowsFor(worker, callsPerWorker) })),
        );

        const outcomes = await runInWorkers(scratch.url, plans);

        for (const [round, key] of keys.entries()) {
          const attempts = outcomes.flatMap((perWorker) => {
            const outcome = perWorker[round];
            return outcome?.type === "consumed" ? outcome.results : [];
          });
          expect(attempts).toHaveLength(workerThreads * callsPerWorker);
          await expectExactlyOneWinner(records, "replayed_family", key, attempts);
        }
      },
    );
  });
}
