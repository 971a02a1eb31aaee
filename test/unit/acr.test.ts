import { describe, expect, it } from "vitest";
import {
  acrForMethods,
  acrRank,
  acrToRequest,
  createAcrPolicy,
  defaultAcrPolicy as policy,
  knownRequestedAcrs,
  methodsToReach,
  minimumRequestedAcr,
  parseAcrValues,
  reachableAcrs,
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
    expect(() => createAcrPolicy(["a", "a"], [])).toThrow(/duplicate/);
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
