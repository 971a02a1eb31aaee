import { describe, expect, it } from "vitest";
import { paddedToPowerOfTwo } from "../../src/storage/parameter-limit.ts";

describe("paddedToPowerOfTwo", () => {
  it("pads to the next power of two by repeating the last value", () => {
    expect(paddedToPowerOfTwo(["a", "b", "c"])).toEqual(["a", "b", "c", "c"]);
    expect(paddedToPowerOfTwo(["a", "b", "c", "d", "e"])).toEqual(["a", "b", "c", "d", "e", "e", "e", "e"]);
  });

  it("leaves a list already a power of two, an empty one, and one past 1,024 values as they are", () => {
    expect(paddedToPowerOfTwo(["a"])).toEqual(["a"]);
    expect(paddedToPowerOfTwo(["a", "b"])).toEqual(["a", "b"]);
    expect(paddedToPowerOfTwo([])).toEqual([]);
    const long = Array.from({ length: 1025 }, (_, i) => `v${i}`);
    expect(paddedToPowerOfTwo(long)).toBe(long);
    expect(paddedToPowerOfTwo(long.slice(0, 1000))).toHaveLength(1024);
  });

  it("gives a few list lengths however many values: 11 from 1 to 1,024", () => {
    const lengths = new Set(Array.from({ length: 1024 }, (_, n) => paddedToPowerOfTwo(Array.from({ length: n + 1 }, (_, i) => `v${i}`)).length));
    expect([...lengths].sort((a, b) => a - b)).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]);
  });
});
