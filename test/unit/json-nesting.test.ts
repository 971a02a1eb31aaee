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
