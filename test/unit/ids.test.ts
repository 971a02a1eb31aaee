import { describe, expect, it } from "vitest";
import { isUuid, newTimeOrderedId } from "../../src/domain/ids.ts";

describe("newTimeOrderedId", () => {
  const at = Date.UTC(2026, 10, 23, 3, 30, 0, 123);

  it("is a version 7, RFC 9562 variant UUID whose first 48 bits are the time", () => {
    const id = newTimeOrderedId(at);
    expect(isUuid(id)).toBe(true);
    expect(id[14]).toBe("7");
    expect(["8", "9", "a", "b"]).toContain(id[19]);
    expect(Number.parseInt(id.replace(/-/g, "").slice(0, 12), 16)).toBe(at);
  });

  it("sorts by time, whatever the random bits", () => {
    const ids = Array.from({ length: 200 }, (_, i) => newTimeOrderedId(at + i));
    expect([...ids].sort()).toEqual(ids);
  });

  it("differs for ids made in the same millisecond", () => {
    expect(new Set(Array.from({ length: 1000 }, () => newTimeOrderedId(at))).size).toBe(1000);
  });
});
