import { describe, expect, it } from "vitest";
import { carriedMethods, recentPasswordWindowMs, type CarryInput } from "../../src/domain/oidc/carried-methods.ts";

const now = 1_800_000_000_000;
const base: CarryInput = { reasons: ["acr"], session: { amr: ["pwd"], authTime: now - 10_000 }, passwordVerifiedAt: undefined, now };

describe("a password typed a moment ago counts for a step-up (carriedMethods)", () => {
  it.each<[string, Partial<CarryInput>, string[]]>([
    ["a password sign-in seconds ago, the step-up only for a higher level", {}, ["pwd"]],
    ["the password exactly at the window's edge", { session: { amr: ["pwd"], authTime: now - recentPasswordWindowMs } }, ["pwd"]],
    ["the password a millisecond past the window", { session: { amr: ["pwd"], authTime: now - recentPasswordWindowMs - 1 } }, []],
    ["a session signed in with the card, not a password", { session: { amr: ["jpki_sig", "hwk", "sc"], authTime: now - 10_000 } }, []],
    ["prompt=login asks for presence now", { reasons: ["prompt_login", "acr"] }, []],
    ["max_age asks for presence now", { reasons: ["max_age"] }, []],
    ["no reason at all is no step-up", { reasons: [] }, []],
    ["an authentication time in the future is not trusted", { session: { amr: ["pwd"], authTime: now + 1 } }, []],
    ["right password, wrong code in this interaction, even under prompt=login", { reasons: ["prompt_login"], session: { amr: ["pwd"], authTime: 0 }, passwordVerifiedAt: now - 30_000 }, ["pwd"]],
    ["that verification past the window", { reasons: ["prompt_login"], session: { amr: ["pwd"], authTime: 0 }, passwordVerifiedAt: now - recentPasswordWindowMs - 1 }, []],
  ])("%s", (_case, input, expected) => {
    expect(carriedMethods({ ...base, ...input })).toEqual(expected);
  });

  it("the window is five minutes", () => {
    expect(recentPasswordWindowMs).toBe(300_000);
  });
});
