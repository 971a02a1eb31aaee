import { describe, expect, it } from "vitest";
import {
  acrForMethods,
  acrRank,
  acrToRequest,
  acrValuesSupported,
  createAcrPolicy,
  defaultAcrPolicy as policy,
  knownRequestedAcrs,
  methodsToReach,
  minimumRequestedAcr,
  parseAcrValues,
  reachableAcrs,
  reportedAcr,
  satisfies,
  strongestReachable,
} from "../../src/domain/oidc/acr.ts";

describe("ACR policy", () => {
  it("orders the default levels weakest first", () => {
    expect(policy.levels).toEqual(["low", "high", "very_high"]);
    expect(acrRank(policy, "low")).toBe(0);
    expect(acrRank(policy, "very_high")).toBe(2);
    expect(acrRank(policy, "urn:unknown")).toBeUndefined();
  });

  it("rejects incoherent policies", () => {
    expect(() => createAcrPolicy([], [])).toThrow(RangeError);
    expect(() => createAcrPolicy(["a", "a"], [])).toThrow(/ACR name "a" is used twice/);
    expect(() => createAcrPolicy(["a b"], [])).toThrow(/invalid/);
    expect(() => createAcrPolicy(["a"], [{ acr: "b", requires: ["pwd"] }])).toThrow(/unknown level/);
    expect(() => createAcrPolicy(["a"], [{ acr: "a", requires: [] }])).toThrow(/no method/);
  });

  it("parses acr_values as a space-separated list in order", () => {
    expect(parseAcrValues(undefined)).toEqual([]);
    expect(parseAcrValues("")).toEqual([]);
    expect(parseAcrValues("high  low")).toEqual(["high", "low"]);
  });

  it("keeps the known requested values, in order, once each", () => {
    expect(knownRequestedAcrs(policy, ["urn:x", "high", "low", "high"])).toEqual(["high", "low"]);
    expect(minimumRequestedAcr(policy, ["very_high", "urn:x", "high"])).toBe("high");
    expect(minimumRequestedAcr(policy, ["urn:x"])).toBeUndefined();
  });
});

describe("satisfies", () => {
  it.each([
    { have: "low", requested: [], expected: true },
    { have: "low", requested: ["low"], expected: true },
    { have: "high", requested: ["low"], expected: true },
    { have: "very_high", requested: ["high"], expected: true },
    { have: "low", requested: ["high"], expected: false },
    { have: "high", requested: ["very_high"], expected: false },
    // A preference list: the lowest known requested level is the requirement.
    { have: "low", requested: ["high", "low"], expected: true },
    { have: "low", requested: ["very_high", "high"], expected: false },
    { have: "high", requested: ["very_high", "high"], expected: true },
    // Unknown requested values are ignored.
    { have: "low", requested: ["urn:x", "high"], expected: false },
    { have: "high", requested: ["urn:x", "high"], expected: true },
    // Only unknown values: no requirement.
    { have: "low", requested: ["urn:x", "urn:y"], expected: true },
    // An unknown session level satisfies no known request, but any request without one.
    { have: "urn:legacy", requested: ["low"], expected: false },
    { have: "urn:legacy", requested: ["urn:x"], expected: true },
    { have: "urn:legacy", requested: [], expected: true },
  ])("session $have, acr_values $requested → $expected", ({ have, requested, expected }) => {
    expect(satisfies(policy, have, requested)).toBe(expected);
  });
});

describe("methods and levels", () => {
  it("maps method combinations to levels as data", () => {
    expect(acrForMethods(policy, ["pwd"])).toBe("low");
    expect(acrForMethods(policy, ["pwd", "otp"])).toBe("high");
    expect(acrForMethods(policy, ["otp", "pwd", "mfa"])).toBe("high");
    expect(acrForMethods(policy, ["otp"])).toBeUndefined();
    expect(acrForMethods(policy, [])).toBeUndefined();
  });

  it("reaches no level above high with the default rules", () => {
    expect(strongestReachable(policy, ["pwd", "otp"])).toBe("high");
    expect(reachableAcrs(policy, ["pwd", "otp"])).toEqual(["low", "high"]);
    expect(reachableAcrs(policy, ["pwd"])).toEqual(["low"]);
    expect(reachableAcrs(policy, [])).toEqual([]);
  });

  it("follows a custom policy", () => {
    const custom = createAcrPolicy(["a", "b", "c"], [
      { acr: "c", requires: ["pwd", "otp"] },
      { acr: "a", requires: ["pwd"] },
    ]);
    expect(reachableAcrs(custom, ["pwd", "otp"])).toEqual(["a", "b", "c"]);
    expect(methodsToReach(custom, "b", ["pwd", "otp"])).toEqual(["pwd", "otp"]);
  });

  it("names the methods to ask for to reach a level", () => {
    expect(methodsToReach(policy, "low", ["pwd", "otp"])).toEqual(["pwd"]);
    expect(methodsToReach(policy, "high", ["pwd", "otp"])).toEqual(["pwd", "otp"]);
    expect(methodsToReach(policy, "high", ["pwd"])).toBeUndefined();
    expect(methodsToReach(policy, "very_high", ["pwd", "otp"])).toBeUndefined();
    expect(methodsToReach(policy, "urn:x", ["pwd"])).toBeUndefined();
  });
});

