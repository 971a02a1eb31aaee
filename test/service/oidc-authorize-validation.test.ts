import { describe, expect, it } from "vitest";

import { authorizePath, authorizeUrl, expectErrorPage, expectPage, expectPageHeaders, sessionCookie } from "../support/oidc.ts";

import { redirectUri, longRedirectUri, queryRedirectUri, parOnlyRedirectUri, oddState, params, browser, expectError, authorizeServer } from "../support/oidc-authorize-server.ts";

/**
 * The authorization endpoint through real HTTP requests on SQLite: validation (spec 4.1, errors of
 * section 7), where errors go (a redirect to the client, or a page when the client or redirect_uri is
 * not established), and the valid requests that start the flow.
 */

authorizeServer();

describe("errors shown as a page, never redirected (client or redirect_uri not established)", () => {
  const pageCases: Array<[string, URLSearchParams, string]> = [
    ["client_id missing", query(params({ client_id: undefined })), "invalid_request"],
    ["client_id unknown", query(params({ client_id: "no-such-app" })), "invalid_client"],
    ["redirect_uri missing", query(params({ redirect_uri: undefined })), "invalid_request"],
    ["redirect_uri with a trailing slash", query(params({ redirect_uri: `${redirectUri}/` })), "invalid_request"],
    ["redirect_uri with a different case in the path", query(params({ redirect_uri: "https://rp.example/CB" })), "invalid_request"],
    ["redirect_uri with a different case in the host", query(params({ redirect_uri: "https://RP.example/cb" })), "invalid_request"],
    ["redirect_uri with an extra query", query(params({ redirect_uri: `${redirectUri}?x=1` })), "invalid_request"],
    ["redirect_uri without the registered query", query(params({ redirect_uri: "https://rp.example/with-query" })), "invalid_request"],
    ["redirect_uri a prefix of a registered one", query(params({ redirect_uri: "https://rp.example/callback" })), "invalid_request"],
    ["redirect_uri extending a registered one", query(params({ redirect_uri: `${redirectUri}/evil` })), "invalid_request"],
    ["redirect_uri with a fragment", query(params({ redirect_uri: `${redirectUri}#x` })), "invalid_request"],
    ["redirect_uri of another client", query(params({ redirect_uri: "https://other.example/cb" })), "invalid_request"],
    // The redirect_uri problem wins over every other error: nothing may be sent to an unverified URI.
    ["bad redirect_uri and response_type=token", query(params({ redirect_uri: `${redirectUri}/`, response_type: "token" })), "invalid_request"],
    ["bad redirect_uri and prompt=none", query(params({ redirect_uri: `${redirectUri}/`, prompt: "none" })), "invalid_request"],
    ["client_id repeated", withRepeated("client_id", "web-app"), "invalid_request"],
    ["redirect_uri repeated", withRepeated("redirect_uri", longRedirectUri), "invalid_request"],
    // As implemented, any repeated authorization parameter is refused before the client is looked up,
    // so it is shown as a page even when client_id and redirect_uri are fine.
    ["scope repeated", withRepeated("scope", "profile"), "invalid_request"],
    ["state repeated", withRepeated("state", "other"), "invalid_request"],
  ];

  it.each(pageCases.map(([name, q, error]) => ({ name, q, error })))("$name → 400 page with $error, no redirect", async ({ q, error }) => {
    const reply = await browser().get(`${authorizePath}?${q.toString()}`);
    expectErrorPage(reply, error);
    expectPageHeaders(reply);
    // The page never links or leaks back to the client with the error.
    expect(reply.body).not.toContain("rp.example");
  });

  it("the same errors are pages for POST requests too", async () => {
    expectErrorPage(await browser().post(authorizePath, query(params({ client_id: "no-such-app" }))), "invalid_client");
    expectErrorPage(await browser().post(authorizePath, query(params({ redirect_uri: `${redirectUri}/` }))), "invalid_request");
  });
});

function query(p: Record<string, string | undefined>): URLSearchParams {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(p)) if (value !== undefined) q.append(name, value);
  return q;
}

function withRepeated(name: string, second: string): URLSearchParams {
  const q = query(params());
  q.append(name, second);
  return q;
}

