import type { Compilable, CompiledQuery, Kysely } from "kysely";

/**
 * A query Kysely builds and compiles once per connection object and then
 * runs with new values: for the statements every request of a hot path makes
 * (the signed-in read of an authorization, a client by id, a refresh token's
 * rotation). Kysely otherwise builds an immutable tree and compiles it to SQL
 * on every call, which for a join costs more than SQLite running it, and
 * hands the statement cache a new SQL string to hash each time.
 *
 * `build` gets one marker per argument in place of the values and must bind
 * each as a plain value, once or more (`where(column, "=", value)`,
 * `set({ column: value })`, `limit(value)`), without transforming it; anything
 * else it binds stays as compiled. At each call the markers' parameters are
 * replaced by the arguments. A marker not bound as it was given (transformed,
 * spread into an `in` list, left out) is refused when the query is first
 * compiled, so a mistake fails every test that runs the query rather than
 * binding a wrong value.
 */
export function preparedQuery<DB, Args extends readonly unknown[], Row>(
  build: (db: Kysely<DB>, ...args: Args) => Compilable<Row>,
): (db: Kysely<DB>, ...args: Args) => Promise<Row[]> {
  // Per connection object: a view with plugins (a statement counter in tests) compiles its own.
  const compiled = new WeakMap<Kysely<DB>, { query: CompiledQuery<Row>; argumentAt: number[] }>();
  return async (db, ...args) => {
    let prepared = compiled.get(db);
    if (!prepared) {
      prepared = compile(db, build, args.length);
      compiled.set(db, prepared);
    }
    const { query, argumentAt } = prepared;
    const parameters = query.parameters.map((value, i) => (argumentAt[i]! >= 0 ? args[argumentAt[i]!] : value));
    const result = await db.executeQuery<Row>({ ...query, parameters });
    return result.rows;
  };
}

/** What the placeholder values start with: a NUL, which no value the service binds holds. */
const markerPrefix = "\u0000prepared-query-argument-";

function compile<DB, Args extends readonly unknown[], Row>(
  db: Kysely<DB>,
  build: (db: Kysely<DB>, ...args: Args) => Compilable<Row>,
  arity: number,
): { query: CompiledQuery<Row>; argumentAt: number[] } {
  const markers = Array.from({ length: arity }, (_, i) => `${markerPrefix}${i}\u0000`);
  const query = build(db, ...(markers as unknown as Args)).compile();
  const argumentAt = query.parameters.map((value) => markers.indexOf(value as string));
  markers.forEach((_, i) => {
    if (!argumentAt.includes(i)) throw new Error(`prepared query does not bind argument ${i} as a value: ${query.sql}`);
  });
  // A marker bound as given and also transformed (`marker + "%"`) would keep the marker's text in the transformed copy.
  query.parameters.forEach((value, i) => {
    if (argumentAt[i] === -1 && typeof value === "string" && value.includes(markerPrefix)) {
      throw new Error(`prepared query binds a transformed argument as parameter ${i + 1}: ${query.sql}`);
    }
  });
  return { query, argumentAt };
}

/**
 * A multi-row INSERT into `table`: Kysely compiles one row's statement once
 * per connection object and set of columns, and the statement for n rows
 * repeats its row of placeholders n times (renumbered on PostgreSQL). The
 * grouped writes of the hot paths (status records, one-time records, tokens)
 * insert a few rows at a time, a batch check up to a thousand; building the
 * rows through Kysely instead parses every value, and compiling a thousand
 * rows that way took seconds. Every row must have the same columns, in the
 * same order (rows made by one mapping function do); undefined is stored as
 * null.
 */
export function preparedInsert<DB>(table: keyof DB & string): (db: Kysely<DB>, rows: readonly Record<string, unknown>[]) => Promise<void> {
  const templates = new WeakMap<Kysely<DB>, Map<string, InsertTemplate>>();
  return async (db, rows) => {
    if (rows.length === 0) return;
    const columns = Object.keys(rows[0]!);
    for (const row of rows) {
      if (Object.keys(row).length !== columns.length) throw new Error(`rows inserted together into ${table} must have the same columns`);
    }
    let byColumns = templates.get(db);
    if (!byColumns) templates.set(db, (byColumns = new Map()));
    const key = columns.join(",");
    let template = byColumns.get(key);
    if (!template) byColumns.set(key, (template = insertTemplate(db, table, columns)));
    const parameters: unknown[] = [];
    for (const row of rows) for (const column of columns) parameters.push(row[column] ?? null);
    await db.executeQuery({ ...template.query, sql: template.sqlFor(rows.length), parameters });
  };
}

interface InsertTemplate {
  /** The one-row statement as Kysely compiled it (its operation node goes to plugins unchanged). */
  query: CompiledQuery;
  sqlFor(rows: number): string;
}

/** Row counts whose SQL is kept: the grouped writes' small groups recur; a batch's rarely does. */
const keptRowCounts = 64;

function insertTemplate<DB>(db: Kysely<DB>, table: keyof DB & string, columns: readonly string[]): InsertTemplate {
  const markers = columns.map((_, i) => `${markerPrefix}${i}\u0000`);
  const query = db.insertInto(table).values(Object.fromEntries(columns.map((column, i) => [column, markers[i]])) as never).compile();
  if (query.parameters.length !== markers.length || query.parameters.some((value, i) => value !== markers[i])) {
    throw new Error(`prepared insert into ${table} does not bind each column as a value: ${query.sql}`);
  }
  const at = query.sql.lastIndexOf(" values (");
  const head = query.sql.slice(0, at + " values ".length);
  const row = query.sql.slice(at + " values ".length);
  const numbered = row === `(${columns.map((_, i) => `$${i + 1}`).join(", ")})`;
  if (!numbered && row !== `(${columns.map(() => "?").join(", ")})`) {
    throw new Error(`prepared insert into ${table} compiled to an unexpected row of values: ${query.sql}`);
  }
  const rowAt = (r: number) => (numbered ? `(${columns.map((_, i) => `$${r * columns.length + i + 1}`).join(", ")})` : row);
  const kept: string[] = [];
  return {
    query,
    sqlFor(rows) {
      const cached = kept[rows];
      if (cached) return cached;
      const sql = head + Array.from({ length: rows }, (_, r) => rowAt(r)).join(", ");
      if (rows <= keptRowCounts) kept[rows] = sql;
      return sql;
    },
  };
}
