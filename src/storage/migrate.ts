import { Migrator, type MigrationResult } from "kysely";
import type { Database } from "./database.ts";
import { migrations } from "./migrations/index.ts";

export interface MigrationReport {
  applied: string[];
  current: string | undefined;
}

/** Applies every pending migration; safe to run from several instances at once (the migrator takes a lock). */
export async function migrateToLatest(database: Database): Promise<MigrationReport> {
  const migrator = new Migrator({
    db: database.db,
    provider: { getMigrations: async () => migrations },
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
