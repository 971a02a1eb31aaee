import type { Config } from "../config/schema.ts";
import { openDatabase } from "../storage/database.ts";
import { migrateToLatest } from "../storage/migrate.ts";

export async function migrateCommand(config: Config): Promise<void> {
  const database = await openDatabase(config.databaseUrl);
  try {
    const report = await migrateToLatest(database);
    console.log(
      report.applied.length
        ? `applied ${report.applied.length} migration(s) to ${database.displayUrl}: ${report.applied.join(", ")}`
        : `${database.displayUrl} is up to date (at ${report.current ?? "no migrations"})`,
    );
  } finally {
    await database.close();
  }
}
