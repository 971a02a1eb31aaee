import { describe, expect, it } from "vitest";
import { VersionedLookups } from "../../src/domain/accounts/versioned-lookups.ts";

/** A store of rows and a version, counting the reads of each: what the lookups cost is what they read. */
class CountingStore {
  version: number | undefined = 1;
  readonly rows = new Map<string, { value: string }>();
  versionReads = 0;
  rowReads = 0;

  lookups(capacity?: number): VersionedLookups<{ value: string }> {
    return new VersionedLookups(
      async () => {
        this.versionReads++;
        return this.version;
      },
      async (key) => {
        this.rowReads++;
        return this.rows.get(key);
      },
      capacity,
    );
  }
}

describe("VersionedLookups", () => {
  it("answers a repeated lookup from memory while the version holds: one read of the version per call, the row once", async () => {
    const store = new CountingStore();
    store.rows.set("a", { value: "first" });
    const lookups = store.lookups();
    for (let i = 0; i < 3; i++) expect(await lookups.lookup("a")).toEqual({ value: "first" });
    expect({ versionReads: store.versionReads, rowReads: store.rowReads }).toEqual({ versionReads: 3, rowReads: 1 });
  });

  it("reads the row again once the version moves, and remembers it under the new one", async () => {
    const store = new CountingStore();
    store.rows.set("a", { value: "first" });
    const lookups = store.lookups();
    await lookups.lookup("a");
    store.rows.set("a", { value: "changed" });
    expect(await lookups.lookup("a")).toEqual({ value: "first" });
    store.version = 2;
    expect(await lookups.lookup("a")).toEqual({ value: "changed" });
    expect(lookups.remembered("a")).toEqual({ version: 2, found: { value: "changed" } });
    expect(store.rowReads).toBe(2);
  });

  it("reads the version before the row: a change between the two leaves the row under the older version", async () => {
    const store = new CountingStore();
    store.rows.set("a", { value: "first" });
    const lookups = new VersionedLookups(
      async () => store.version,
      async (key) => {
        const row = store.rows.get(key);
        store.version = 2; // a change commits just after the row was read
        return row;
      },
    );
    await lookups.lookup("a");
    expect(lookups.remembered("a")?.version).toBe(1);
  });

  it("never remembers what is not found, nor anything while there is no version", async () => {
    const store = new CountingStore();
    const lookups = store.lookups();
    expect(await lookups.lookup("missing")).toBeUndefined();
    expect(await lookups.lookup("missing")).toBeUndefined();
    expect(store.rowReads).toBe(2);
    expect(lookups.remembered("missing")).toBeUndefined();
    store.version = undefined;
    store.rows.set("a", { value: "first" });
    expect(await lookups.lookup("a")).toEqual({ value: "first" });
    expect(lookups.remembered("a")).toBeUndefined();
  });

  it("forgets an entry whose row is gone when read again, and on forget and clear", async () => {
    const store = new CountingStore();
    store.rows.set("a", { value: "first" });
    store.rows.set("b", { value: "second" });
    const lookups = store.lookups();
    await lookups.lookup("a");
    await lookups.lookup("b");
    lookups.forget("a");
    expect(lookups.remembered("a")).toBeUndefined();
    expect(lookups.remembered("b")).toBeDefined();
    store.rows.delete("b");
    store.version = 2;
    expect(await lookups.lookup("b")).toBeUndefined();
    expect(lookups.remembered("b")).toBeUndefined();
    await lookups.lookup("a");
    lookups.clear();
    expect(lookups.remembered("a")).toBeUndefined();
  });

  it("keeps at most its capacity: the oldest read goes first", async () => {
    const store = new CountingStore();
    for (const key of ["a", "b", "c"]) store.rows.set(key, { value: key });
    const lookups = store.lookups(2);
    for (const key of ["a", "b", "c"]) await lookups.lookup(key);
    expect(["a", "b", "c"].map((key) => lookups.remembered(key) !== undefined)).toEqual([false, true, true]);
  });
});
