import { Migrator, sql } from "kysely";
import type { Database } from "../../src/storage/database.ts";
import { migrations } from "../../src/storage/migrations/index.ts";

/** A Kysely migrator over the service's migrations, for tests that stop at one of them; on PostgreSQL its tables are in the scratch schema, as migrateToLatest puts them. */
export async function migratorFor(database: Database): Promise<Migrator> {
  const schema =
    database.dialect === "postgres" ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db)).rows[0]?.schema : undefined;
  return new Migrator({ db: database.db, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) });
}
