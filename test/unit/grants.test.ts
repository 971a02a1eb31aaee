import { describe, expect, it } from "vitest";
import type { AuthorizationDetail } from "../../src/domain/oidc/authorization-details.ts";
import { OAuthError } from "../../src/domain/oidc/oauth-error.ts";
import { detailCovers, maxCoverageDepth, requestCovered, type GrantedRights } from "../../src/domain/oidc/grants/coverage.ts";
import { alreadyGranted, applyGrantAction, type GrantContent } from "../../src/domain/oidc/grants/management.ts";

/** RFC 9396's running payment example. */
const payment: AuthorizationDetail = {
  type: "payment_initiation",
  actions: ["initiate", "status", "cancel"],
  locations: ["https://example.com/payments"],
  instructedAmount: { currency: "EUR", amount: "123.50" },
  creditorName: "Merchant A",
  creditorAccount: { iban: "DE02100100109307118603" },
  remittanceInformationUnstructured: "Ref Number Merchant",
};

const accounts: AuthorizationDetail = {
  type: "account_information",
  actions: ["list_accounts", "read_balances", "read_transactions"],
  locations: ["https://example.com/accounts", "https://example.com/cards"],
};

function with_(detail: AuthorizationDetail, members: Record<string, unknown>): AuthorizationDetail {
  return { ...detail, ...members };
}

function without(detail: AuthorizationDetail, member: string): AuthorizationDetail {
  const { [member]: _dropped, ...rest } = detail;
  return rest as AuthorizationDetail;
}

