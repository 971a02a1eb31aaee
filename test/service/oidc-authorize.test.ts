import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { totpCode } from "../../src/domain/credentials/totp.ts";
import { OidcRepository } from "../../src/storage/oidc-repository.ts";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import {
  authorizePath,
  authorizeUrl,
  Browser,
  browserCookie,
  createUser,
  csrfOf,
  expectCodeRedirect,
  expectErrorPage,
  expectErrorRedirect,
  expectPage,
  expectPageHeaders,
  findCode,
  pkce,
  registerClient,
  sessionCookie,
  signIn,
  submitPage,
  type Reply,
  type TestUser,
} from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * The authorization endpoint through real HTTP requests on SQLite: validation
 * (spec 4.1, errors of section 7), where errors go (redirect or page), the
 * decision flow (spec 3.1) with the login, re-authentication and consent
 * pages, the stored authorization code, and the pages' protections.
 */

const sqlite = (await databaseTargets()).find((t) => t.name === "sqlite")!;

const redirectUri = "https://rp.example/cb";
const longRedirectUri = "https://rp.example/callback/long";
const queryRedirectUri = "https://rp.example/with-query?tenant=a";
const parOnlyRedirectUri = "https://par-only.example/cb";
/** A state that survives only if it is echoed byte for byte: spaces, &, =, %, +, #, non-ASCII. */
const oddState = "st 1 & x=y/ü 日本 🔑 ?#%41+";
const { challenge } = pkce();

let database: ScratchDatabase | undefined;
let server: TestServer | undefined;
let issuer: string;

function live(): TestServer {
  if (!server) throw new Error("server not started");
  return server;
}

/** A valid request of the web client, with state and PKCE; overrides replace (undefined removes) parameters. */
function params(overrides: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    client_id: "web-app",
    redirect_uri: redirectUri,
    response_type: "code",
    scope: "openid",
    state: oddState,
    code_challenge: challenge,
    code_challenge_method: "S256",
    ...overrides,
  };
}

function browser(): Browser {
  return new Browser(live().url);
}

/** Where a redirect goes and the state it must carry; by default the web client's first URI and `oddState`. */
interface Expected {
  /** Present and undefined: the redirect must carry no state. */
  state?: string | undefined;
  uri?: string;
}

function expectedState(expected: Expected): string | undefined {
  return "state" in expected ? expected.state : oddState;
}

function expectError(reply: Reply, error: string, expected: Expected = {}): URLSearchParams {
  return expectErrorRedirect(reply, { redirectUri: expected.uri ?? redirectUri, error, issuer, state: expectedState(expected) });
}

function expectCode(reply: Reply, expected: Expected = {}): string {
  return expectCodeRedirect(reply, { redirectUri: expected.uri ?? redirectUri, issuer, state: expectedState(expected) });
}

/** A user signed in in `b` who has consented to `scope` for the web client; returns the code of that first flow. */
async function signedInWithGrant(b: Browser, user: TestUser, scope = "openid"): Promise<string> {
  const afterLogin = await signIn(b, await b.get(authorizeUrl(params({ scope }))), user.login, user.password);
  return expectCode(await submitPage(b, afterLogin, "consent", { decision: "allow" }));
}

beforeAll(async () => {
  database = await sqlite.create();
  server = await startTestServer(database.url);
  issuer = server.domain.oidc.issuer;
  await registerClient(server, {
    client_id: "web-app",
    client_name: "Web App",
    token_endpoint_auth_method: "client_secret_basic",
    client_secret: "web-app-secret-0123456789",
    redirect_uris: [redirectUri, longRedirectUri, queryRedirectUri],
    scope: "openid profile email offline_access",
    authorization_details_types: ["payment_initiation", "account_information"],
  });
  await registerClient(server, {
    client_id: "other-app",
    token_endpoint_auth_method: "client_secret_post",
    client_secret: "other-app-secret-0123456789",
    redirect_uris: ["https://other.example/cb"],
    scope: "openid",
  });
  await registerClient(server, {
    client_id: "par-only-app",
    token_endpoint_auth_method: "client_secret_basic",
    client_secret: "par-only-secret-0123456789",
    redirect_uris: [parOnlyRedirectUri],
    scope: "openid",
    require_pushed_authorization_requests: true,
  });
});

