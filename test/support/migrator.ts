import { Migrator, sql } from "kysely";
import { afterEach } from "vitest";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrations } from "../../src/storage/migrations/index.ts";
import type { DatabaseTarget, ScratchDatabase } from "./databases.ts";

/** A Kysely migrator over the service's migrations, for tests that stop at one of them; on PostgreSQL its tables are in the scratch schema, as migrateToLatest puts them. */
export async function migratorFor(database: Database): Promise<Migrator> {
  const schema =
    database.dialect === "postgres" ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db)).rows[0]?.schema : undefined;
  return new Migrator({ db: database.db, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) });
}

/**
 * For the tests of one migration, which each start from an empty schema:
 * call inside a describe; the function it returns opens a new scratch
 * database on `target` (not migrated), closed and dropped after the test.
 */
export function scratchDatabasePerTest(target: DatabaseTarget): () => Promise<Database> {
  let scratch: ScratchDatabase | undefined;
  let database: Database | undefined;
  afterEach(async () => {
    await database?.close();
    await scratch?.drop();
    database = undefined;
    scratch = undefined;
  });
  return async () => {
    scratch = await target.create();
    database = await openDatabase(scratch.url);
    return database;
  };
}
