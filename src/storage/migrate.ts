import { DEFAULT_MIGRATION_TABLE, Migrator, sql, type Kysely, type MigrationResult } from "kysely";
import type { Database } from "./database.ts";
import { migrations } from "./migrations/index.ts";
import type { Tables } from "./schema.ts";

export interface MigrationReport {
  applied: string[];
  current: string | undefined;
}

/**
 * Applies every pending migration; safe to run from several instances at once.
 * PostgreSQL: the migrator takes an advisory lock, and its bookkeeping tables
 * live in the current schema (without that, Kysely would find them in any other
 * schema of the same database and skip creating its own). SQLite: the migrator
 * takes no lock of its own, so the whole run is one BEGIN IMMEDIATE transaction,
 * which excludes other processes; within this process, runs queue on a mutex,
 * because a second connection waiting for the write lock would block the event
 * loop that the first one needs in order to finish.
 */
export async function migrateToLatest(database: Database): Promise<MigrationReport> {
  const current = await alreadyCurrent(database);
  if (current) return current;
  if (database.dialect === "postgres") {
    const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(database.db);
    const report = await run(database.db, rows[0]?.schema ?? undefined);
    if (report.applied.length > 0) await analyzeSchema(database);
    return report;
  }
  const previous = sqliteQueue;
  let release!: () => void;
  sqliteQueue = new Promise<void>((resolve) => (release = resolve));
  await previous;
  try {
    return await database.db.connection().execute(async (db) => {
      await sql`begin immediate`.execute(db);
      try {
        const report = await run(db, undefined);
        await sql`commit`.execute(db);
        return report;
      } catch (error) {
        await sql`rollback`.execute(db).catch(() => undefined);
        throw error;
      }
    });
  } finally {
    release();
  }
}

/**
 * Fresh planner statistics for this schema's tables after a migration: a new
 * index or a reshaped table is otherwise planned from stale or missing
 * statistics (a sort over all rows instead of an index scan) until autovacuum
 * gets round to it. Only this schema's tables: a database may hold others.
 * PostgreSQL only. The bench takes them again after its bulk load.
 */
export async function analyzeSchema(database: Database): Promise<void> {
  const { rows } = await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = current_schema()`.execute(database.db);
  for (const { name } of rows) await sql`analyze ${sql.id(name)}`.execute(database.db);
}

let sqliteQueue: Promise<void> = Promise.resolve();

/**
 * The report of a run that would apply nothing, when the database has applied exactly this build's
 * migrations (an instance's every start after the first): one read instead of the migrator, which
 * introspects every table's columns to find its own two before it reads the same list (some 10 ms of a
 * 450 ms start). Anything else (no table yet, one to apply, one this build does not know) goes to the
 * migrator, which applies or refuses it.
 */
async function alreadyCurrent(database: Database): Promise<MigrationReport | undefined> {
  const table = await migrationTable(database);
  if (!table) return undefined;
  const { rows } = await sql<{ name: string }>`select name from ${sql.table(table)}`.execute(database.db);
  const applied = rows.map((row) => row.name).sort(byName);
  const names = Object.keys(migrations).sort(byName);
  if (applied.length !== names.length || applied.some((name, i) => name !== names[i])) return undefined;
  return { applied: [], current: names.at(-1) };
}

/** The migrator's own table, where it keeps it (see migrateToLatest), when it is there. */
async function migrationTable(database: Database): Promise<string | undefined> {
  if (database.dialect === "postgres") {
    const { rows } = await sql<{ schema: string; found: boolean }>`select current_schema() as schema, case when current_schema() is null then false else to_regclass(format('%I.%I', current_schema(), ${DEFAULT_MIGRATION_TABLE}::text)) is not null end as found`.execute(database.db);
    return rows[0]?.found ? `${rows[0].schema}.${DEFAULT_MIGRATION_TABLE}` : undefined;
  }
  const { rows } = await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name = ${DEFAULT_MIGRATION_TABLE}`.execute(database.db);
  return rows.length ? DEFAULT_MIGRATION_TABLE : undefined;
}

/** The names are numbered ASCII ("0001_…"): code-unit order is their order. */
const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

async function run(db: Kysely<Tables>, migrationTableSchema: string | undefined): Promise<MigrationReport> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    // Code-unit order (byName), which spares the start-up the ICU collator that Kysely's default
    // (localeCompare) builds on first use.
    nameComparator: byName,
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  });
  const { error, results = [] } = await migrator.migrateToLatest();
  const failed = results.find((r: MigrationResult) => r.status === "Error");
  if (error) {
    const name = failed ? ` ${failed.migrationName}` : "";
    throw new Error(`migration${name} failed: ${(error as Error).message ?? String(error)}`, { cause: error });
  }
  const all = await migrator.getMigrations();
  const executed = all.filter((m) => m.executedAt);
  return {
    applied: results.filter((r) => r.status === "Success").map((r) => r.migrationName),
    current: executed.at(-1)?.name,
  };
}
