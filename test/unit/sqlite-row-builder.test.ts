import SqliteDatabase from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { withRowBuilder } from "../../src/storage/sqlite-row-builder.ts";

describe("rows built in JavaScript", () => {
  let database: SqliteDatabase.Database;
  beforeEach(() => {
    database = new SqliteDatabase(":memory:");
    database.exec("create table t (id text primary key, n integer, r real, b blob, missing text)");
    const insert = database.prepare("insert into t values (?, ?, ?, ?, ?)");
    insert.run("a", 1, 1.5, Buffer.from([1, 2, 3]), null);
    insert.run("b", 2 ** 40, -0.25, null, "x");
  });
  afterEach(() => database.close());

  /** The same SQL through better-sqlite3's own objects and through the builder. */
  function both(sql: string, parameters: unknown[] = []) {
    const built = withRowBuilder(database.prepare(sql), sql);
    return { own: database.prepare(sql).all(parameters), built: built.all(parameters) };
  }

  it("gives the rows better-sqlite3 gives, value for value and key for key", () => {
    const { own, built } = both("select id, n, r, b, missing, n + 1 as next, 'lit' as \"odd \"\"name\"\"\" from t where id in (?, ?) order by id", ["a", "b"]);
    expect(built).toEqual(own);
    expect(built.map((row) => Object.keys(row as object))).toEqual(own.map((row) => Object.keys(row as object)));
    expect((built[0] as { b: Buffer }).b).toEqual(Buffer.from([1, 2, 3]));
    expect((built[1] as { n: number }).n).toBe(2 ** 40);
  });

  it("keeps the last value when two columns share a name, as better-sqlite3 does", () => {
    const { own, built } = both("select id, n as v, r as v from t order by id");
    expect(own).toEqual([{ id: "a", v: 1.5 }, { id: "b", v: -0.25 }]);
    expect(built).toEqual(own);
  });

  it("gives an empty list when nothing matches, and objects when iterated", () => {
    const sql = "select id, n from t where id = ?";
    const built = withRowBuilder(database.prepare(sql), sql);
    expect(built.all(["none"])).toEqual([]);
    expect([...built.iterate(["b"])]).toEqual([{ id: "b", n: 2 ** 40 }]);
  });

  it("runs writing statements as they are", () => {
    const sql = "update t set n = n + ? where id = ?";
    const statement = withRowBuilder(database.prepare(sql), sql);
    expect(statement.reader).toBe(false);
    expect(statement.run([10, "a"]).changes).toBe(1);
    expect(database.prepare("select n from t where id = 'a'").get()).toEqual({ n: 11 });
  });

  it("maps by the names of the SQL text even after the table is rebuilt with its columns in another order", () => {
    const sql = "select n, id from t where id = ?";
    const statement = withRowBuilder(database.prepare(sql), sql);
    expect(statement.all(["a"])).toEqual([{ n: 1, id: "a" }]);
    database.exec("create table t2 (n integer, missing text, id text primary key, r real, b blob); insert into t2 select n, missing, id, r, b from t; drop table t; alter table t2 rename to t");
    expect(statement.all(["a"])).toEqual([{ n: 1, id: "a" }]);
  });

  it("leaves a statement with a * to better-sqlite3, so columns added later come back", () => {
    const sql = "select * from t where id = ?";
    const statement = withRowBuilder(database.prepare(sql), sql);
    database.exec("alter table t add column later text default 'new'");
    expect(statement.all(["a"])).toEqual([{ id: "a", n: 1, r: 1.5, b: Buffer.from([1, 2, 3]), missing: null, later: "new" }]);
  });

  it("leaves a column named __proto__ to better-sqlite3: a literal would make it the row's prototype", () => {
    const { own, built } = both(`select id, n as "__proto__" from t where id = 'a'`);
    expect(built).toEqual(own);
    expect(Object.getPrototypeOf(built[0])).toBe(Object.prototype);
  });

  it("cannot be broken out of by a column name", () => {
    const name = `x": process.exit(1), "y`;
    const sql = `select id as "${name.replaceAll('"', '""')}" from t where id = 'a'`;
    const [row] = withRowBuilder(database.prepare(sql), sql).all([]) as Record<string, unknown>[];
    expect(row).toEqual({ [name]: "a" });
  });
});
