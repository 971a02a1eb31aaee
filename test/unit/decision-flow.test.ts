import { describe, expect, it } from "vitest";
import { createAcrPolicy, defaultAcrPolicy } from "../../src/domain/oidc/acr.ts";
import { decideAuthorization, dependsOnReachableAcrs, type DecisionInput, type DecisionOutcome, type Prompt } from "../../src/domain/oidc/decision-flow.ts";

const now = 1_750_000_000_000;
const minute = 60_000;

type Overrides = Omit<Partial<DecisionInput>, "prompt"> & { prompt?: Prompt[] };

/** A signed-in user at `low`, five minutes ago, who can reach low and high, with nothing granted yet. */
function input(overrides: Overrides = {}): DecisionInput {
  const { prompt = [], ...rest } = overrides;
  return {
    prompt: new Set(prompt),
    acrValues: [],
    session: { authTime: now - 5 * minute, acr: "low", amr: ["pwd"] },
    reachableAcrs: ["low", "high"],
    alreadyGranted: false,
    reauthenticatedInThisInteraction: false,
    now,
    policy: defaultAcrPolicy,
    ...rest,
  };
}

const highSession = { authTime: now - 5 * minute, acr: "high", amr: ["pwd", "otp"] };

describe("decision flow: one case per row", () => {
  const rows: { row: number; name: string; given: Overrides; expected: DecisionOutcome }[] = [
    {
      row: 1,
      name: "no session and prompt=none",
      given: { session: undefined, prompt: ["none"] },
      expected: {
        kind: "error",
        error: "login_required",
        description: "the user is not signed in and prompt=none forbids the login page",
        row: 1,
      },
    },
    {
      row: 2,
      name: "no session, no prompt",
      given: { session: undefined },
      expected: { kind: "login", row: 2 },
    },
    {
      row: 3,
      name: "session, max_age exceeded and prompt=none",
      given: { prompt: ["none"], maxAge: 60 },
      expected: {
        kind: "error",
        error: "interaction_required",
        description: "re-authentication is required (max_age exceeded) and prompt=none forbids it",
        reasons: ["max_age"],
        row: 3,
      },
    },
    {
      row: 4,
      name: "requested very_high, user can reach only low and high",
      given: { acrValues: ["very_high"] },
      expected: {
        kind: "error",
        error: "unmet_authentication_requirements",
        description:
          "re-authentication is required (requested acr_values not satisfied) and no authentication method available to the user can satisfy it",
        reasons: ["acr"],
        cause: "no_method",
        row: 4,
      },
    },
    {
      row: 5,
      name: "requested high, session low, user can reach high",
      given: { acrValues: ["high"] },
      expected: { kind: "reauth", requiredAcr: "high", reasons: ["acr"], row: 5 },
    },
    {
      row: 6,
      name: "session good enough, already granted, no prompt",
      given: { alreadyGranted: true },
      expected: { kind: "issue_code", row: 6 },
    },
    {
      row: 7,
      name: "already granted but prompt=consent",
      given: { alreadyGranted: true, prompt: ["consent"] },
      expected: { kind: "consent", row: 7 },
    },
    {
      row: 8,
      name: "consent required and prompt=none",
      given: { prompt: ["none"] },
      expected: {
        kind: "error",
        error: "consent_required",
        description: "consent is required and prompt=none forbids the consent page",
        row: 8,
      },
    },
    {
      row: 9,
      name: "consent required, no prompt",
      given: {},
      expected: { kind: "consent", row: 9 },
    },
    {
      row: 10,
      name: "user refuses consent",
      given: { consent: "deny" },
      expected: { kind: "error", error: "access_denied", description: "the user refused consent", row: 10 },
    },
  ];

  it("covers all ten rows", () => {
    expect(rows.map((r) => r.row)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it.each(rows)("row $row: $name", ({ given, expected }) => {
    expect(decideAuthorization(input(given))).toEqual(expected);
  });
});

describe("decision flow: precedence", () => {
  it("no session + prompt=none + max_age → row 1", () => {
    expect(decideAuthorization(input({ session: undefined, prompt: ["none"], maxAge: 0, acrValues: ["very_high"] }))).toMatchObject({
      error: "login_required",
      row: 1,
    });
  });

  it("no session + prompt=login + max_age + acr → row 2 (login first)", () => {
    expect(decideAuthorization(input({ session: undefined, prompt: ["login"], maxAge: 0, acrValues: ["very_high"] }))).toEqual({
      kind: "login",
      row: 2,
    });
  });

  it("session + prompt=none + consent needed + reauth needed → row 3, not 8", () => {
    expect(decideAuthorization(input({ prompt: ["none"], acrValues: ["high"], alreadyGranted: false }))).toEqual({
      kind: "error",
      error: "interaction_required",
      description: "re-authentication is required (requested acr_values not satisfied) and prompt=none forbids it",
      reasons: ["acr"],
      row: 3,
    });
  });

  it("prompt=none + unreachable acr → row 3, not 4", () => {
    expect(decideAuthorization(input({ prompt: ["none"], acrValues: ["very_high"] }))).toMatchObject({
      error: "interaction_required",
      row: 3,
    });
  });

  it("reauth needed + already granted → row 5, not 6", () => {
    expect(decideAuthorization(input({ maxAge: 60, alreadyGranted: true }))).toEqual({
      kind: "reauth",
      requiredAcr: "low",
      reasons: ["max_age"],
      row: 5,
    });
  });

  it("prompt=none + already granted + session good → row 6 (silent authentication succeeds)", () => {
    expect(decideAuthorization(input({ prompt: ["none"], alreadyGranted: true }))).toEqual({ kind: "issue_code", row: 6 });
  });

  it("deny wins over everything, even without a session", () => {
    expect(decideAuthorization(input({ consent: "deny", session: undefined }))).toMatchObject({ error: "access_denied", row: 10 });
    expect(decideAuthorization(input({ consent: "deny", acrValues: ["very_high"] }))).toMatchObject({ error: "access_denied", row: 10 });
  });

  it("allow does not stand in for authentication", () => {
    expect(decideAuthorization(input({ consent: "allow", session: undefined }))).toEqual({ kind: "login", row: 2 });
    expect(decideAuthorization(input({ consent: "allow", acrValues: ["high"] }))).toEqual({
      kind: "reauth",
      requiredAcr: "high",
      reasons: ["acr"],
      row: 5,
    });
  });

  it("lists every re-authentication reason, in order", () => {
    expect(decideAuthorization(input({ prompt: ["login"], maxAge: 60, acrValues: ["high"] }))).toEqual({
      kind: "reauth",
      requiredAcr: "high",
      reasons: ["prompt_login", "max_age", "acr"],
      row: 5,
    });
  });
});

describe("decision flow: max_age", () => {
  const fiveMinutes = 300;

  it("exactly max_age seconds old is still fresh", () => {
    expect(decideAuthorization(input({ maxAge: fiveMinutes, alreadyGranted: true }))).toEqual({ kind: "issue_code", row: 6 });
  });

  it("one millisecond over max_age forces re-authentication", () => {
    expect(decideAuthorization(input({ maxAge: fiveMinutes, alreadyGranted: true, now: now + 1 }))).toEqual({
      kind: "reauth",
      requiredAcr: "low",
      reasons: ["max_age"],
      row: 5,
    });
  });

  it("max_age=0 forces re-authentication even for a session of this very millisecond", () => {
    const session = { authTime: now, acr: "low", amr: ["pwd"] };
    expect(decideAuthorization(input({ maxAge: 0, session, alreadyGranted: true }))).toEqual({
      kind: "reauth",
      requiredAcr: "low",
      reasons: ["max_age"],
      row: 5,
    });
  });

  it("max_age=0 is met once the user re-authenticated in this interaction", () => {
    const session = { authTime: now - 2_000, acr: "low", amr: ["pwd"] };
    expect(
      decideAuthorization(input({ maxAge: 0, session, alreadyGranted: true, reauthenticatedInThisInteraction: true })),
    ).toEqual({ kind: "issue_code", row: 6 });
  });

  it("max_age=0 with prompt=none → interaction_required", () => {
    expect(decideAuthorization(input({ maxAge: 0, prompt: ["none"], alreadyGranted: true }))).toMatchObject({
      error: "interaction_required",
      reasons: ["max_age"],
      row: 3,
    });
  });

  it("max_age on a high session keeps asking for the requested level, not the session's", () => {
    expect(decideAuthorization(input({ maxAge: 60, session: highSession }))).toEqual({
      kind: "reauth",
      requiredAcr: "low",
      reasons: ["max_age"],
      row: 5,
    });
  });
});

describe("decision flow: prompt=login", () => {
  it("forces re-authentication of an existing session", () => {
    expect(decideAuthorization(input({ prompt: ["login"], alreadyGranted: true }))).toEqual({
      kind: "reauth",
      requiredAcr: "low",
      reasons: ["prompt_login"],
      row: 5,
    });
  });

  it("does not loop after a login or re-authentication in this interaction", () => {
    const session = { authTime: now - 1_000, acr: "low", amr: ["pwd"] };
    expect(
      decideAuthorization(input({ prompt: ["login"], session, alreadyGranted: true, reauthenticatedInThisInteraction: true })),
    ).toEqual({ kind: "issue_code", row: 6 });
  });

  it("with prompt=consent too: re-authenticate, then consent, then issue", () => {
    const base: Overrides = { prompt: ["login", "consent"], alreadyGranted: true };
    expect(decideAuthorization(input(base))).toMatchObject({ kind: "reauth", reasons: ["prompt_login"], row: 5 });
    expect(decideAuthorization(input({ ...base, reauthenticatedInThisInteraction: true }))).toEqual({ kind: "consent", row: 7 });
    expect(decideAuthorization(input({ ...base, reauthenticatedInThisInteraction: true, consent: "allow" }))).toEqual({
      kind: "issue_code",
      row: 9,
    });
  });

  it("with no ability to re-authenticate at all → unmet_authentication_requirements", () => {
    expect(decideAuthorization(input({ prompt: ["login"], reachableAcrs: [] }))).toMatchObject({
      error: "unmet_authentication_requirements",
      reasons: ["prompt_login"],
      cause: "no_method",
      row: 4,
    });
  });

  it("requires the requested level again even when the session already has it", () => {
    expect(decideAuthorization(input({ prompt: ["login"], session: highSession, acrValues: ["high"], reachableAcrs: ["low"] }))).toMatchObject({
      error: "unmet_authentication_requirements",
      reasons: ["prompt_login"],
      row: 4,
    });
  });
});

describe("decision flow: acr_values", () => {
  it("a higher session level satisfies a lower request", () => {
    expect(decideAuthorization(input({ session: highSession, acrValues: ["low"], alreadyGranted: true }))).toEqual({
      kind: "issue_code",
      row: 6,
    });
  });

  it("a preference list is satisfied by its lowest known level", () => {
    expect(decideAuthorization(input({ acrValues: ["high", "low"], alreadyGranted: true }))).toEqual({ kind: "issue_code", row: 6 });
  });

  it("asks for the lowest requested level the user can reach", () => {
    expect(decideAuthorization(input({ acrValues: ["very_high", "high"] }))).toEqual({
      kind: "reauth",
      requiredAcr: "high",
      reasons: ["acr"],
      row: 5,
    });
  });

  it("ignores unknown values", () => {
    expect(decideAuthorization(input({ acrValues: ["urn:x", "high"] }))).toMatchObject({ kind: "reauth", requiredAcr: "high", row: 5 });
  });

  it("a request of only unknown values → unmet_authentication_requirements (row 4), with or without a session, even under prompt=none", () => {
    const unmet = {
      kind: "error",
      error: "unmet_authentication_requirements",
      description: "none of the requested acr_values is supported (supported: low, high, very_high and their aliases)",
      reasons: ["acr"],
      cause: "unsupported_acr_values",
      row: 4,
    };
    expect(decideAuthorization(input({ acrValues: ["urn:example:loa:4"], alreadyGranted: true }))).toEqual(unmet);
    expect(decideAuthorization(input({ acrValues: ["urn:x", "urn:y"], session: undefined }))).toEqual(unmet);
    expect(decideAuthorization(input({ acrValues: ["urn:x"], prompt: ["none"], session: undefined }))).toEqual(unmet);
    // A refusal still comes first: it grants nothing.
    expect(decideAuthorization(input({ acrValues: ["urn:x"], consent: "deny" }))).toMatchObject({ error: "access_denied", row: 10 });
  });

  it("aliases count as their level", () => {
    const aliased = createAcrPolicy(["low", "high"], [{ acr: "low", requires: ["pwd"] }, { acr: "high", requires: ["pwd", "otp"] }], {
      high: ["urn:example:acr:high"],
    });
    expect(decideAuthorization(input({ policy: aliased, acrValues: ["urn:example:acr:high"] }))).toEqual({
      kind: "reauth",
      requiredAcr: "high",
      reasons: ["acr"],
      row: 5,
    });
    expect(
      decideAuthorization(input({ policy: aliased, session: highSession, acrValues: ["urn:example:acr:high"], alreadyGranted: true })),
    ).toEqual({ kind: "issue_code", row: 6 });
  });

  it("a fresh login below the requested level is a step-up (row 5), not a loop back to login", () => {
    const session = { authTime: now - 1_000, acr: "low", amr: ["pwd"] };
    expect(
      decideAuthorization(input({ session, acrValues: ["high"], prompt: ["login"], maxAge: 0, reauthenticatedInThisInteraction: true })),
    ).toEqual({ kind: "reauth", requiredAcr: "high", reasons: ["acr"], row: 5 });
  });

  it("a fresh login below the requested level that the user cannot raise → row 4", () => {
    const session = { authTime: now - 1_000, acr: "low", amr: ["pwd"] };
    expect(
      decideAuthorization(input({ session, acrValues: ["high"], reachableAcrs: ["low"], reauthenticatedInThisInteraction: true })),
    ).toMatchObject({ error: "unmet_authentication_requirements", reasons: ["acr"], row: 4 });
  });

  it("a step-up that reached the level moves on to consent", () => {
    expect(
      decideAuthorization(input({ session: { ...highSession, authTime: now }, acrValues: ["high"], reauthenticatedInThisInteraction: true })),
    ).toEqual({ kind: "consent", row: 9 });
  });

  it("an unknown session level does not satisfy a known request", () => {
    expect(
      decideAuthorization(input({ session: { authTime: now, acr: "urn:legacy", amr: [] }, acrValues: ["low"] })),
    ).toEqual({ kind: "reauth", requiredAcr: "low", reasons: ["acr"], row: 5 });
  });
});

describe("decision flow: consent answers", () => {
  it("allow after row 9 issues the code", () => {
    expect(decideAuthorization(input({ consent: "allow" }))).toEqual({ kind: "issue_code", row: 9 });
  });

  it("deny after row 7 is access_denied", () => {
    expect(decideAuthorization(input({ alreadyGranted: true, prompt: ["consent"], consent: "deny" }))).toMatchObject({
      error: "access_denied",
      row: 10,
    });
  });
});

describe("decision flow: what the user can reach matters to rows 4 and 5 only", () => {
  const cases: { name: string; given: Overrides }[] = [
    { name: "no session", given: { session: undefined } },
    { name: "no session, prompt=none", given: { session: undefined, prompt: ["none"] } },
    { name: "fresh session, granted", given: { alreadyGranted: true } },
    { name: "fresh session, not granted", given: {} },
    { name: "fresh session, not granted, prompt=none", given: { prompt: ["none"] } },
    { name: "max_age exceeded, prompt=none", given: { prompt: ["none"], maxAge: 60 } },
    { name: "max_age exceeded", given: { maxAge: 60, alreadyGranted: true } },
    { name: "prompt=login", given: { prompt: ["login"], alreadyGranted: true } },
    { name: "acr_values=high on a low session", given: { acrValues: ["high"], alreadyGranted: true } },
    { name: "acr_values of unknown values only", given: { acrValues: ["urn:unknown"] } },
    { name: "deny", given: { consent: "deny" } },
    { name: "allow", given: { consent: "allow" } },
  ];

  it.each(cases)("$name", ({ given }) => {
    const reachingAll = decideAuthorization(input({ ...given, reachableAcrs: ["low", "high"] }));
    const reachingNone = decideAuthorization(input({ ...given, reachableAcrs: [] }));
    // Deciding with nothing reachable first, and again only when that outcome depends on it, gives the full answer.
    const twoPass = dependsOnReachableAcrs(reachingNone) ? reachingAll : reachingNone;
    expect(twoPass).toEqual(reachingAll);
    expect(dependsOnReachableAcrs(reachingAll)).toBe(dependsOnReachableAcrs(reachingNone));
    if (!dependsOnReachableAcrs(reachingAll)) expect(reachingNone).toEqual(reachingAll);
  });

  it("names exactly rows 4 and 5", () => {
    const rows = [
      decideAuthorization(input({ acrValues: ["high"], reachableAcrs: [] })),
      decideAuthorization(input({ acrValues: ["high"] })),
      decideAuthorization(input({ alreadyGranted: true })),
    ];
    expect(rows.map((o) => [o.row, dependsOnReachableAcrs(o)])).toEqual([
      [4, true],
      [5, true],
      [6, false],
    ]);
  });
});