describe("validation errors redirected to the client (spec 4.1, section 7)", () => {
  const details = (value: unknown) => JSON.stringify(value);
  const redirectCases: Array<[string, Record<string, string | undefined>, string]> = [
    ["response_type missing", { response_type: undefined }, "invalid_request"],
    ["response_type empty (counts as missing)", { response_type: "" }, "invalid_request"],
    ["response_type=token", { response_type: "token" }, "unsupported_response_type"],
    ["response_type=code id_token", { response_type: "code id_token" }, "unsupported_response_type"],
    ["prompt with an unknown value", { prompt: "select_account" }, "invalid_request"],
    ["prompt=none combined with login", { prompt: "none login" }, "invalid_request"],
    ["prompt=consent combined with none", { prompt: "consent none" }, "invalid_request"],
    ["max_age=-1", { max_age: "-1" }, "invalid_request"],
    ["max_age=abc", { max_age: "abc" }, "invalid_request"],
    ["max_age=1.5", { max_age: "1.5" }, "invalid_request"],
    ["max_age=1e3", { max_age: "1e3" }, "invalid_request"],
    ["neither state nor PKCE", { state: undefined, code_challenge: undefined, code_challenge_method: undefined }, "invalid_request"],
    ["code_challenge_method=plain", { code_challenge_method: "plain" }, "invalid_request"],
    ["code_challenge without code_challenge_method", { code_challenge_method: undefined }, "invalid_request"],
    ["code_challenge_method without code_challenge", { code_challenge: undefined }, "invalid_request"],
    ["code_challenge too short (42 characters)", { code_challenge: "a".repeat(42) }, "invalid_request"],
    ["code_challenge too long (129 characters)", { code_challenge: "a".repeat(129) }, "invalid_request"],
    ["code_challenge with characters outside the allowed set", { code_challenge: `${"a".repeat(42)}+` }, "invalid_request"],
    ["scope missing", { scope: undefined }, "invalid_request"],
    ["unknown scope", { scope: "openid payments" }, "invalid_scope"],
    ["scope not registered for the client", { scope: "openid address" }, "invalid_scope"],
    ["authorization_details not JSON", { authorization_details: "[{type:" }, "invalid_authorization_details"],
    ["authorization_details not an array", { authorization_details: details({ type: "payment_initiation" }) }, "invalid_authorization_details"],
    ["authorization_details entry not an object", { authorization_details: details(["payment_initiation"]) }, "invalid_authorization_details"],
    ["authorization_details entry without type", { authorization_details: details([{ actions: ["read"] }]) }, "invalid_authorization_details"],
    ["authorization_details entry with an empty type", { authorization_details: details([{ type: "" }]) }, "invalid_authorization_details"],
    ["authorization_details type not allowed", { authorization_details: details([{ type: "tax_returns" }]) }, "invalid_authorization_details"],
    ["grant_management_action invalid", { grant_management_action: "update" }, "invalid_request"],
    ["grant_management_action=create with grant_id", { grant_management_action: "create", grant_id: "g-1" }, "invalid_request"],
    ["grant_id without grant_management_action", { grant_id: "g-1" }, "invalid_request"],
  ];

  it.each(redirectCases.map(([name, overrides, error]) => ({ name, overrides, error })))("$name → $error", async ({ overrides, error }) => {
    const reply = await browser().get(authorizeUrl(params(overrides)));
    expectError(reply, error, "state" in overrides ? { state: overrides.state } : {});
  });

  it.each([
    ["plain", "abc"],
    ["spaces", "a b  c "],
    ["ampersand and equals", "a&b=c&iss=https://evil.example"],
    ["unicode", "ü日本🔑"],
    ["percent and plus", "%41%2B+"],
  ])("state with %s is echoed exactly in an error redirect", async (_name, state) => {
    expectError(await browser().get(authorizeUrl(params({ state, response_type: "token" }))), "unsupported_response_type", { state });
  });

  it("a state longer than 2,048 characters is refused, and not sent back in the redirect that says so", async () => {
    const sent = expectError(await browser().get(authorizeUrl(params({ state: "s".repeat(10_000) }))), "invalid_request", { state: undefined });
    expect(sent.get("error_description")).toBe("parameter state is longer than 2048 characters");
  });

  it("a registered redirect_uri with its own query keeps it, the error parameters are added", async () => {
    const reply = await browser().get(authorizeUrl(params({ redirect_uri: queryRedirectUri, scope: "openid nope" })));
    expectError(reply, "invalid_scope", { uri: queryRedirectUri });
  });

  it("a client that must use PAR is refused at the plain authorization endpoint with invalid_request", async () => {
    const reply = await browser().get(
      authorizeUrl({ client_id: "par-only-app", redirect_uri: parOnlyRedirectUri, response_type: "code", scope: "openid", state: oddState }),
    );
    const sent = expectError(reply, "invalid_request", { uri: parOnlyRedirectUri });
    expect(sent.get("error_description")).toMatch(/pushed authorization/);
  });

  it("POST to the authorization endpoint validates the same way", async () => {
    expectError(await browser().post(authorizePath, query(params({ max_age: "abc" }))), "invalid_request");
    expectError(await browser().post(authorizePath, query(params({ scope: "openid payments" }))), "invalid_scope");
  });

  it("error redirects carry no code and do not start a session", async () => {
    const b = browser();
    await b.get(authorizeUrl(params({ response_type: "token" })));
    expect(b.jar.get(sessionCookie)).toBeUndefined();
  });
});

describe("valid requests start the flow", () => {
  it.each([
    ["state and PKCE", {}],
    ["state only", { code_challenge: undefined, code_challenge_method: undefined }],
    ["PKCE only", { state: undefined }],
    ["max_age=0", { max_age: "0" }],
    ["max_age=3600", { max_age: "3600" }],
    ["prompt=login consent", { prompt: "login consent" }],
    ["acr_values with unknown values", { acr_values: "urn:x:unknown low" }],
    ["allowed authorization_details", { authorization_details: JSON.stringify([{ type: "payment_initiation", amount: "10.00" }]) }],
    ["grant_management_action=create", { grant_management_action: "create" }],
    ["grant_management_action=replace without grant_id", { grant_management_action: "replace" }],
    ["grant_management_action=merge without grant_id", { grant_management_action: "merge" }],
    [
      "unknown parameters, even repeated ones",
      { login_hint: "someone", ui_locales: "de", claims: "{}", foo: "1", "a[b]": "c" },
    ],
  ] as Array<[string, Record<string, string | undefined>]>)("%s → 303 to the login page", async (_name, overrides) => {
    const q = query(params(overrides));
    q.append("foo", "2");
    const reply = await browser().get(`${authorizePath}?${q.toString()}`);
    expectPage(reply, "login");
  });

  it("POST with a form body works like GET", async () => {
    const b = browser();
    const reply = await b.post(authorizePath, query(params()));
    const loginPath = expectPage(reply, "login");
    expect((await b.get(loginPath)).status).toBe(200);
  });
});
