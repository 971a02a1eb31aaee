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

/** Lists longer than this are bound as they are. */
const maxPaddedLength = 1024;

/**
 * The values padded to the next power of two by repeating the last one, for
 * an `in (…)` list whose length depends on how many calls shared a read: the
 * statement then comes in a few texts (2, 4, … 1,024 values) rather than one
 * per length, so PostgreSQL's named statements and SQLite's statement cache
 * hold a handful. Repeating a value changes nothing an `in` list matches.
 */
export function paddedToPowerOfTwo(values: readonly string[]): readonly string[] {
  if (values.length === 0 || values.length > maxPaddedLength) return values;
  let size = 1;
  while (size < values.length) size *= 2;
  return size === values.length ? values : [...values, ...Array.from({ length: size - values.length }, () => values[values.length - 1]!)];
}

