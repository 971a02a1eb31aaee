import type pg from "pg";

/** Distinct statements given names; the service issues a few dozen, so the limit only guards against surprises. */
const capacity = 512;
/** Longer SQL (a batch of hundreds of rows) is rare and large: sent unnamed, as before. */
const maxNamedSqlLength = 4096;
/** Only data statements: DDL run by migrations must not leave plans behind that a later ALTER invalidates. */
const dataStatement = /^\s*(select|insert|update|delete|with)\b/i;

/**
 * Makes the pool's clients send Kysely's queries as named prepared
 * statements. Kysely calls `client.query(sql, parameters)`, which pg sends
 * as an unnamed statement: PostgreSQL parses and plans it again on every
 * call. Named, it is parsed once per connection and its plan kept (pg
 * remembers which names each connection has prepared), which saves the
 * server work on every call of the hot paths. Names are derived from the
 * SQL text through one shared table, so a name never stands for two texts.
 */
export function nameStatements(pool: pg.Pool): void {
  /** SQL text to statement name; "" for a text that must be sent unnamed. */
  const names = new Map<string, string>();
  const nameOf = (sql: string): string | undefined => {
    let name = names.get(sql);
    if (name === "") return undefined;
    if (name === undefined && names.size < capacity && sql.length <= maxNamedSqlLength && dataStatement.test(sql)) {
      name = `shomei_${names.size + 1}`;
      names.set(sql, name);
    }
    return name;
  };
  pool.on("connect", (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const [text, values] = args;
      if (args.length === 2 && typeof text === "string" && Array.isArray(values)) {
        const name = nameOf(text);
        if (name) {
          return query({ name, text, values }).catch((error: unknown) => {
            // A table's columns changed under a prepared `select *` (a migration by a newer instance during a
            // rolling upgrade): PostgreSQL refuses the old plan. That text is sent unnamed from now on.
            if ((error as { code?: string }).code !== "0A000") throw error;
            names.set(text, "");
            return query(text, values);
          });
        }
      }
      return query(...args);
    };
  });
}
