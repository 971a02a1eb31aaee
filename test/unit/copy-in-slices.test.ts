import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { copyInSlices } from "../../src/adapters/copy-in-slices.ts";

describe("copyInSlices", () => {
  it("copies every source in order, a large one and small ones alike, and counts the bytes", async () => {
    const sources = [randomBytes(9 * 1024 * 1024 + 7), randomBytes(1), Buffer.alloc(0), randomBytes(3 * 1024 * 1024), randomBytes(65_536)];
    const expected = Buffer.concat(sources);
    const target = Buffer.alloc(expected.length + 10, 0xee);
    expect(await copyInSlices(sources, target)).toBe(expected.length);
    expect(target.subarray(0, expected.length).equals(expected)).toBe(true);
    expect(target.subarray(expected.length).every((byte) => byte === 0xee)).toBe(true);
  });

  it("lets the event loop turn every 4 MB, and not for a copy below that", async () => {
    const turnsDuring = async (sources: Uint8Array[]) => {
      let turns = 0;
      let copying = true;
      const count = () => {
        if (!copying) return;
        turns++;
        setImmediate(count);
      };
      setImmediate(count);
      await copyInSlices(sources, new Uint8Array(sources.reduce((n, s) => n + s.length, 0)));
      copying = false;
      return turns;
    };
    // 17 MB: slices end at 4, 8, 12 and 16 MB, so the loop turns at least four times before the copy ends.
    expect(await turnsDuring([new Uint8Array(17 * 1024 * 1024)])).toBeGreaterThanOrEqual(4);
    expect(await turnsDuring([new Uint8Array(4 * 1024 * 1024)])).toBe(0);
  });
});
