/**
 * Bound parameters one statement may carry on both databases: SQLite's limit
 * (SQLITE_MAX_VARIABLE_NUMBER, 32,766 since 3.32 and in better-sqlite3's
 * build); PostgreSQL's is 65,535. Batch reads and writes stay one statement
 * up to this, and split beyond it.
 */
export const maxParameters = 32_766;

/** items in consecutive slices of at most size each (none for no items). */
export function chunked<T>(items: readonly T[], size: number): T[][] {
  if (!Number.isInteger(size) || size < 1) throw new TypeError(`chunk size must be a positive integer, got ${size}`);
  const slices: T[][] = [];
  for (let i = 0; i < items.length; i += size) slices.push(items.slice(i, i + size));
  return slices;
}

/**
 * The distinct values, in slices small enough for one `in (…)` list each in a
 * statement that also binds `otherParameters` of its own (a tenant id, an
 * origin): every caller counts only its own, the limit is counted here.
 */
export function distinctInChunks(values: readonly string[], otherParameters: number): string[][] {
  return chunked([...new Set(values)], maxParameters - otherParameters);
}
