import { afterEach, describe, expect, it, vi } from "vitest";
import { CoalescedCalls, everyOne, groupedWrites } from "../../src/storage/coalesced-calls.ts";

/** A flush that records the batches it was given and finishes only when told to. */
function gated() {
  const batches: string[][] = [];
  const pending: (() => void)[] = [];
  const calls = new CoalescedCalls<string, string>(
    (items) =>
      new Promise((resolve) => {
        batches.push([...items]);
        pending.push(() => resolve(items.map((item) => (item.startsWith("bad") ? { status: "rejected", reason: new Error(item) } : { status: "fulfilled", value: item.toUpperCase() }))));
      }),
    3,
  );
  const finishNext = async () => {
    pending.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { calls, batches, finishNext };
}

describe("CoalescedCalls", () => {
  it("a call made while nothing runs is flushed at once, alone", async () => {
    const { calls, batches, finishNext } = gated();
    const answer = calls.call("a");
    expect(batches).toEqual([["a"]]);
    await finishNext();
    expect(await answer).toBe("A");
  });

  it("calls made while a flush runs share the next one, in order, at most maxItems a flush", async () => {
    const { calls, batches, finishNext } = gated();
    const answers = ["a", "b", "c", "d", "e", "f"].map((item) => calls.call(item));
    expect(batches).toEqual([["a"]]);
    await finishNext();
    expect(batches).toEqual([["a"], ["b", "c", "d"]]);
    const later = calls.call("g");
    await finishNext();
    expect(batches).toEqual([["a"], ["b", "c", "d"], ["e", "f", "g"]]);
    await finishNext();
    expect(await Promise.all([...answers, later])).toEqual(["A", "B", "C", "D", "E", "F", "G"]);
    // Idle again: the next call goes at once.
    void calls.call("h");
    expect(batches.at(-1)).toEqual(["h"]);
  });

  it("an item's failure fails its own call only", async () => {
    const { calls, finishNext } = gated();
    const first = calls.call("a");
    const good = calls.call("b");
    const bad = expect(calls.call("bad-c")).rejects.toThrow("bad-c");
    await finishNext();
    await finishNext();
    expect(await first).toBe("A");
    expect(await good).toBe("B");
    await bad;
  });

  it("a flush that throws fails its batch, and the calls after it are still served", async () => {
    let fail = true;
    const calls = new CoalescedCalls<number, number>(async (items) => {
      if (fail) throw new Error("database gone");
      return everyOne(items, 7);
    });
    const failed = expect(calls.call(1)).rejects.toThrow("database gone");
    fail = false;
    const served = calls.call(2);
    await failed;
    expect(await served).toBe(7);
  });
});

describe("CoalescedCalls with a statement that never ends", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("holds the next calls back for its patience only, then lets them run", async () => {
    vi.useFakeTimers();
    const batches: number[][] = [];
    const calls = new CoalescedCalls<number, number>(
      (items) => {
        batches.push([...items]);
        return items[0] === 1 ? new Promise(() => undefined) : Promise.resolve(everyOne(items, 2));
      },
      Number.POSITIVE_INFINITY,
      500,
    );
    void calls.call(1);
    const next = calls.call(2);
    await vi.advanceTimersByTimeAsync(499);
    expect(batches).toEqual([[1]]);
    await vi.advanceTimersByTimeAsync(1);
    expect(batches).toEqual([[1], [2]]);
    expect(await next).toBe(2);
  });
});

describe("groupedWrites", () => {
  /**
   * A write that records each statement's items, refuses any statement holding "bad" as a constraint would
   * (SQLSTATE 23505) and fails any holding "down" as an unreachable database would.
   */
  function recorded(dialect: "sqlite" | "postgres") {
    const statements: string[][] = [];
    const stored: string[] = [];
    const writes = groupedWrites<string>(
      dialect,
      async (items) => {
        statements.push([...items]);
        await Promise.resolve();
        if (items.some((item) => item.startsWith("down"))) throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
        if (items.some((item) => item.startsWith("bad"))) throw Object.assign(new Error(`refused ${items.join(",")}`), { code: "23505" });
        stored.push(...items);
      },
      4,
    );
    return { writes, statements, stored };
  }

  it("SQLite: the writes of one turn of the event loop share its statement, at most maxItems each; the next turn's get their own", async () => {
    const { writes, statements, stored } = recorded("sqlite");
    const first = ["a", "b", "c", "d", "e"].map((item) => writes.call(item));
    expect(statements).toEqual([]);
    await Promise.all(first);
    expect(statements).toEqual([["a", "b", "c", "d"], ["e"]]);
    await writes.call("f");
    expect(statements).toEqual([["a", "b", "c", "d"], ["e"], ["f"]]);
    expect(stored).toEqual(["a", "b", "c", "d", "e", "f"]);
  });

  it("PostgreSQL: the first write starts at once; those asked for while it runs share the next", async () => {
    const { writes, statements } = recorded("postgres");
    const all = ["a", "b", "c"].map((item) => writes.call(item));
    expect(statements).toEqual([["a"]]);
    await Promise.all(all);
    expect(statements).toEqual([["a"], ["b", "c"]]);
  });

  it("a refused statement is written again one item at a time, in order: only the bad item's call fails", async () => {
    const { writes, statements, stored } = recorded("sqlite");
    const outcomes = await Promise.allSettled(["a", "bad-1", "b"].map((item) => writes.call(item)));
    expect(outcomes.map((o) => (o.status === "rejected" ? (o.reason as Error).message : o.status))).toEqual(["fulfilled", "refused bad-1", "fulfilled"]);
    expect(statements).toEqual([["a", "bad-1", "b"], ["a"], ["bad-1"], ["b"]]);
    expect(stored).toEqual(["a", "b"]);
  });

  it("a statement that fails for another reason than its rows fails every call of the group at once, with no retry", async () => {
    const { writes, statements, stored } = recorded("sqlite");
    const outcomes = await Promise.allSettled(["a", "down", "b"].map((item) => writes.call(item)));
    expect(outcomes.map((o) => (o.status === "rejected" ? (o.reason as Error).message : o.status))).toEqual(["connect ECONNREFUSED", "connect ECONNREFUSED", "connect ECONNREFUSED"]);
    expect(statements).toEqual([["a", "down", "b"]]);
    expect(stored).toEqual([]);
  });
});

describe("CoalescedCalls with a flush that answers the wrong number of calls", () => {
  it("fails every call of the batch rather than leaving some unanswered", async () => {
    const calls = new CoalescedCalls<string, string>(async () => [{ status: "fulfilled", value: "only one" }]);
    const first = calls.call("a");
    const rest = [calls.call("b"), calls.call("c")];
    expect(await first).toBe("only one");
    const outcomes = await Promise.allSettled(rest);
    expect(outcomes.map((o) => (o.status === "rejected" ? (o.reason as Error).message : o.status))).toEqual([
      "a shared statement answered 1 of 2 calls",
      "a shared statement answered 1 of 2 calls",
    ]);
  });
});
