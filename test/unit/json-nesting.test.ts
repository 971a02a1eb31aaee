import { describe, expect, it } from "vitest";
import { jsonNestingWithin, jwtNestingWithin, maxJsonDepth } from "../../src/domain/json-nesting.ts";

const nested = (depth: number, open = "[", close = "]") => open.repeat(depth) + close.repeat(depth);

describe("jsonNestingWithin", () => {
  it.each([
    ["64 arrays", nested(64), true],
    ["65 arrays", nested(65), false],
    ["64 objects", `${'{"a":'.repeat(64)}1${"}".repeat(64)}`, true],
    ["65 objects", `${'{"a":'.repeat(65)}1${"}".repeat(65)}`, false],
    ["siblings do not add up", `[${Array(1000).fill(nested(60)).join(",")}]`, true],
    ["brackets in strings do not count", `["${"[".repeat(500)}"]`, true],
    ["an escaped quote does not end a string", `["\\"${"[".repeat(500)}"]`, true],
    ["an escaped backslash does", `["\\\\",${nested(70)}]`, false],
    ["text beyond ASCII", `["日本",${nested(63)}]`, true],
  ])("%s", (_name, text, within) => {
    expect(jsonNestingWithin(text)).toBe(within);
    expect(jsonNestingWithin(Buffer.from(text, "utf8"))).toBe(within);
  });

  it("stops at the first bracket past the limit: a megabyte of nesting is refused after reading what leads to it", () => {
    const prefix = `{"ignored":"[[[[{{{{","x":`;
    for (const text of [`${"[".repeat(1024 * 1024)}`, `${prefix}${'{"a":'.repeat(200_000)}1${"}".repeat(200_000)}}`]) {
      const { bytes, furthestRead } = countingReads(Buffer.from(text, "utf8"));
      expect(jsonNestingWithin(bytes)).toBe(false);
      // The 65th opening bracket: index 64 of the brackets alone; behind the prefix (one level, the brackets of its
      // string not counting), the 64th {"a":.
      const stopsAt = text.startsWith("[") ? maxJsonDepth : prefix.length + (maxJsonDepth - 1) * '{"a":'.length;
      expect(furthestRead()).toBe(stopsAt);
      expect(furthestRead()).toBeLessThan(text.length / 100);
    }
  });

  it("reads text within the limit to its end, once (what the parser after it gets)", () => {
    const text = `[${Array(100).fill(nested(64)).join(",")}]`.slice(1, -1);
    const { bytes, furthestRead, reads } = countingReads(Buffer.from(text, "utf8"));
    expect(jsonNestingWithin(bytes)).toBe(true);
    expect(furthestRead()).toBe(text.length - 1);
    expect(reads()).toBe(text.length);
  });

  it("takes its limit as a parameter, 64 by default", () => {
    expect(maxJsonDepth).toBe(64);
    expect(jsonNestingWithin('{"c":"x"}', 1)).toBe(true);
    expect(jsonNestingWithin('{"c":["x"]}', 1)).toBe(false);
  });
});

describe("jwtNestingWithin", () => {
  const part = (json: string) => Buffer.from(json).toString("base64url");
  it("looks into the header and the payload", () => {
    expect(jwtNestingWithin(`${part('{"alg":"ES256"}')}.${part('{"sub":"a"}')}.sig`)).toBe(true);
    expect(jwtNestingWithin(`${part(`{"x":${nested(100)}}`)}.${part("{}")}.sig`)).toBe(false);
    expect(jwtNestingWithin(`${part("{}")}.${part(`{"x":${nested(100)}}`)}.sig`)).toBe(false);
    expect(jwtNestingWithin("not a jwt")).toBe(true);
  });
});

/** The bytes, behind a proxy that counts which indexes the check reads: how much work it did, without a clock. */
function countingReads(buffer: Buffer): { bytes: Uint8Array; furthestRead: () => number; reads: () => number } {
  let furthest = -1;
  let count = 0;
  const bytes = new Proxy(buffer, {
    get(target, key) {
      if (typeof key === "string" && /^\d+$/.test(key)) {
        count++;
        furthest = Math.max(furthest, Number(key));
      }
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { bytes, furthestRead: () => furthest, reads: () => count };
}
