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
 * A multi-row INSERT into `table`, compiled once per connection object, set
 * of columns and number of rows (see preparedQuery). The grouped writes of
 * the hot paths (status records, one-time records, tokens) insert a few rows
 * at a time; Kysely would otherwise parse every row's values and compile the
 * statement anew for each group. Every row must have the same columns, in
 * the same order (rows made by one mapping function do); undefined is
 * stored as null.
 */
export function preparedInsert<DB>(table: keyof DB & string): (db: Kysely<DB>, rows: readonly Record<string, unknown>[]) => Promise<void> {
  const byShape = new Map<string, (db: Kysely<DB>, ...values: unknown[]) => Promise<unknown[]>>();
  return async (db, rows) => {
    if (rows.length === 0) return;
    const columns = Object.keys(rows[0]!);
    for (const row of rows) {
      if (Object.keys(row).length !== columns.length) throw new Error(`rows inserted together into ${table} must have the same columns`);
    }
    const shape = `${rows.length}:${columns.join(",")}`;
    let insert = byShape.get(shape);
    if (!insert) {
      const count = rows.length;
      insert = preparedQuery((db: Kysely<DB>, ...values: unknown[]) =>
        db.insertInto(table).values(
          Array.from({ length: count }, (_, r) => Object.fromEntries(columns.map((column, c) => [column, values[r * columns.length + c]]))) as never,
        ),
      );
      byShape.set(shape, insert);
    }
    const values: unknown[] = [];
    for (const row of rows) for (const column of columns) values.push(row[column] ?? null);
    await insert(db, ...values);
  };
}
