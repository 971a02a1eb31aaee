/**
 * Lookups remembered under a version that every change to what they read
 * moves (the API auth version, see AccountStore.authVersion): a lookup is
 * answered from memory while the version it was read under is current, and
 * read again otherwise. So a call costs a read of the version instead of the
 * row and its account, and a change is seen on the very next call on every
 * instance. At most `capacity` lookups are kept; beyond that the oldest goes.
 */
export class VersionedLookups<T> {
  private readonly entries = new Map<string, RememberedLookup<T>>();

  /**
   * @param version reads the current version (undefined when there is none yet: nothing is remembered)
   * @param read reads what a key finds, undefined when nothing
   */
  constructor(
    private readonly version: () => Promise<number | undefined>,
    private readonly read: (key: string) => Promise<T | undefined>,
    private readonly capacity = 10_000,
  ) {}

  /**
   * What `read` finds for the key under the current version: the version is
   * read first, so a change committed between the two reads leaves the entry
   * under the older version, read again next time. Found rows are remembered
   * only under a known version; what is not found is never remembered.
   */
  async lookup(key: string): Promise<T | undefined> {
    const current = await this.version();
    const remembered = this.entries.get(key);
    if (remembered && remembered.version === current) return remembered.found;
    const found = await this.read(key);
    this.entries.delete(key);
    if (found && current !== undefined) {
      this.entries.set(key, { version: current, found });
      if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    }
    return found;
  }

  /** The lookup as last read, with the version it was read under, without reading anything (it may be stale). */
  remembered(key: string): RememberedLookup<T> | undefined {
    return this.entries.get(key);
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}

/** A lookup as last read, with the version it was read under. */
export interface RememberedLookup<T> {
  version: number;
  found: T;
}