afterAll(async () => {
  await server?.close();
  await database?.drop();
});

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

describe("decision flow (spec 3.1) through real requests", () => {
  it("row 1: no session and prompt=none → login_required, no login page", async () => {
    expectError(await browser().get(authorizeUrl(params({ prompt: "none" }))), "login_required");
  });

  it("row 2: no session → 303 to /auth/login; login → consent page; allow → code stored with everything it stands for", async () => {
    const s = live();
    const user = await createUser(s);
    const b = browser();
    const details = [{ type: "account_information", actions: ["list_accounts"], locations: ["https://bank.example/accounts"] }];
    const start = await b.get(
      authorizeUrl(params({ scope: "openid profile", nonce: "n-0S6_WzA2Mj", authorization_details: JSON.stringify(details) })),
    );
    const loginPath = expectPage(start, "login");
    expect(b.jar.get(browserCookie)).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const loginPage = await b.get(loginPath);
    expect(loginPage.status).toBe(200);
    expect(loginPage.headers.get("content-type")).toMatch(/^text\/html/);
    expectPageHeaders(loginPage);
    expect(loginPage.body).toContain("Web App");
    expect(loginPage.body).toContain('name="login"');
    expect(loginPage.body).toContain('name="password"');

    const before = Date.now();
    const afterLogin = await b.post(loginPath, { csrf: csrfOf(loginPage.body), login: user.login, password: user.password });
    const after = Date.now();
    const consentPath = expectPage(afterLogin, "consent");

    // The session cookie: HttpOnly, SameSite=Lax, for the whole site.
    expect(b.jar.get(sessionCookie)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const attributes = b.jar.attributesOf(sessionCookie)!;
    expect(attributes.has("httponly")).toBe(true);
    expect(attributes.get("samesite")).toBe("Lax");
    expect(attributes.get("path")).toBe("/");
    const browserAttributes = b.jar.attributesOf(browserCookie)!;
    expect(browserAttributes.has("httponly")).toBe(true);
    expect(browserAttributes.get("samesite")).toBe("Lax");

    const consentPage = await b.get(consentPath);
    expect(consentPage.status).toBe(200);
    expectPageHeaders(consentPage);
    expect(consentPage.body).toContain("Web App");
    expect(consentPage.body).toContain(user.login);
    expect(consentPage.body).toContain("Your name and profile");
    expect(consentPage.body).toContain("account_information");
    expect(consentPage.body).toContain("List your accounts");
    expect(consentPage.body).toContain('value="allow"');
    expect(consentPage.body).toContain('value="deny"');

    const done = await b.post(consentPath, { csrf: csrfOf(consentPage.body), decision: "allow" });
    const code = expectCode(done);

    const record = await findCode(s, code);
    expect(record).toBeDefined();
    expect(record!.owner).toBe("web-app");
    expect(record!.consumedAt).toBeNull();
    expect(record!.expiresAt - record!.createdAt).toBe(60_000);
    expect(record!.payload).toEqual({
      clientId: "web-app",
      redirectUri,
      codeChallenge: challenge,
      nonce: "n-0S6_WzA2Mj",
      scopes: ["openid", "profile"],
      authorizationDetails: details,
      grantId: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      userId: user.row.id,
      authTime: expect.any(Number),
      acr: "low",
      amr: ["pwd"],
      sid: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    expect(record!.payload.authTime).toBeGreaterThanOrEqual(before);
    expect(record!.payload.authTime).toBeLessThanOrEqual(after);

    const grant = await new OidcRepository(s.database).findGrant(record!.payload.grantId);
    expect(grant).toMatchObject({ userId: user.row.id, clientId: "web-app", scopes: ["openid", "profile"], authorizationDetails: details, revokedAt: null });

    // The interaction is finished: its pages are gone.
    const again = await b.get(consentPath);
    expect(again.status).toBe(400);
    expect(again.location).toBeUndefined();
  });

  it("a code issued for a PKCE-only request (no state) carries no state and stores the challenge", async () => {
    const s = live();
    const user = await createUser(s);
    const b = browser();
    const { challenge: own } = pkce();
    const afterLogin = await signIn(b, await b.get(authorizeUrl(params({ state: undefined, code_challenge: own }))), user.login, user.password);
    const code = expectCode(await submitPage(b, afterLogin, "consent", { decision: "allow" }), { state: undefined });
    const record = await findCode(s, code);
    expect(record!.payload).toMatchObject({ codeChallenge: own, nonce: null, scopes: ["openid"], authorizationDetails: [] });
  });

  it("a code for a state-only request stores no challenge; a registered redirect_uri with a query keeps it", async () => {
    const s = live();
    const user = await createUser(s);
    const b = browser();
    const start = await b.get(authorizeUrl(params({ redirect_uri: queryRedirectUri, code_challenge: undefined, code_challenge_method: undefined })));
    const afterLogin = await signIn(b, start, user.login, user.password);
    const code = expectCode(await submitPage(b, afterLogin, "consent", { decision: "allow" }), { uri: queryRedirectUri });
    expect((await findCode(s, code))!.payload).toMatchObject({ codeChallenge: null, redirectUri: queryRedirectUri });
  });

  it("row 10: consent denied → access_denied, nothing granted", async () => {
    const user = await createUser(live());
    const b = browser();
    const afterLogin = await signIn(b, await b.get(authorizeUrl(params())), user.login, user.password);
    expectError(await submitPage(b, afterLogin, "consent", { decision: "deny" }), "access_denied");
    expect(await new OidcRepository(live().database).findLatestGrant(user.row.id, "web-app")).toBeUndefined();
    // Nothing was granted, so the next request asks again.
    expectPage(await b.get(authorizeUrl(params())), "consent");
  });

  it("row 6: a second request for already granted scopes skips consent (also under prompt=none, and for a subset)", async () => {
    const s = live();
    const user = await createUser(s);
    const b = browser();
    const first = await signedInWithGrant(b, user, "openid profile");
    const firstGrant = (await findCode(s, first))!.payload.grantId;

    const second = expectCode(await b.get(authorizeUrl(params({ scope: "openid profile", state: "second" }))), { state: "second" });
    expect(second).not.toBe(first);
    expect((await findCode(s, second))!.payload).toMatchObject({ grantId: firstGrant, userId: user.row.id, scopes: ["openid", "profile"] });

    expectCode(await b.get(authorizeUrl(params({ scope: "openid", prompt: "none" }))));
    expectCode(await b.get(authorizeUrl(params({ scope: "profile openid" }))));
  });

  it("a request answered at once writes no interaction; one that needs a page stores exactly one, ended once completed", async () => {
    const s = live();
    const user = await createUser(s);
    const b = browser();
    await signedInWithGrant(b, user, "openid");
    const interactions = async () => Number((await s.database.db.selectFrom("oidc_interactions").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow()).n);
    const before = await interactions();
    const writes = vi.spyOn(OidcRepository.prototype, "insertInteraction");
    try {
      // A code at once (row 6) and an error at once (row 8): no interaction is written for them.
      expectCode(await b.get(authorizeUrl(params({ scope: "openid", state: "at-once" }))), { state: "at-once" });
      expectError(await b.get(authorizeUrl(params({ scope: "openid profile", prompt: "none" }))), "consent_required");
      expect(writes).not.toHaveBeenCalled();
      expect(await interactions()).toBe(before);
      // The consent page: one interaction, which completing puts out of reach (kept only to say it has ended, until swept).
      const page = await b.get(authorizeUrl(params({ scope: "openid profile", state: "page" })));
      const path = expectPage(page, "consent");
      expect(writes).toHaveBeenCalledTimes(1);
      expect(await interactions()).toBe(before + 1);
      expectCode(await submitPage(b, page, "consent", { decision: "allow" }), { state: "page" });
      expect(await interactions()).toBe(before + 1);
      const id = new URL(path, s.url).searchParams.get("interaction")!;
      expect(await s.domain.oidc.flow.load(id, b.jar.get(browserCookie)).catch((error: unknown) => (error as Error).name)).toBe("InteractionEnded");
    } finally {
      writes.mockRestore();
    }
  });

  it("row 7: prompt=consent shows the consent page again; allowing issues a code", async () => {
    const user = await createUser(live());
    const b = browser();
    await signedInWithGrant(b, user);
    const reply = await b.get(authorizeUrl(params({ prompt: "consent" })));
    expectPage(reply, "consent");
    expectCode(await submitPage(b, reply, "consent", { decision: "allow" }));
  });

  it("row 8: prompt=none with a session when consent is needed → consent_required", async () => {
    const user = await createUser(live());
    const b = browser();
    await signedInWithGrant(b, user, "openid");
    expectError(await b.get(authorizeUrl(params({ scope: "openid email", prompt: "none" }))), "consent_required");
    // Without prompt=none the same request shows the consent page (row 9).
    expectPage(await b.get(authorizeUrl(params({ scope: "openid email" }))), "consent");
  });

  it("row 5: prompt=login with a session → re-authentication page; a wrong password stays on it; the right one completes", async () => {
    const s = live();
    const user = await createUser(s);
    const b = browser();
    const first = await signedInWithGrant(b, user);
    const firstAuthTime = (await findCode(s, first))!.payload.authTime;

    const reply = await b.get(authorizeUrl(params({ prompt: "login" })));
    const reauthPath = expectPage(reply, "reauth");
    const page = await b.get(reauthPath);
    expect(page.status).toBe(200);
    expectPageHeaders(page);
    expect(page.body).toContain("the application asked you to sign in again");
    expect(page.body).toContain('name="password"');
    expect(page.body).not.toContain('name="otp"');

    const wrong = await b.post(reauthPath, { csrf: csrfOf(page.body), password: "not-the-password" });
    expect(wrong.status).toBe(401);
    expect(wrong.location).toBeUndefined();
    expect(wrong.body).toContain("The password is not correct.");

    const done = await b.post(reauthPath, { csrf: csrfOf(page.body), password: user.password });
    const code = expectCode(done);
    const payload = (await findCode(s, code))!.payload;
    expect(payload.amr).toEqual(["pwd"]);
    expect(payload.authTime).toBeGreaterThanOrEqual(firstAuthTime);
  });

  it("prompt=login combined with prompt=none is invalid_request, even with a session", async () => {
    const user = await createUser(live());
    const b = browser();
    await signedInWithGrant(b, user);
    expectError(await b.get(authorizeUrl(params({ prompt: "login none" }))), "invalid_request");
  });

  it("max_age=0 with a session → re-authentication page", async () => {
    const user = await createUser(live());
    const b = browser();
    await signedInWithGrant(b, user);
    const reply = await b.get(authorizeUrl(params({ max_age: "0" })));
    const page = await b.get(expectPage(reply, "reauth"));
    expect(page.body).toContain("your last sign-in is older than the application allows");
    expectCode(await submitPage(b, reply, "reauth", { password: user.password }));
  });

  it("row 3: prompt=none and max_age=0 with a session → interaction_required", async () => {
    const user = await createUser(live());
    const b = browser();
    await signedInWithGrant(b, user);
    expectError(await b.get(authorizeUrl(params({ prompt: "none", max_age: "0" }))), "interaction_required");
  });

  it("row 3 comes before row 4: prompt=none and acr_values=high for a user without TOTP → interaction_required", async () => {
    const user = await createUser(live());
    const b = browser();
    await signedInWithGrant(b, user);
    expectError(await b.get(authorizeUrl(params({ prompt: "none", acr_values: "high" }))), "interaction_required");
  });

  it("row 4: acr_values=high for a user without TOTP → a page says why, then unmet_authentication_requirements (after login, and with a session)", async () => {
    const user = await createUser(live());
    const b = browser();
    const afterLogin = await signIn(b, await b.get(authorizeUrl(params({ acr_values: "high" }))), user.login, user.password);
    // Right after a good password: a page says why (a linked card would do), then Return sends the client the error.
    const unreachable = expectPage(afterLogin, "unreachable");
    const page = await b.get(unreachable);
    expect(page.body).toContain('data-reason="no_certificate"');
    expectError(await b.post(unreachable, { csrf: csrfOf(page.body), return: "yes" }), "unmet_authentication_requirements");
    // The login itself succeeded: the session exists, a later request at that level is told the same, a lower one works.
    expect(b.jar.get(sessionCookie)).toBeDefined();
    expectPage(await b.get(authorizeUrl(params({ acr_values: "high" }))), "unreachable");
    expectPage(await b.get(authorizeUrl(params({ acr_values: "low" }))), "consent");
  });

  it("acr_values=high for a user with TOTP: re-authentication asks for the one-time code; a wrong one stays, the right one completes, the same one twice is refused", async () => {
    const s = live();
    const user = await createUser(s, { totp: true });
    const b = browser();
    const afterLogin = await signIn(b, await b.get(authorizeUrl(params({ acr_values: "high" }))), user.login, user.password);
    const reauthPath = expectPage(afterLogin, "reauth");
    const page = await b.get(reauthPath);
    expect(page.status).toBe(200);
    expectPageHeaders(page);
    expect(page.body).toContain('name="otp"');
    expect(page.body).toContain("level: High");
    expect(page.body).toContain("the application needs a stronger sign-in than your current one");
    const csrf = csrfOf(page.body);

    const wrong = await b.post(reauthPath, { csrf, password: user.password, otp: wrongOtp(user.totpSecret!) });
    expect(wrong.status).toBe(401);
    expect(wrong.location).toBeUndefined();
    expect(wrong.body).toContain("The one-time code is not correct or was already used.");

    const otp = s.domain.oidc.users.currentOtp(user.row)!;
    expect(otp).toMatch(/^\d{6}$/);
    const afterOtp = await b.post(reauthPath, { csrf, password: user.password, otp });
    const done = await submitPage(b, afterOtp, "consent", { decision: "allow" });
    const code = expectCode(done);
    expect((await findCode(s, code))!.payload).toMatchObject({ acr: "high", amr: ["pwd", "otp"], userId: user.row.id });

    // The session is now at "high": the same request completes without asking anything.
    expectCode(await b.get(authorizeUrl(params({ acr_values: "high" }))));

    // Forcing a new authentication, the code already used is refused.
    const again = await b.get(authorizeUrl(params({ acr_values: "high", prompt: "login" })));
    const againPath = expectPage(again, "reauth");
    const againPage = await b.get(againPath);
    const replay = await b.post(againPath, { csrf: csrfOf(againPage.body), password: user.password, otp });
    expect(replay.status).toBe(401);
    expect(replay.location).toBeUndefined();
    expect(replay.body).toContain("The one-time code is not correct or was already used.");
  });

  it("replace with a grant_id of another user → invalid_grant_id after login; an unknown grant_id too; the user's own grant works", async () => {
    const s = live();
    const owner = await createUser(s);
    const ownerCode = await signedInWithGrant(browser(), owner);
    const foreignGrant = (await findCode(s, ownerCode))!.payload.grantId;

    const user = await createUser(s);
    const b = browser();
    const request = params({ grant_management_action: "replace", grant_id: foreignGrant });
    const start = await b.get(authorizeUrl(request));
    expectPage(start, "login");
    expectError(await signIn(b, start, user.login, user.password), "invalid_grant_id");

    expectError(await b.get(authorizeUrl(params({ grant_management_action: "merge", grant_id: "no-such-grant" }))), "invalid_grant_id");

    // Signed in now: the user's own grant, then a replace naming it.
    const ownCode = expectCode(await submitPage(b, await b.get(authorizeUrl(params({ scope: "openid profile" }))), "consent", { decision: "allow" }));
    const ownGrant = (await findCode(s, ownCode))!.payload.grantId;
    const replaced = expectCode(await b.get(authorizeUrl(params({ scope: "openid", grant_management_action: "replace", grant_id: ownGrant }))));
    expect((await findCode(s, replaced))!.payload.grantId).toBe(ownGrant);
    expect((await new OidcRepository(s.database).findGrant(ownGrant))!.scopes).toEqual(["openid"]);
  });

  it("replace without grant_id replaces the user's current grant for the client; merge without grant_id adds to it", async () => {
    const s = live();
    const user = await createUser(s);
    const b = browser();
    const firstCode = await signedInWithGrant(b, user, "openid profile");
    const grantId = (await findCode(s, firstCode))!.payload.grantId;
    const repository = new OidcRepository(s.database);

    // replace, narrower than the grant: covered, so no consent page; same grant, now exactly the request.
    const replaced = expectCode(await b.get(authorizeUrl(params({ scope: "openid", grant_management_action: "replace" }))));
    expect((await findCode(s, replaced))!.payload.grantId).toBe(grantId);
    expect((await repository.findGrant(grantId))!.scopes).toEqual(["openid"]);

    // merge, asking for more: the consent page, then the same grant holds both.
    const mergeStart = await b.get(authorizeUrl(params({ scope: "openid email", grant_management_action: "merge" })));
    const merged = expectCode(await submitPage(b, mergeStart, "consent", { decision: "allow" }));
    expect((await findCode(s, merged))!.payload.grantId).toBe(grantId);
    expect((await repository.findGrant(grantId))!.scopes).toEqual(["openid", "email"]);

    // replace, asking for something else: the consent page says so, then the same grant holds only the request.
    const replaceStart = await b.get(authorizeUrl(params({ scope: "openid profile", grant_management_action: "replace" })));
    expect((await b.get(expectPage(replaceStart, "consent"))).body).toContain("Allowing replaces the access you gave");
    const replacedAgain = expectCode(await submitPage(b, replaceStart, "consent", { decision: "allow" }));
    expect((await findCode(s, replacedAgain))!.payload.grantId).toBe(grantId);
    expect((await repository.findGrant(grantId))!.scopes).toEqual(["openid", "profile"]);

    // create still makes a new grant beside it, and from then on that newest grant is the current one.
    const created = expectCode(await submitPage(b, await b.get(authorizeUrl(params({ scope: "openid", grant_management_action: "create" }))), "consent", { decision: "allow" }));
    const newGrant = (await findCode(s, created))!.payload.grantId;
    expect(newGrant).not.toBe(grantId);
    expect((await repository.findGrant(grantId))!.scopes).toEqual(["openid", "profile"]);
  });

  it.each(["replace", "merge"])("%s without grant_id and no grant yet → consent page (not saying it changes a grant), then a new grant holding the request", async (action) => {
    const s = live();
    const user = await createUser(s);
    const b = browser();
    const start = await b.get(authorizeUrl(params({ scope: "openid email", grant_management_action: action })));
    const consent = await signIn(b, start, user.login, user.password);
    const shown = await b.get(expectPage(consent, "consent"));
    expect(shown.status).toBe(200);
    expect(shown.body).not.toContain("Allowing replaces the access you gave");
    expect(shown.body).not.toContain("Allowing adds to the access you already gave");
    const code = expectCode(await submitPage(b, consent, "consent", { decision: "allow" }));
    const grant = await new OidcRepository(s.database).findGrant((await findCode(s, code))!.payload.grantId);
    expect(grant).toMatchObject({ userId: user.row.id, clientId: "web-app", scopes: ["openid", "email"], revokedAt: null });
  });

  it("replace without grant_id under prompt=none and no grant yet → consent_required", async () => {
    const s = live();
    const user = await createUser(s);
    const b = browser();
    // A session for the user, with a grant for another client only.
    const other = await b.get(authorizeUrl(params({ client_id: "other-app", redirect_uri: "https://other.example/cb" })));
    await submitPage(b, await signIn(b, other, user.login, user.password), "consent", { decision: "allow" });
    expectError(await b.get(authorizeUrl(params({ prompt: "none", grant_management_action: "replace" }))), "consent_required");
  });

  it("an interaction continues only in the browser that started it", async () => {
    const reply = await browser().get(authorizeUrl(params()));
    const loginPath = expectPage(reply, "login");
    const stranger = await browser().get(loginPath);
    expect(stranger.status).toBe(400);
    expect(stranger.body).not.toContain('name="csrf"');
  });
});

/** Six digits that are not the code of the current, previous or next time step (all of which would be accepted). */
function wrongOtp(secret: string): string {
  const now = Date.now();
  const valid = new Set([-60_000, -30_000, 0, 30_000, 60_000].map((d) => totpCode(secret, now + d)));
  return ["000000", "111111", "222222", "333333", "444444", "555555"].find((c) => !valid.has(c))!;
}

describe("login form protection", () => {
  it("a login POST without a CSRF token, with a wrong one or with another interaction's → 403, no session", async () => {
    const user = await createUser(live());
    const b = browser();
    const loginPath = expectPage(await b.get(authorizeUrl(params())), "login");
    const page = await b.get(loginPath);
    const otherPath = expectPage(await b.get(authorizeUrl(params({ state: "other" }))), "login");
    const otherCsrf = csrfOf((await b.get(otherPath)).body);

    for (const csrf of [undefined, "", "x".repeat(43), otherCsrf, `${csrfOf(page.body)}x`]) {
      const form: Record<string, string> = { login: user.login, password: user.password };
      if (csrf !== undefined) form.csrf = csrf;
      const reply = await b.post(loginPath, form);
      expect(reply.status, String(csrf)).toBe(403);
      expect(reply.location).toBeUndefined();
      expect(reply.headers.getSetCookie().some((c) => c.startsWith(`${sessionCookie}=`))).toBe(false);
    }
    expect(b.jar.get(sessionCookie)).toBeUndefined();
    expectError(await b.get(authorizeUrl(params({ prompt: "none" }))), "login_required");

    // The right token still works afterwards.
    expectPage(await b.post(loginPath, { csrf: csrfOf(page.body), login: user.login, password: user.password }), "consent");
  });

  it("a consent POST without the CSRF token → 403 and no code", async () => {
    const user = await createUser(live());
    const b = browser();
    const afterLogin = await signIn(b, await b.get(authorizeUrl(params())), user.login, user.password);
    const consentPath = expectPage(afterLogin, "consent");
    const reply = await b.post(consentPath, { decision: "allow" });
    expect(reply.status).toBe(403);
    expect(reply.location).toBeUndefined();
    expect(await new OidcRepository(live().database).findLatestGrant(user.row.id, "web-app")).toBeUndefined();
  });

  it("a wrong password → 401 on the login page, no session", async () => {
    const user = await createUser(live());
    const b = browser();
    const reply = await signIn(b, await b.get(authorizeUrl(params())), user.login, "wrong-password");
    expect(reply.status).toBe(401);
    expect(reply.location).toBeUndefined();
    expect(reply.body).toContain("The username or password is not correct.");
    expect(b.jar.get(sessionCookie)).toBeUndefined();
  });
});

describe("failed-login throttling (own server, so no other test's failures count)", () => {
  let throttleDatabase: ScratchDatabase | undefined;
  let throttleServer: TestServer | undefined;

  beforeAll(async () => {
    throttleDatabase = await sqlite.create();
    throttleServer = await startTestServer(throttleDatabase.url);
    await registerClient(throttleServer, {
      client_id: "web-app",
      client_name: "Web App",
      client_secret: "web-app-secret-0123456789",
      redirect_uris: [redirectUri],
      scope: "openid",
    });
  });

  afterAll(async () => {
    await throttleServer?.close();
    await throttleDatabase?.drop();
  });

  it("5 wrong passwords, then even the right one → 429 with a clear message and Retry-After, no session", async () => {
    const s = throttleServer!;
    const user = await createUser(s);
    const b = new Browser(s.url);
    const loginPath = expectPage(await b.get(authorizeUrl(params())), "login");
    const csrf = csrfOf((await b.get(loginPath)).body);
    for (let i = 1; i <= 5; i++) {
      const reply = await b.post(loginPath, { csrf, login: user.login, password: `wrong-${i}-password` });
      expect(reply.status, `attempt ${i}`).toBe(401);
      expect(reply.headers.get("retry-after")).toBeNull();
    }
    const blocked = await b.post(loginPath, { csrf, login: user.login, password: user.password });
    expect(blocked.status).toBe(429);
    expect(blocked.location).toBeUndefined();
    const retryAfter = Number(blocked.headers.get("retry-after"));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    expect(blocked.body).toMatch(/Too many failed sign-in attempts\. You can try again after \d{1,2}:\d{2} [AP]M Japan Standard Time\./);
    expectPageHeaders(blocked);
    expect(b.jar.get(sessionCookie)).toBeUndefined();
    // Case variants of the login share the counter.
    expect((await b.post(loginPath, { csrf, login: user.login.toUpperCase(), password: user.password })).status).toBe(429);
  });

  it("60 wrong passwords and the right one sent at once: exactly 5 are checked, the rest are 429", async () => {
    const s = throttleServer!;
    const user = await createUser(s);
    const b = new Browser(s.url);
    const loginPath = expectPage(await b.get(authorizeUrl(params())), "login");
    const csrf = csrfOf((await b.get(loginPath)).body);
    const guesses = Array.from({ length: 61 }, (_, i) => (i === 60 ? user.password : `wrong-${i}-password`));
    const replies = await Promise.all(guesses.map((password) => b.post(loginPath, { csrf, login: user.login, password })));
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((status) => status !== 429)).toHaveLength(5);
    expect(statuses.every((status) => [401, 429, 303].includes(status))).toBe(true);
    // Afterwards even the right password is refused until the window passes.
    expect((await b.post(loginPath, { csrf, login: user.login, password: user.password })).status).toBe(429);
  });

  it("30 wrong one-time codes sent at once at the step-up page: exactly 5 are checked, the rest are 429", async () => {
    const s = throttleServer!;
    const user = await createUser(s, { totp: true });
    const b = new Browser(s.url);
    const afterLogin = await signIn(b, await b.get(authorizeUrl(params({ acr_values: "high" }))), user.login, user.password);
    const reauthPath = expectPage(afterLogin, "reauth");
    const csrf = csrfOf((await b.get(reauthPath)).body);
    const replies = await Promise.all(
      Array.from({ length: 30 }, () => b.post(reauthPath, { csrf, password: user.password, otp: wrongOtp(user.totpSecret!) })),
    );
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(25);
    const otp = s.domain.oidc.users.currentOtp(user.row)!;
    expect((await b.post(reauthPath, { csrf, password: user.password, otp })).status).toBe(429);
  });
});
