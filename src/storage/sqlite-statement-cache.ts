import type { Database as BetterSqliteDatabase } from "better-sqlite3";
import type { SqliteDatabase, SqliteStatement } from "kysely";
import { withRowBuilder } from "./sqlite-row-builder.ts";

/** Statements kept ready; the service issues a few dozen distinct ones. */
const capacity = 256;
/**
 * Longer SQL (a batch's insert of a thousand rows, its read of a thousand
 * ids) is kept apart, only the last few: each is large, and batches of a
 * new size would otherwise push the short statements out. Preparing a
 * 1,000-row insert of status records takes about 4 ms, as much as a
 * tenth of the whole batch call, so a client sending batches of one size
 * should not pay it every time.
 */
const maxShortSqlLength = 4096;
const longCapacity = 4;

/**
 * The SQLite handle Kysely's driver uses, with prepared statements kept by
 * their SQL text. Kysely prepares every statement on every query; on a hot
 * path (an API token lookup, a status insert) preparing costs about as much
 * as running the statement. Reusing one is safe: the driver runs one query at
 * a time on the single connection and reads each statement's results in
 * full before the next. The least recently used statement goes first when
 * the cache is full.
 */
export function withStatementCache(database: BetterSqliteDatabase, onStatement?: () => void): SqliteDatabase {
  const short = new LeastRecentlyUsed(capacity);
  const long = new LeastRecentlyUsed(longCapacity);
  return {
    close: () => database.close(),
    prepare(sql: string) {
      onStatement?.();
      const kept = sql.length <= maxShortSqlLength ? short : long;
      return kept.get(sql) ?? kept.set(sql, withRowBuilder(database.prepare(sql), sql));
    },
  };
}

/** Statements by SQL text; the least recently used goes first when full. */
class LeastRecentlyUsed {
  private readonly statements = new Map<string, SqliteStatement>();

  constructor(private readonly capacity: number) {}

  get(sql: string): SqliteStatement | undefined {
    const statement = this.statements.get(sql);
    if (statement) {
      this.statements.delete(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  set(sql: string, statement: SqliteStatement): SqliteStatement {
    this.statements.set(sql, statement);
    if (this.statements.size > this.capacity) this.statements.delete(this.statements.keys().next().value!);
    return statement;
  }
}
