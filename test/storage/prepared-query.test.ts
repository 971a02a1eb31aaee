import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { preparedInsert, preparedQuery } from "../../src/storage/prepared-query.ts";
import type { Tables } from "../../src/storage/schema.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { StatementCounter } from "../support/statement-counter.ts";

const targets = await databaseTargets();

const recordsOf = preparedQuery((db: Kysely<Tables>, owner: string, now: number) =>
  db
    .selectFrom("one_time_records")
    .select(["key_hash", "owner"])
    .where("kind", "=", "prepared-test")
    .where("owner", "=", owner)
    .where("created_at", "<=", now)
    .where("expires_at", ">", now)
    .orderBy("key_hash"),
);

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let scratch: ScratchDatabase;
    let database: Database;

    beforeAll(async () => {
      scratch = await target.create();
      database = await openDatabase(scratch.url);
      await migrateToLatest(database);
      const row = (key: string, owner: string, created: number, expires: number) => ({
        kind: "prepared-test", key_hash: key, owner, payload: "null", created_at: created, expires_at: expires, consumed_at: null,
      });
      await database.db.insertInto("one_time_records").values([row("a1", "alice", 100, 200), row("a2", "alice", 150, 300), row("b1", "bob", 100, 200)]).execute();
    });

    afterAll(async () => {
      await database?.close();
      await scratch?.drop();
    });

    it("runs with each call's values, an argument bound twice taking the value in both places, constants as built", async () => {
      expect(await recordsOf(database.db, "alice", 160)).toEqual([{ key_hash: "a1", owner: "alice" }, { key_hash: "a2", owner: "alice" }]);
      expect(await recordsOf(database.db, "alice", 250)).toEqual([{ key_hash: "a2", owner: "alice" }]);
      expect(await recordsOf(database.db, "bob", 120)).toEqual([{ key_hash: "b1", owner: "bob" }]);
      expect(await recordsOf(database.db, "carol", 120)).toEqual([]);
    });

    it("a view of the connection with a plugin runs it through that plugin", async () => {
      const counter = new StatementCounter();
      const view = database.db.withPlugin(counter);
      expect(await recordsOf(view, "bob", 120)).toHaveLength(1);
      expect(await recordsOf(view, "alice", 120)).toHaveLength(1);
      expect(counter.count).toBe(2);
    });

    it("refuses, at the first call, an argument the query does not bind as given", async () => {
      const transformed = preparedQuery((db: Kysely<Tables>, owner: string) =>
        db.selectFrom("one_time_records").select("key_hash").where("owner", "=", owner.toUpperCase()),
      );
      await expect(transformed(database.db, "alice")).rejects.toThrow('prepared query does not bind argument 0 as a value: select "key_hash" from "one_time_records" where "owner" = ');
      const unused = preparedQuery((db: Kysely<Tables>, _owner: string) => db.selectFrom("one_time_records").select("key_hash").where("owner", "=", "alice"));
      await expect(unused(database.db, "bob")).rejects.toThrow("prepared query does not bind argument 0 as a value");
      const alsoTransformed = preparedQuery((db: Kysely<Tables>, owner: string) =>
        db.selectFrom("one_time_records").select("key_hash").where("owner", "=", owner).where("key_hash", "like", `${owner}%`),
      );
      await expect(alsoTransformed(database.db, "alice")).rejects.toThrow("prepared query binds a transformed argument as parameter 2");
    });

    it("inserts rows of any count and values, nulls included, each group in one statement", async () => {
      const insert = preparedInsert<Tables>("one_time_records");
      const counter = new StatementCounter();
      const view = database.db.withPlugin(counter);
      const row = (key: string, payload: string, consumed: number | null) => ({
        kind: "prepared-insert", key_hash: key, owner: "dave", payload, created_at: 10, expires_at: 20, consumed_at: consumed,
      });
      await insert(view, [row("i1", "{\"n\":1}", null), row("i2", "1", 15)]);
      await insert(view, [row("i3", "null", undefined as unknown as null)]);
      await insert(view, [row("i4", "[]", 11), row("i5", "{}", null)]);
      await insert(view, []);
      expect(counter.count).toBe(3);
      const stored = await database.db
        .selectFrom("one_time_records")
        .select(["key_hash", "payload", "consumed_at"])
        .where("kind", "=", "prepared-insert")
        .orderBy("key_hash")
        .execute();
      expect(stored.map((r) => ({ ...r, consumed_at: r.consumed_at === null ? null : Number(r.consumed_at) }))).toEqual([
        { key_hash: "i1", payload: '{"n":1}', consumed_at: null },
        { key_hash: "i2", payload: "1", consumed_at: 15 },
        { key_hash: "i3", payload: "null", consumed_at: null },
        { key_hash: "i4", payload: "[]", consumed_at: 11 },
        { key_hash: "i5", payload: "{}", consumed_at: null },
      ]);
      await expect(insert(database.db, [row("i6", "1", null), { kind: "prepared-insert", key_hash: "i7" } as never])).rejects.toThrow(/same columns/);
      // A row the database refuses (a key issued twice) fails the statement, and the group with it.
      await expect(insert(database.db, [row("i8", "1", null), row("i1", "1", null)])).rejects.toThrow();
      expect(await database.db.selectFrom("one_time_records").select("key_hash").where("key_hash", "=", "i8").execute()).toEqual([]);
    });

    it("preparedInsert puts each value of a batch-sized insert in its own row and column", async () => {
      const insert = preparedInsert<Tables>("one_time_records");
      // Sizes past the kept statements, and each size once: every row's placeholders are numbered anew (PostgreSQL's $n).
      for (const count of [1000, 999, 65]) {
        const rows = Array.from({ length: count }, (_, i) => ({
          kind: `prepared-bulk-${count}`, key_hash: `k${i}`, owner: `o${i}`, payload: `${i * 7}`, created_at: i, expires_at: i + count, consumed_at: i % 3 === 0 ? null : i * 2,
        }));
        await insert(database.db, rows);
        const stored = await database.db
          .selectFrom("one_time_records")
          .select(["key_hash", "owner", "payload", "created_at", "expires_at", "consumed_at"])
          .where("kind", "=", `prepared-bulk-${count}`)
          .execute();
        const byKey = new Map(stored.map((r) => [r.key_hash, r]));
        expect(byKey.size).toBe(count);
        for (const row of rows) {
          const got = byKey.get(row.key_hash)!;
          expect([got.owner, got.payload, Number(got.created_at), Number(got.expires_at), got.consumed_at === null ? null : Number(got.consumed_at)]).toEqual([
            row.owner, row.payload, row.created_at, row.expires_at, row.consumed_at,
          ]);
        }
      }
    });
  });
}
