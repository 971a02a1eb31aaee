import type { Statement } from "better-sqlite3";
import type { SqliteStatement } from "kysely";

/**
 * A reading statement whose rows are made in JavaScript: SQLite hands each
 * row over as an array (better-sqlite3's raw mode) and a function compiled
 * once for the statement's columns turns it into the object Kysely expects.
 *
 * better-sqlite3 builds a row object through V8's C++ API one property at a
 * time; for a row of twenty columns that costs about as much as the row's
 * lookup. An object literal of a fixed shape costs a tenth of it: a batch
 * check's read of 1,000 certificates took 5.3 ms as objects, 2.6 ms this way.
 *
 * The column names are read once, when the statement is prepared, so only
 * statements whose columns the SQL text fixes are built this way: one with a
 * `*` anywhere (`select *`, `returning *`, `t.*`, even `count(*)`) could gain,
 * lose or reorder columns when the schema changes under it (SQLite prepares
 * it again by itself), and keeps better-sqlite3's own objects. So does one
 * with a column named `__proto__`, which a literal would take as the
 * object's prototype. As in better-sqlite3's objects, when two columns share
 * a name the last one's value is kept.
 */
export function withRowBuilder(statement: Statement, sql: string): SqliteStatement {
  if (!statement.reader || sql.includes("*")) return statement;
  const names = statement.columns().map((column) => column.name);
  if (names.includes("__proto__")) return statement;
  const build = rowBuilder(names);
  statement.raw(true);
  return {
    reader: true,
    all(parameters) {
      const rows = statement.all(parameters) as unknown[][];
      const objects = new Array<unknown>(rows.length);
      for (let i = 0; i < rows.length; i++) objects[i] = build(rows[i]!);
      return objects;
    },
    run: (parameters) => statement.run(parameters),
    *iterate(parameters) {
      for (const row of statement.iterate(parameters) as IterableIterator<unknown[]>) yield build(row);
    },
  };
}

type RowBuilder = (row: unknown[]) => Record<string, unknown>;

/** Builders by column list: statements that differ only in their parameters (a batch's `in` lists of every size) share one. */
const builders = new Map<string, RowBuilder>();
const maxBuilders = 1024;

/** `row => ({"a": row[0], "b": row[1]})`: keys written as JSON strings, so no name can break out of the literal. */
function rowBuilder(names: readonly string[]): RowBuilder {
  const key = names.join("\u0000");
  let build = builders.get(key);
  if (!build) {
    const lastIndex = new Map<string, number>();
    names.forEach((name, index) => lastIndex.set(name, index));
    const fields = [...lastIndex].map(([name, index]) => `${JSON.stringify(name)}: row[${index}]`);
    build = new Function("row", `return { ${fields.join(", ")} };`) as RowBuilder;
    if (builders.size >= maxBuilders) builders.clear();
    builders.set(key, build);
  }
  return build;
}
