import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import SqliteDatabase from "better-sqlite3";
import { sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/storage/database.ts";
import { SqliteCheckpointer } from "../../src/storage/sqlite-checkpointer.ts";

/** Polls until `check` holds, or fails after `ms`. */
async function eventually(check: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`condition not reached in time: ${String(check)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("SQLite checkpoints on a thread of their own", () => {
  let dir: string;
  let file: string;
  let connection: SqliteDatabase.Database;
  const closers: (() => Promise<void> | void)[] = [];

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), "shomei-checkpoint-"));
    file = path.join(dir, "c.db");
    connection = new SqliteDatabase(file);
    connection.pragma("journal_mode = WAL");
    // Only the thread under test may copy the log back.
    connection.pragma("wal_autocheckpoint = 0");
    connection.exec("create table t (id integer primary key, payload text not null)");
    closers.push(() => void connection.close());
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    rmSync(dir, { recursive: true, force: true });
  });

  const insert = (n: number) => {
    const statement = connection.prepare("insert into t (payload) values (?)");
    for (let i = 0; i < n; i++) statement.run("x".repeat(500));
  };

  it("starts only after the given number of statements", () => {
    const checkpointer = new SqliteCheckpointer(file, 20, 3);
    closers.push(() => checkpointer.close());
    for (let i = 0; i < 3; i++) checkpointer.noteStatement();
    expect(checkpointer.running).toBe(false);
    checkpointer.noteStatement();
    expect(checkpointer.running).toBe(true);
  });

  it("copies the log into the database file while the writer goes on, and every row survives", async () => {
    insert(2000);
    const before = statSync(file).size;
    const checkpointer = new SqliteCheckpointer(file, 20, 0);
    closers.push(() => checkpointer.close());
    checkpointer.noteStatement();
    // The writer keeps writing between checkpoints.
    for (let round = 0; round < 20; round++) {
      insert(100);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await eventually(() => (checkpointer.lastResult?.checkpointed ?? 0) > 0 && statSync(file).size > before + 1_000_000);
    expect(checkpointer.lastResult?.error).toBeUndefined();
    expect(connection.prepare("select count(*) as n from t").get()).toEqual({ n: 4000 });
    expect(connection.pragma("integrity_check", { simple: true })).toBe("ok");
    // A write that finds everything copied starts the log over from its beginning: the log stays short.
    await eventually(() => {
      insert(1);
      return (checkpointer.lastResult?.log ?? Infinity) < 100;
    });
  });

  it("ends its thread on close", async () => {
    const checkpointer = new SqliteCheckpointer(file, 20, 0);
    checkpointer.noteStatement();
    await eventually(() => checkpointer.lastResult !== undefined);
    await checkpointer.close();
    expect(checkpointer.running).toBe(false);
    // Closed: no new thread, whatever comes after.
    checkpointer.noteStatement();
    expect(checkpointer.running).toBe(false);
  });

  it("copies the whole log when asked, starting its thread, so the next write starts the log over", async () => {
    insert(2000);
    // Far from its threshold: only checkpointNow starts the thread.
    const checkpointer = new SqliteCheckpointer(file, 60_000, 1_000_000);
    closers.push(() => checkpointer.close());
    expect(checkpointer.running).toBe(false);
    await checkpointer.checkpointNow();
    expect(checkpointer.running).toBe(true);
    const copied = checkpointer.lastResult!;
    expect(copied.error).toBeUndefined();
    expect(copied.log).toBeGreaterThan(200);
    expect(copied.checkpointed).toBe(copied.log);
    insert(1);
    await checkpointer.checkpointNow();
    expect(checkpointer.lastResult!.log).toBeLessThan(10);
    expect(connection.prepare("select count(*) as n from t").get()).toEqual({ n: 2001 });
    // Closed, it has nothing to wait for.
    await checkpointer.close();
    await expect(checkpointer.checkpointNow()).resolves.toBeUndefined();
  });

  it("keeps one thread when a checkpoint asked for started it before the statements' threshold, and close ends it", async () => {
    const activePorts = () => process.getActiveResourcesInfo().filter((resource) => resource === "MessagePort").length;
    const portsBefore = activePorts();
    const checkpointer = new SqliteCheckpointer(file, 20, 3);
    closers.push(() => checkpointer.close());
    await checkpointer.checkpointNow();
    for (let i = 0; i < 5; i++) checkpointer.noteStatement();
    await checkpointer.checkpointNow();
    await checkpointer.close();
    expect(checkpointer.running).toBe(false);
    // A second thread, started at the threshold beside the first, would be left running, its port holding the process open.
    await eventually(() => activePorts() === portsBefore);
  });

  it("reports a thread that cannot open the database, and leaves the service as it was", async () => {
    const checkpointer = new SqliteCheckpointer(path.join(dir, "missing.db"), 20, 0);
    closers.push(() => checkpointer.close());
    checkpointer.noteStatement();
    await eventually(() => checkpointer.lastResult?.error !== undefined && !checkpointer.running).catch((error: Error) => {
      throw new Error(`${error.message} ${JSON.stringify(checkpointer.lastResult)} ${checkpointer.running}`);
    });
    expect(checkpointer.lastResult?.error).toMatch(/directory does not exist|unable to open|no such file/i);
    insert(10);
    expect(connection.prepare("select count(*) as n from t").get()).toEqual({ n: 10 });
  });
});

describe("the service's SQLite database", () => {
  it("checkpoints in the background once it has run 1,000 statements", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "shomei-checkpoint-db-"));
    const file = path.join(dir, "s.db");
    const database = await openDatabase(`sqlite:${file}`);
    try {
      await sql`create table t (id integer primary key, payload text not null)`.execute(database.db);
      const payload = "y".repeat(2000);
      // 1,200 commits of a row each: about 2,400 pages of log, well under wal_autocheckpoint's 10,000,
      // so the service's own connection never copies them back; only the background thread can.
      for (let i = 0; i < 1200; i++) await sql`insert into t (payload) values (${payload})`.execute(database.db);
      await eventually(() => statSync(file).size > 1200 * 2000);
      const { rows } = await sql<{ n: number }>`select count(*) as n from t`.execute(database.db);
      expect(rows[0]!.n).toBe(1200);
    } finally {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
