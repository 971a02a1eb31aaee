import SqliteDatabase from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { withStatementCache } from "../../src/storage/sqlite-statement-cache.ts";

/** A real in-memory SQLite whose prepare() calls are counted by SQL text. */
function countedDatabase() {
  const database = new SqliteDatabase(":memory:");
  database.exec("create table t (a integer, b integer)");
  const prepared = new Map<string, number>();
  const prepare = database.prepare.bind(database);
  database.prepare = ((sql: string) => {
    prepared.set(sql, (prepared.get(sql) ?? 0) + 1);
    return prepare(sql);
  }) as typeof database.prepare;
  return { database, prepared };
}

/** An insert of `rows` rows: SQL over 4,096 characters from about 520 rows. */
function insertOf(rows: number): string {
  return `insert into t (a, b) values ${Array.from({ length: rows }, () => "(?, ?)").join(", ")}`;
}

describe("SQLite statement cache", () => {
  let close: (() => void) | undefined;
  afterEach(() => close?.());

  it("prepares a statement once and runs it again with new values", () => {
    const { database, prepared } = countedDatabase();
    const cached = withStatementCache(database);
    close = () => cached.close();
    for (let i = 0; i < 5; i++) cached.prepare("insert into t (a, b) values (?, ?)").run([i, i * 2]);
    expect(prepared.get("insert into t (a, b) values (?, ?)")).toBe(1);
    expect(cached.prepare("select sum(b) as s from t").all([])).toEqual([{ s: 20 }]);
  });

  it("keeps the last four long statements (a batch's insert), apart from the short ones", () => {
    const { database, prepared } = countedDatabase();
    const cached = withStatementCache(database);
    close = () => cached.close();
    const sizes = [1000, 999, 1000, 700, 600, 1000, 999, 800, 1000, 999];
    for (const rows of sizes) cached.prepare(insertOf(rows)).run(Array.from({ length: rows * 2 }, (_, i) => i));
    expect(insertOf(600).length).toBeGreaterThan(4096);
    // 1000, 999, 700 and 600 kept; 800 pushes out 700 (the least recently used), and 1000 and 999 stay.
    expect([1000, 999, 700, 600, 800].map((rows) => prepared.get(insertOf(rows)))).toEqual([1, 1, 1, 1, 1]);
    cached.prepare(insertOf(700));
    expect(prepared.get(insertOf(700))).toBe(2);
    // Long statements do not push short ones out.
    cached.prepare("select count(*) as n from t");
    for (let rows = 600; rows < 620; rows++) cached.prepare(insertOf(rows));
    cached.prepare("select count(*) as n from t");
    expect(prepared.get("select count(*) as n from t")).toBe(1);
    expect(cached.prepare("select count(*) as n from t").all([])).toEqual([{ n: sizes.reduce((a, b) => a + b, 0) }]);
  });
});
