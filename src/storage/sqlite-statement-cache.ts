import type { Database as BetterSqliteDatabase, Statement } from "better-sqlite3";
import type { SqliteDatabase } from "kysely";

/** Statements kept ready; the service issues a few dozen distinct ones. */
const capacity = 256;
/** Longer SQL (a batch insert of hundreds of rows) is rare and large: prepared each time, not kept. */
const maxCachedSqlLength = 4096;

/**
 * The SQLite handle Kysely's driver uses, with prepared statements kept by
 * their SQL text. Kysely prepares every statement on every query; on a hot
 * path (an API token lookup, a status insert) preparing costs about as much
 * as running the statement. Reusing one is safe: the driver runs one query at
 * a time on the single connection and reads each statement's results in
 * full before the next. The least recently used statement goes first when
 * the cache is full.
 */
export function withStatementCache(database: BetterSqliteDatabase): SqliteDatabase {
  const statements = new Map<string, Statement>();
  return {
    close: () => database.close(),
    prepare(sql: string) {
      const cached = statements.get(sql);
      if (cached) {
        statements.delete(sql);
        statements.set(sql, cached);
        return cached;
      }
      const statement = database.prepare(sql);
      if (sql.length <= maxCachedSqlLength) {
        statements.set(sql, statement);
        if (statements.size > capacity) statements.delete(statements.keys().next().value!);
      }
      return statement;
    },
  };
}