describe("acrToRequest (the level asked for on the re-authentication page)", () => {
  it.each([
    { requested: [], reachable: ["low", "high"], expected: "low" },
    { requested: ["urn:x"], reachable: ["low", "high"], expected: "low" },
    { requested: ["high", "low"], reachable: ["low", "high"], expected: "low" },
    { requested: ["high"], reachable: ["low", "high"], expected: "high" },
    { requested: ["very_high", "high"], reachable: ["low", "high"], expected: "high" },
    // Reaching high also reaches a low request, even when "low" is not listed.
    { requested: ["low"], reachable: ["high"], expected: "low" },
    { requested: ["high"], reachable: ["low"], expected: undefined },
    { requested: ["very_high"], reachable: ["low", "high"], expected: undefined },
    { requested: [], reachable: [], expected: undefined },
    { requested: [], reachable: ["urn:x"], expected: undefined },
  ])("acr_values $requested, reachable $reachable → $expected", ({ requested, reachable, expected }) => {
    expect(acrToRequest(policy, requested, reachable)).toBe(expected);
  });
});

describe("ACR aliases", () => {
  const urn = (level: string) => `urn:example:acr:${level}`;
  const aliased = createAcrPolicy(["low", "high", "very_high"], [{ acr: "low", requires: ["pwd"] }, { acr: "high", requires: ["pwd", "otp"] }], {
    low: [urn("low")],
    high: [urn("high"), "https://acr.example/high"],
  });

  it("an alias ranks as its level, everywhere", () => {
    expect(acrRank(aliased, urn("high"))).toBe(1);
    expect(acrRank(aliased, "https://acr.example/high")).toBe(1);
    expect(satisfies(aliased, "low", [urn("high")])).toBe(false);
    expect(satisfies(aliased, "high", [urn("high")])).toBe(true);
    expect(minimumRequestedAcr(aliased, [urn("high"), "very_high"])).toBe("high");
    expect(knownRequestedAcrs(aliased, ["urn:x", urn("low")])).toEqual([urn("low")]);
    expect(acrToRequest(aliased, [urn("high")], ["low", "high"])).toBe("high");
  });

  it("discovery lists each name followed by its aliases, weakest first", () => {
    expect(acrValuesSupported(aliased)).toEqual(["low", urn("low"), "high", urn("high"), "https://acr.example/high", "very_high"]);
    expect(acrValuesSupported(policy)).toEqual(["low", "high", "very_high"]);
  });

  it.each([
    // The first requested value, in the client's order, that the session satisfies; as the client wrote it.
    { have: "high", requested: [urn("high")], expected: urn("high") },
    { have: "high", requested: [urn("low")], expected: urn("low") },
    { have: "high", requested: ["very_high", urn("high"), "low"], expected: urn("high") },
    { have: "low", requested: [urn("high"), urn("low")], expected: urn("low") },
    { have: "high", requested: ["urn:x", "high"], expected: "high" },
    // Nothing requested, or nothing the session reaches: the session's own level.
    { have: "high", requested: [], expected: "high" },
    { have: "low", requested: [urn("high")], expected: "low" },
    { have: "urn:legacy", requested: [urn("low")], expected: "urn:legacy" },
  ])("reportedAcr($have, $requested) = $expected", ({ have, requested, expected }) => {
    expect(reportedAcr(aliased, have, requested)).toBe(expected);
  });

  it("rejects aliases that clash, name unknown levels, or are not acr values", () => {
    const rules = [{ acr: "a", requires: ["pwd"] }] as const;
    expect(() => createAcrPolicy(["a", "b"], rules, { a: ["b"] })).toThrow('ACR name "b" is used twice');
    expect(() => createAcrPolicy(["a", "b"], rules, { a: ["x"], b: ["x"] })).toThrow('ACR name "x" is used twice');
    expect(() => createAcrPolicy(["a"], rules, { c: ["x"] })).toThrow('ACR aliases name unknown level "c"');
    expect(() => createAcrPolicy(["a"], rules, { a: ["x y"] })).toThrow(/invalid ACR alias "x y"/);
    expect(() => createAcrPolicy(["a"], rules, { a: [""] })).toThrow(/invalid ACR alias ""/);
    expect(() => createAcrPolicy(["a"], rules, { a: ["u".repeat(65)] })).toThrow(/1 to 64 printable characters/);
    expect(() => createAcrPolicy(["a"], rules, { a: ["u".repeat(64)] })).not.toThrow();
  });
});
