import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../src/storage/database.ts";

/** The connection settings the embedded store's durability and speed rest on (docs/performance.md). */
describe("SQLite connection settings", () => {
  let dir: string;
  let database: Database;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "shomei-settings-"));
    database = await openDatabase(`sqlite:${path.join(dir, "settings.db")}`);
  });
  afterAll(async () => {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function pragma(name: string): Promise<unknown> {
    const { rows } = await sql.raw(`pragma ${name}`).execute(database.db);
    return Object.values(rows[0] as Record<string, unknown>)[0];
  }

  it("writes ahead to a log, syncs at checkpoints, enforces foreign keys", async () => {
    expect(await pragma("journal_mode")).toBe("wal");
    expect(await pragma("synchronous")).toBe(1);
    expect(await pragma("foreign_keys")).toBe(1);
  });

  it("checkpoints the log every 10,000 pages, not every 1,000, and trims it back to 48 MiB", async () => {
    expect(await pragma("wal_autocheckpoint")).toBe(10000);
    expect(await pragma("journal_size_limit")).toBe(48 * 1024 * 1024);
  });
});