function nested(depth: number): unknown {
  let value: unknown = "leaf";
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

describe("detailCovers", () => {
  const cases: { name: string; granted: AuthorizationDetail; requested: AuthorizationDetail; covered: boolean }[] = [
    { name: "identical details", granted: payment, requested: structuredClone(payment), covered: true },
    { name: "a detail with type only, against itself", granted: { type: "t" }, requested: { type: "t" }, covered: true },
    { name: "subset of actions", granted: accounts, requested: with_(accounts, { actions: ["list_accounts"] }), covered: true },
    { name: "subset of locations", granted: accounts, requested: with_(accounts, { locations: ["https://example.com/accounts"] }), covered: true },
    {
      name: "subset in several lists at once (cartesian product)",
      granted: { type: "customer_information", locations: ["https://example.com/customers"], actions: ["read", "write"], datatypes: ["contacts", "photos"] },
      requested: { type: "customer_information", locations: ["https://example.com/customers"], actions: ["read"], datatypes: ["photos"] },
      covered: true,
    },
    {
      name: "order and repetition of array elements do not matter",
      granted: accounts,
      requested: with_(accounts, { actions: ["read_transactions", "list_accounts", "list_accounts"] }),
      covered: true,
    },
    { name: "superset of actions", granted: with_(accounts, { actions: ["list_accounts"] }), requested: accounts, covered: false },
    {
      name: "superset of locations",
      granted: with_(accounts, { locations: ["https://example.com/accounts"] }),
      requested: accounts,
      covered: false,
    },
    { name: "one action outside the grant", granted: accounts, requested: with_(accounts, { actions: ["list_accounts", "transfer"] }), covered: false },
    { name: "different type", granted: payment, requested: with_(payment, { type: "account_information" }), covered: false },
    { name: "type differing in case", granted: payment, requested: with_(payment, { type: "Payment_Initiation" }), covered: false },
    { name: "nested object equal", granted: payment, requested: with_(payment, { instructedAmount: { amount: "123.50", currency: "EUR" } }), covered: true },
    { name: "nested object member differs", granted: payment, requested: with_(payment, { instructedAmount: { currency: "EUR", amount: "999.00" } }), covered: false },
    { name: "nested object lacks a member the grant limits", granted: payment, requested: with_(payment, { instructedAmount: { currency: "EUR" } }), covered: false },
    {
      name: "nested object adds a member",
      granted: payment,
      requested: with_(payment, { instructedAmount: { currency: "EUR", amount: "123.50", recurring: true } }),
      covered: false,
    },
    {
      name: "array of objects: subset of an element's list",
      granted: { type: "files", permissions: [{ path: "/A", access: ["read", "write"] }, { path: "/B", access: ["read"] }] },
      requested: { type: "files", permissions: [{ path: "/A", access: ["read"] }] },
      covered: true,
    },
    {
      name: "array of objects: an element no granted element covers",
      granted: { type: "files", permissions: [{ path: "/A", access: ["read"] }] },
      requested: { type: "files", permissions: [{ path: "/A", access: ["write"] }] },
      covered: false,
    },
    { name: "strings differing only in case", granted: payment, requested: with_(payment, { creditorName: "merchant a" }), covered: false },
    {
      name: "strings differing only in Unicode normalization",
      granted: with_(payment, { creditorName: "Caf\u00e9" }),
      requested: with_(payment, { creditorName: "Cafe\u0301" }),
      covered: false,
    },
    { name: "number against numeric string", granted: { type: "t", limit: 10 }, requested: { type: "t", limit: "10" }, covered: false },
    { name: "a smaller number is not covered", granted: { type: "t", limit: 10 }, requested: { type: "t", limit: 5 }, covered: false },
    { name: "equal numbers", granted: { type: "t", limit: 10 }, requested: { type: "t", limit: 10.0 }, covered: true },
    { name: "boolean against string", granted: { type: "t", recurring: true }, requested: { type: "t", recurring: "true" }, covered: false },
    { name: "null against null", granted: { type: "t", identifier: null }, requested: { type: "t", identifier: null }, covered: true },
    { name: "null against a value", granted: { type: "t", identifier: null }, requested: { type: "t", identifier: "x" }, covered: false },
    { name: "extra member on the granted side", granted: { type: "payment", amount: 10 }, requested: { type: "payment" }, covered: false },
    { name: "extra member on the requested side", granted: { type: "payment" }, requested: { type: "payment", amount: 10 }, covered: false },
    { name: "RFC 9396 audience-restricted request is not covered", granted: payment, requested: { type: "payment_initiation", locations: ["https://example.com/payments"] }, covered: false },
    { name: "member valued undefined counts as absent", granted: { type: "t", extra: undefined }, requested: { type: "t" }, covered: true },
    { name: "requested member valued undefined counts as absent", granted: { type: "t", a: 1 }, requested: { type: "t", b: undefined }, covered: false },
    { name: "empty array against empty array", granted: { type: "t", accounts: [] }, requested: { type: "t", accounts: [] }, covered: true },
    { name: "empty requested array is an open request", granted: { type: "t", accounts: ["DE1"] }, requested: { type: "t", accounts: [] }, covered: false },
    { name: "requested elements against an empty grant", granted: { type: "t", accounts: [] }, requested: { type: "t", accounts: ["DE1"] }, covered: false },
    { name: "array against string", granted: { type: "t", actions: "read" }, requested: { type: "t", actions: ["read"] }, covered: false },
    { name: "string against array", granted: { type: "t", actions: ["read"] }, requested: { type: "t", actions: "read" }, covered: false },
    { name: "object against array", granted: { type: "t", x: { 0: "a" } }, requested: { type: "t", x: ["a"] }, covered: false },
    { name: "array against object", granted: { type: "t", x: ["a"] }, requested: { type: "t", x: { 0: "a" } }, covered: false },
    { name: "object against null", granted: { type: "t", x: null }, requested: { type: "t", x: {} }, covered: false },
    { name: "empty object against non-empty", granted: { type: "t", x: { a: 1 } }, requested: { type: "t", x: {} }, covered: false },
    {
      name: "own __proto__ member compared like any other",
      granted: JSON.parse('{"type":"t","__proto__":{"a":1}}') as AuthorizationDetail,
      requested: JSON.parse('{"type":"t","__proto__":{"a":1}}') as AuthorizationDetail,
      covered: true,
    },
    {
      name: "own __proto__ member differing",
      granted: JSON.parse('{"type":"t","__proto__":{"a":1}}') as AuthorizationDetail,
      requested: JSON.parse('{"type":"t","__proto__":{"a":2}}') as AuthorizationDetail,
      covered: false,
    },
    {
      name: "an own __proto__ member is not matched by the grant's prototype",
      granted: { type: "t", a: 1 },
      requested: JSON.parse('{"type":"t","__proto__":{}}') as AuthorizationDetail,
      covered: false,
    },
    {
      name: "inherited names are not members of the grant",
      granted: { type: "t", a: 1 },
      requested: { type: "t", constructor: 1 },
      covered: false,
    },
    { name: "nesting up to the limit", granted: { type: "t", x: nested(maxCoverageDepth - 1) }, requested: { type: "t", x: nested(maxCoverageDepth - 1) }, covered: true },
    { name: "nesting beyond the limit", granted: { type: "t", x: nested(maxCoverageDepth) }, requested: { type: "t", x: nested(maxCoverageDepth) }, covered: false },
    { name: "very deep nesting does not overflow the stack", granted: { type: "t", x: nested(100_000) }, requested: { type: "t", x: nested(100_000) }, covered: false },
  ];

  it.each(cases)("$name → $covered", ({ granted, requested, covered }) => {
    expect(detailCovers(granted, requested)).toBe(covered);
  });
});

describe("requestCovered", () => {
  const read: AuthorizationDetail = { type: "api", actions: ["read"] };
  const write: AuthorizationDetail = { type: "api", actions: ["write"] };
  const grant: GrantedRights = { scopes: ["openid", "profile", "email"], authorizationDetails: [payment, accounts, read, write] };

  const cases: { name: string; grant: GrantedRights; request: GrantedRights; covered: boolean }[] = [
    { name: "same scopes, no details", grant: { scopes: ["openid"], authorizationDetails: [] }, request: { scopes: ["openid"], authorizationDetails: [] }, covered: true },
    { name: "subset of scopes", grant, request: { scopes: ["openid", "email"], authorizationDetails: [] }, covered: true },
    { name: "superset of scopes", grant, request: { scopes: ["openid", "address"], authorizationDetails: [] }, covered: false },
    { name: "scope differing in case", grant, request: { scopes: ["OpenID"], authorizationDetails: [] }, covered: false },
    { name: "every detail covered by some granted detail", grant, request: { scopes: ["openid"], authorizationDetails: [with_(accounts, { actions: ["list_accounts"] }), payment, write] }, covered: true },
    { name: "scopes covered but one detail not", grant, request: { scopes: ["openid"], authorizationDetails: [payment, { type: "api", actions: ["delete"] }] }, covered: false },
    { name: "details covered but one scope not", grant, request: { scopes: ["openid", "phone"], authorizationDetails: [payment] }, covered: false },
    {
      name: "one requested detail needing two granted details together",
      grant,
      request: { scopes: ["openid"], authorizationDetails: [{ type: "api", actions: ["read", "write"] }] },
      covered: false,
    },
    { name: "details requested, none granted", grant: { scopes: ["openid"], authorizationDetails: [] }, request: { scopes: ["openid"], authorizationDetails: [read] }, covered: false },
    { name: "details granted, none requested", grant, request: { scopes: ["openid"], authorizationDetails: [] }, covered: true },
    { name: "nothing requested", grant: { scopes: [], authorizationDetails: [] }, request: { scopes: [], authorizationDetails: [] }, covered: true },
  ];

  it.each(cases)("$name → $covered", ({ grant, request, covered }) => {
    expect(requestCovered(grant, request)).toBe(covered);
  });
});

describe("applyGrantAction", () => {
  const read: AuthorizationDetail = { type: "api", actions: ["read"] };
  const readWrite: AuthorizationDetail = { type: "api", actions: ["read", "write"] };
  const existing: GrantContent = { scopes: ["openid", "profile"], authorizationDetails: [read, accounts] };

  function expectInvalidGrantId(run: () => unknown): void {
    let thrown: unknown;
    try {
      run();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(OAuthError);
    expect((thrown as OAuthError).error).toBe("invalid_grant_id");
  }

  describe("create", () => {
    it("makes a grant holding exactly the request, ignoring the existing grant", () => {
      const requested: GrantContent = { scopes: ["openid"], authorizationDetails: [payment] };
      expect(applyGrantAction(existing, "create", requested)).toEqual({ scopes: ["openid"], authorizationDetails: [payment] });
      expect(applyGrantAction(undefined, "create", requested)).toEqual({ scopes: ["openid"], authorizationDetails: [payment] });
    });

    it("returns a copy that shares nothing with the request", () => {
      const requested: GrantContent = { scopes: ["openid"], authorizationDetails: [structuredClone(accounts)] };
      const result = applyGrantAction(undefined, "create", requested);
      result.scopes.push("email");
      (result.authorizationDetails[0]!.actions as string[]).push("transfer");
      expect(requested).toEqual({ scopes: ["openid"], authorizationDetails: [accounts] });
    });
  });

  describe("replace", () => {
    it("makes the grant hold exactly the request, dropping what it held", () => {
      const requested: GrantContent = { scopes: ["openid", "email"], authorizationDetails: [payment] };
      expect(applyGrantAction(existing, "replace", requested)).toEqual({ scopes: ["openid", "email"], authorizationDetails: [payment] });
    });

    it("narrows a grant to a covered request", () => {
      const requested: GrantContent = { scopes: ["openid"], authorizationDetails: [read] };
      expect(applyGrantAction(existing, "replace", requested)).toEqual({ scopes: ["openid"], authorizationDetails: [read] });
    });

    it("needs an existing grant", () => {
      expectInvalidGrantId(() => applyGrantAction(undefined, "replace", { scopes: ["openid"], authorizationDetails: [] }));
    });
  });

  describe("merge", () => {
    it("unites scopes in a stable order without duplicates", () => {
      const result = applyGrantAction(existing, "merge", { scopes: ["email", "openid", "address"], authorizationDetails: [] });
      expect(result.scopes).toEqual(["openid", "profile", "email", "address"]);
    });

    it("adds a new detail after the existing ones", () => {
      const result = applyGrantAction(existing, "merge", { scopes: [], authorizationDetails: [payment] });
      expect(result.authorizationDetails).toEqual([read, accounts, payment]);
    });

    it("drops a requested detail an existing one covers", () => {
      const result = applyGrantAction(existing, "merge", { scopes: [], authorizationDetails: [with_(accounts, { actions: ["list_accounts"] })] });
      expect(result.authorizationDetails).toEqual([read, accounts]);
    });

    it("replaces an existing detail that a new one covers, keeping the others in order", () => {
      const result = applyGrantAction(existing, "merge", { scopes: [], authorizationDetails: [readWrite] });
      expect(result.authorizationDetails).toEqual([accounts, readWrite]);
    });

    it("adds a repeated requested detail once", () => {
      const result = applyGrantAction(existing, "merge", { scopes: [], authorizationDetails: [payment, structuredClone(payment)] });
      expect(result.authorizationDetails).toEqual([read, accounts, payment]);
    });

    it("keeps a detail that differs from an existing one by a member", () => {
      const limited = with_(payment, { instructedAmount: { currency: "EUR", amount: "10.00" } });
      const result = applyGrantAction({ scopes: [], authorizationDetails: [payment] }, "merge", { scopes: [], authorizationDetails: [limited] });
      expect(result.authorizationDetails).toEqual([payment, limited]);
    });

    it("leaves the grant unchanged when it already covers the request", () => {
      const requested: GrantContent = { scopes: ["profile"], authorizationDetails: [with_(accounts, { locations: ["https://example.com/cards"] }), read] };
      expect(applyGrantAction(existing, "merge", requested)).toEqual(existing);
    });

    it("covers both what the grant held and what was requested", () => {
      const requested: GrantContent = { scopes: ["email"], authorizationDetails: [readWrite, payment, without(accounts, "locations")] };
      const result = applyGrantAction(existing, "merge", requested);
      expect(requestCovered(result, existing)).toBe(true);
      expect(requestCovered(result, requested)).toBe(true);
    });

    it("does not change its inputs", () => {
      const before = structuredClone(existing);
      applyGrantAction(existing, "merge", { scopes: ["email"], authorizationDetails: [readWrite] });
      expect(existing).toEqual(before);
    });

    it("needs an existing grant", () => {
      expectInvalidGrantId(() => applyGrantAction(undefined, "merge", { scopes: ["openid"], authorizationDetails: [] }));
    });
  });

  describe("no action", () => {
    it("makes a grant holding exactly the request when the user has none for the client", () => {
      const requested: GrantContent = { scopes: ["openid"], authorizationDetails: [read] };
      expect(applyGrantAction(undefined, undefined, requested)).toEqual({ scopes: ["openid"], authorizationDetails: [read] });
    });

    it("merges into the user's grant for the client", () => {
      const requested: GrantContent = { scopes: ["email"], authorizationDetails: [readWrite, payment] };
      expect(applyGrantAction(existing, undefined, requested)).toEqual({
        scopes: ["openid", "profile", "email"],
        authorizationDetails: [accounts, readWrite, payment],
      });
    });
  });
});

describe("alreadyGranted (consent skipping)", () => {
  const grant: GrantContent = { scopes: ["openid", "profile"], authorizationDetails: [accounts] };
  const covered: GrantContent = { scopes: ["openid"], authorizationDetails: [with_(accounts, { actions: ["list_accounts"] })] };
  const notCovered: GrantContent = { scopes: ["openid"], authorizationDetails: [payment] };

  const cases: { action: "create" | "replace" | "merge" | undefined; grant: GrantContent | undefined; request: GrantContent; expected: boolean }[] = [
    { action: "create", grant, request: covered, expected: false },
    { action: "create", grant: undefined, request: covered, expected: false },
    { action: "replace", grant, request: covered, expected: true },
    { action: "replace", grant, request: notCovered, expected: false },
    { action: "replace", grant: undefined, request: covered, expected: false },
    { action: "merge", grant, request: covered, expected: true },
    { action: "merge", grant, request: notCovered, expected: false },
    { action: "merge", grant: undefined, request: covered, expected: false },
    { action: undefined, grant, request: covered, expected: true },
    { action: undefined, grant, request: notCovered, expected: false },
    { action: undefined, grant: undefined, request: covered, expected: false },
  ];

  it.each(cases.map((c) => ({ ...c, grantState: c.grant === undefined ? "no grant" : c.request === covered ? "covering grant" : "grant not covering" })))(
    "action $action, $grantState → $expected",
    ({ action, grant, request, expected }) => {
      expect(alreadyGranted(action, grant, request)).toBe(expected);
    },
  );

  describe("one-off types", () => {
    const oneOff = new Set(["payment_initiation"]);
    const paid: GrantContent = { scopes: ["openid"], authorizationDetails: [payment, accounts] };

    it("a request with a one-off detail is never already granted, even by an identical grant", () => {
      const samePayment: GrantContent = { scopes: ["openid"], authorizationDetails: [payment] };
      expect(alreadyGranted(undefined, paid, samePayment)).toBe(true);
      for (const action of [undefined, "merge", "replace"] as const) expect(alreadyGranted(action, paid, samePayment, oneOff)).toBe(false);
    });

    it("one one-off detail among others is enough to show consent", () => {
      expect(alreadyGranted(undefined, paid, { scopes: ["openid"], authorizationDetails: [accounts, payment] }, oneOff)).toBe(false);
    });

    it("requests without one-off details are compared as before", () => {
      expect(alreadyGranted(undefined, paid, { scopes: ["openid"], authorizationDetails: [accounts] }, oneOff)).toBe(true);
      expect(alreadyGranted(undefined, paid, { scopes: ["openid"], authorizationDetails: [] }, oneOff)).toBe(true);
    });

    it("the type is matched exactly, as coverage matches it", () => {
      const other = with_(payment, { type: "Payment_Initiation" });
      const grant: GrantContent = { scopes: ["openid"], authorizationDetails: [other] };
      expect(alreadyGranted(undefined, grant, { scopes: ["openid"], authorizationDetails: [other] }, oneOff)).toBe(true);
    });
  });
});
