import { Migrator, NO_MIGRATIONS, sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { migrations } from "../../src/storage/migrations/index.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { runInWorkers } from "../support/workers.ts";

const targets = await databaseTargets();
const names = Object.keys(migrations);
const latest = names.at(-1);

/** Names of the tables the database holds, as its own catalogue lists them (so not through Kysely's introspector). */
async function tableNames(database: Database): Promise<string[]> {
  const rows =
    database.dialect === "sqlite"
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(database.db)
      : await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(database.db);
  return rows.rows.map((r) => r.name).sort();
}

async function executedMigrations(database: Database): Promise<string[]> {
  const rows = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(database.db);
  return rows.rows.map((r) => r.name);
}

/** Kysely's migrator over this build's migrations, its bookkeeping tables in the current schema as migrateToLatest keeps them. */
async function migratorOf(database: Database): Promise<Migrator> {
  const schema =
    database.dialect === "postgres" ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db)).rows[0]?.schema : undefined;
  return new Migrator({ db: database.db, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) });
}

it("lists at least one migration, in name order", () => {
  expect(names.length).toBeGreaterThan(0);
  expect([...names].sort()).toEqual(names);
});

for (const t of targets) {
  describe.skipIf(!!t.unavailable)(targetTitle(t), () => {
    /** One scratch database per test, created on first use. */
    let scratch: Promise<ScratchDatabase> | undefined;
    const scratchDatabase = () => (scratch ??= t.create());
    const open: Database[] = [];

    async function connect(): Promise<Database> {
      const database = await openDatabase((await scratchDatabase()).url);
      open.push(database);
      return database;
    }

    afterEach(async () => {
      for (const database of open.splice(0)) await database.close();
      const created = scratch;
      scratch = undefined;
      if (created) await (await created).drop();
    });

    it("applies every migration to an empty database and creates its tables", async () => {
      const database = await connect();
      expect(await tableNames(database)).toEqual([]);

      const report = await migrateToLatest(database);

      expect(report).toEqual({ applied: names, current: latest });
      expect(await executedMigrations(database)).toEqual(names);
      expect(await tableNames(database)).toEqual(expect.arrayContaining(["kysely_migration", "kysely_migration_lock", "one_time_records"]));
      // The table is usable as the code expects: the primary key is (kind, key_hash).
      const row = { kind: "k", key_hash: "h", owner: "o", payload: "{}", created_at: 1, expires_at: 2, consumed_at: null };
      await database.db.insertInto("one_time_records").values(row).execute();
      await expect(database.db.insertInto("one_time_records").values(row).execute()).rejects.toThrow(/unique|primary key/i);
      await database.db.insertInto("one_time_records").values({ ...row, kind: "other" }).execute();
      expect(await database.db.selectFrom("one_time_records").select("kind").orderBy("kind").execute()).toEqual([
        { kind: "k" },
        { kind: "other" },
      ]);
    });

    it("applies nothing on a second run and reports the latest migration as current", async () => {
      const database = await connect();
      await migrateToLatest(database);

      expect(await migrateToLatest(database)).toEqual({ applied: [], current: latest });
      expect(await executedMigrations(database)).toEqual(names);
    });

    it("applies nothing again from a new connection to a migrated database", async () => {
      await migrateToLatest(await connect());
      const again = await connect();

      expect(await migrateToLatest(again)).toEqual({ applied: [], current: latest });
      expect(await executedMigrations(again)).toEqual(names);
    });

    it("refuses a database that has applied a migration this build does not know (a newer build's)", async () => {
      const database = await connect();
      await migrateToLatest(database);
      await sql`insert into kysely_migration (name, timestamp) values (${"9999_from_a_newer_build"}, ${new Date().toISOString()})`.execute(database.db);

      await expect(migrateToLatest(database)).rejects.toThrow(/9999_from_a_newer_build/);
      expect(await tableNames(database)).toEqual(expect.arrayContaining(["one_time_records"]));
    });

    it("applies only what is missing when the last migration was undone", async () => {
      const database = await connect();
      await migrateToLatest(database);
      expect((await (await migratorOf(database)).migrateDown()).error).toBeUndefined();

      expect(await migrateToLatest(database)).toEqual({ applied: [latest], current: latest });
      expect(await executedMigrations(database)).toEqual(names);
    });

    it("migrates once when two connections migrate at the same moment", async () => {
      const a = await connect();
      const b = await connect();

      const reports = await Promise.all([migrateToLatest(a), migrateToLatest(b)]);

      // Both succeed; between them every migration was applied exactly once.
      expect(reports.map((r) => r.current)).toEqual([latest, latest]);
      expect(reports.flatMap((r) => r.applied).sort()).toEqual(names);
      expect(await executedMigrations(a)).toEqual(names);
      expect(await tableNames(b)).toEqual(expect.arrayContaining(["kysely_migration", "kysely_migration_lock", "one_time_records"]));
    });

    it("migrates once when four worker threads, each with its own connection, migrate at the same moment", { timeout: 120_000 }, async () => {
      const outcomes = await runInWorkers((await scratchDatabase()).url, Array.from({ length: 4 }, () => [{ type: "migrate" as const }]));

      const reports = outcomes.map(([o]) => (o?.type === "migrated" ? o.report : undefined));
      expect(reports.map((r) => r?.current)).toEqual([latest, latest, latest, latest]);
      expect(reports.flatMap((r) => r?.applied ?? []).sort()).toEqual(names);
      expect(await executedMigrations(await connect())).toEqual(names);
    });

    it("can undo every migration and apply them all again", async () => {
      const database = await connect();
      await migrateToLatest(database);
      const migrated = await tableNames(database);
      const migrator = await migratorOf(database);

      const down = await migrator.migrateTo(NO_MIGRATIONS);
      expect(down.error).toBeUndefined();
      expect(down.results?.map((r) => [r.migrationName, r.direction, r.status])).toEqual(
        [...names].reverse().map((name) => [name, "Down", "Success"]),
      );
      expect(await tableNames(database)).toEqual(["kysely_migration", "kysely_migration_lock"]);

      expect(await migrateToLatest(database)).toEqual({ applied: names, current: latest });
      expect(await tableNames(database)).toEqual(migrated);
    });

    if (t.name === "postgres") it("migrates its own schema when another schema of the same database is already migrated", async () => {
      const other = await t.create();
      try {
        const first = await openDatabase(other.url);
        try {
          expect((await migrateToLatest(first)).applied).toEqual(names);
        } finally {
          await first.close();
        }
        const database = await connect();

        expect(await migrateToLatest(database)).toEqual({ applied: names, current: latest });
        expect(await executedMigrations(database)).toEqual(names);
        expect(await tableNames(database)).toEqual(expect.arrayContaining(["kysely_migration", "kysely_migration_lock", "one_time_records"]));
      } finally {
        await other.drop();
      }
    });
  });
}
