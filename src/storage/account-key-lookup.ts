import { sql, type Expression, type SqlBool } from "kysely";
import type { Dialect } from "./database.ts";

/**
 * The account column of a read that finds its rows by primary key
 * (`account_id = ? and id in (…)`), in a form no planner will use to choose
 * an index. Without statistics SQLite prefers an index led by the account
 * column to the primary key as soon as the `in` list holds a few ids, and
 * so walks every row of the account: a batch of 8 ids of an account with
 * 100,000 certificates took 37 ms instead of 0.03 ms. PostgreSQL does the
 * same whenever its statistics are older than the account's rows (after a
 * bulk import, or rows written since the last ANALYZE): a coalesced read of
 * a few status checks walked all 1,000 certificates of the benchmark's
 * account, about a hundred rows read for every check. A unary `+` on SQLite
 * and an empty concatenation on PostgreSQL keep the condition and leave the
 * primary key to find the rows.
 */
export function accountOfKeyedRows(dialect: Dialect, column: string): Expression<string> {
  return dialect === "sqlite" ? sql<string>`+${sql.ref(column)}` : sql<string>`(${sql.ref(column)} || '')`;
}

/**
 * `column` is one of `ids`. On PostgreSQL the ids are one array parameter
 * (`= any($n)`), so the statement's text is the same however many ids it
 * carries: it is compiled once (see preparedQuery) and prepared once per
 * connection, where a list of placeholders made a text, and a Kysely build
 * of about 28 µs, for every size. SQLite has no array parameter: there the
 * ids are listed (`in (?, …)`).
 */
export function keyIn(dialect: Dialect, column: string, ids: readonly string[]): Expression<SqlBool> {
  return dialect === "postgres" ? sql<SqlBool>`${sql.ref(column)} = any(${ids})` : sql<SqlBool>`${sql.ref(column)} in (${sql.join(ids)})`;
}
