import { sql, type Expression, type SqlBool } from "kysely";
import type { Dialect } from "./database.ts";
import { paddedToPowerOfTwo } from "./parameter-limit.ts";

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
 * carries: compiled once (see preparedQuery), prepared and planned once per
 * connection. A list of placeholders made a text per size instead, built by
 * Kysely at every call (about 28 µs for 8 ids). SQLite has no array
 * parameter: there the ids are listed (`in (?, …)`).
 */
export function keyIn(dialect: Dialect, column: string, ids: readonly string[]): Expression<SqlBool> {
  return dialect === "postgres" ? sql<SqlBool>`${sql.ref(column)} = any(${ids})` : sql<SqlBool>`${sql.ref(column)} in (${sql.join(ids)})`;
}

/** The forms of one read of rows by id (see readByIds). */
export interface ReadsByIds<Row> {
  /** One id: its own prepared read. */
  one(id: string): Promise<Row[]>;
  /** Several on PostgreSQL: one array parameter (see keyIn). */
  array(ids: readonly string[]): Promise<Row[]>;
  /** Several on SQLite: a list, padded to a power of two so that a few texts serve every size. */
  list(ids: readonly string[]): Promise<Row[]>;
}

/** Rows by id, read in the form that suits how many there are and the database. */
export function readByIds<Row>(dialect: Dialect, ids: readonly string[], reads: ReadsByIds<Row>): Promise<Row[]> {
  if (ids.length === 1) return reads.one(ids[0]!);
  return dialect === "postgres" ? reads.array(ids) : reads.list(paddedToPowerOfTwo(ids));
}
