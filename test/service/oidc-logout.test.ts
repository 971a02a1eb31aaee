import { exportJWK, generateKeyPair, SignJWT } from "jose";
import * as client from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import {
  authorizeUrl,
  basicAuthorization,
  Browser,
  createUser,
  expectErrorPage,
  expectErrorRedirect,
  obtainCode,
  postToken,
  registerClient,
  sessionCookie,
  type TestUser,
} from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * The end-session endpoint (OpenID Connect RP-Initiated Logout 1.0): what an
 * application sends is checked before anything happens, the user confirms with
 * a button, and the browser returns only to a registered
 * post_logout_redirect_uri, with state.
 */
const sqlite = (await databaseTargets()).find((t) => t.name === "sqlite")!;
const secret = "logout-client-secret-0123456789";
const redirectUri = "https://rp.example/cb";
const afterLogout = "https://rp.example/signed-out?from=op";

describe("RP-initiated logout", () => {
  let scratch: ScratchDatabase;
  let server: TestServer;
  let user: TestUser;
  let issuer: string;

  beforeAll(async () => {
    scratch = await sqlite.create();
    server = await startTestServer(scratch.url);
    issuer = server.domain.oidc.issuer;
    await registerClient(server, {
      client_id: "logout-rp",
      client_name: "Logout RP",
      client_secret: secret,
      redirect_uris: [redirectUri],
      post_logout_redirect_uris: [afterLogout],
      scope: "openid profile",
    });
    await registerClient(server, { client_id: "other-rp", client_secret: secret, redirect_uris: ["https://other.example/cb"], scope: "openid" });
    user = await createUser(server);
  });

  afterAll(async () => {
    await server?.close();
    await scratch?.drop();
  });

  /** A browser signed in through the logout-rp client, and the ID token that client got. */
  async function signedIn(): Promise<{ browser: Browser; idToken: string }> {
    const browser = new Browser(server.url);
    const code = await obtainCode(server, browser, user, { clientId: "logout-rp", redirectUri, scope: "openid profile" });
    const reply = await postToken(server, { grant_type: "authorization_code", code, redirect_uri: redirectUri }, { authorization: basicAuthorization("logout-rp", secret) });
    expect(reply.status, reply.text).toBe(200);
    return { browser, idToken: reply.json!.id_token as string };
  }

  /** True while the browser's session lets prompt=none through. */
  async function sessionAlive(browser: Browser): Promise<boolean> {
    const state = "probe";
    const reply = await browser.get(authorizeUrl({ client_id: "logout-rp", redirect_uri: redirectUri, response_type: "code", scope: "openid profile", state, prompt: "none" }));
    const params = new URL(reply.location!).searchParams;
    if (params.has("code")) return true;
    expectErrorRedirect(reply, { redirectUri, error: "login_required", issuer, state });
    return false;
  }

  function hiddenFields(body: string): Record<string, string> {
    return Object.fromEntries([...body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]));
  }

  it("is the end_session_endpoint of discovery", async () => {
    const metadata = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(metadata.end_session_endpoint).toBe(`${issuer}/auth/logout`);
  });

  it("a link alone signs nobody out: GET shows a confirmation naming the application, and the session lives on", async () => {
    const { browser, idToken } = await signedIn();
    const page = await browser.get(`/auth/logout?${new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: afterLogout, state: "s-1" })}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    // Its form ends in a redirect to the application, which the page's form-action must allow (Chromium checks redirects).
    expect(page.headers.get("content-security-policy")).toContain("form-action 'self' https://rp.example;");
    expect(page.body).toContain("<strong>Logout RP</strong> asks you to sign out.");
    expect(hiddenFields(page.body)).toEqual({ client_id: "logout-rp", post_logout_redirect_uri: afterLogout, state: "s-1", confirm: "yes", csrf: expect.stringMatching(/^[\w-]{43}$/) });
    expect(await sessionAlive(browser)).toBe(true);
  });

  it("confirming ends the session and returns to the registered post_logout_redirect_uri with state", async () => {
    const { browser, idToken } = await signedIn();
    const page = await browser.get(`/auth/logout?${new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: afterLogout, state: "s-2" })}`);
    const done = await browser.post("/auth/logout", hiddenFields(page.body));
    expect(done.status).toBe(303);
    const target = new URL(done.location!);
    expect(`${target.origin}${target.pathname}`).toBe("https://rp.example/signed-out");
    expect([...target.searchParams]).toEqual([["from", "op"], ["state", "s-2"]]);
    expect(done.headers.get("set-cookie")).toContain(`${sessionCookie}=;`);
    expect(await sessionAlive(browser)).toBe(false);
  });

  it("POST with the parameters (as RPs may send them) also asks first; without a redirect the page says signed out", async () => {
    const { browser } = await signedIn();
    const page = await browser.post("/auth/logout", { client_id: "logout-rp" });
    expect(page.status).toBe(200);
    expect(hiddenFields(page.body)).toEqual({ client_id: "logout-rp", confirm: "yes", csrf: expect.stringMatching(/^[\w-]{43}$/) });
    expect(await sessionAlive(browser)).toBe(true);
    const done = await browser.post("/auth/logout", hiddenFields(page.body));
    expect(done.status).toBe(200);
    expect(done.body).toContain("You are signed out");
    expect(await sessionAlive(browser)).toBe(false);
  });

  it("a confirmation without this session's CSRF token signs nobody out: 403 and the confirmation again", async () => {
    const { browser } = await signedIn();
    const other = await signedIn();
    const otherPage = await other.browser.get("/auth/logout?client_id=logout-rp");
    const otherToken = hiddenFields(otherPage.body).csrf!;
    for (const csrf of [undefined, "", "x".repeat(43), otherToken]) {
      const reply = await browser.post("/auth/logout", { client_id: "logout-rp", confirm: "yes", ...(csrf === undefined ? {} : { csrf }) });
      expect(reply.status).toBe(403);
      expect(reply.body).toContain("Confirm again to sign out.");
      expect(reply.headers.get("set-cookie") ?? "").not.toContain(sessionCookie);
      expect(await sessionAlive(browser)).toBe(true);
      // The page offers this session's own token, with which the user can confirm.
      expect(hiddenFields(reply.body).csrf).not.toBe(otherToken);
    }
    const page = await browser.post("/auth/logout", { client_id: "logout-rp", confirm: "yes" });
    const done = await browser.post("/auth/logout", hiddenFields(page.body));
    expect(done.status).toBe(200);
    expect(await sessionAlive(browser)).toBe(false);
    expect(await sessionAlive(other.browser)).toBe(true);
  });

  it("without a session there is nothing to confirm: straight back to the application", async () => {
    const reply = await new Browser(server.url).get(`/auth/logout?${new URLSearchParams({ client_id: "logout-rp", post_logout_redirect_uri: afterLogout, state: "s-3" })}`);
    expect(reply.status).toBe(303);
    expect(new URL(reply.location!).searchParams.get("state")).toBe("s-3");
  });

  describe("bad requests: an error page, no redirect, the session untouched", () => {
    const cases: [string, () => Promise<Record<string, string>>, string][] = [
      ["a post_logout_redirect_uri not registered", async () => ({ client_id: "logout-rp", post_logout_redirect_uri: "https://evil.example/" }), "invalid_request"],
      ["a registered URI with another query", async () => ({ client_id: "logout-rp", post_logout_redirect_uri: "https://rp.example/signed-out" }), "invalid_request"],
      ["post_logout_redirect_uri without client_id or id_token_hint", async () => ({ post_logout_redirect_uri: afterLogout }), "invalid_request"],
      ["an unknown client_id", async () => ({ client_id: "nobody" }), "invalid_client"],
      ["another client's URI", async () => ({ client_id: "other-rp", post_logout_redirect_uri: afterLogout }), "invalid_request"],
      ["a malformed id_token_hint", async () => ({ id_token_hint: "not.a.jwt" }), "invalid_request"],
      [
        "an id_token_hint signed by another key",
        async () => {
          const { privateKey, publicKey } = await generateKeyPair("ES256");
          const kid = (await exportJWK(publicKey)).x!;
          return { id_token_hint: await new SignJWT({ iss: issuer, aud: "logout-rp", sub: user.row.id }).setProtectedHeader({ alg: "ES256", kid }).sign(privateKey) };
        },
        "invalid_request",
      ],
      ["an id_token_hint with alg none", async () => ({ id_token_hint: `${Buffer.from('{"alg":"none"}').toString("base64url")}.${Buffer.from(JSON.stringify({ iss: issuer, aud: "logout-rp" })).toString("base64url")}.` }), "invalid_request"],
    ];

    it.each(cases)("%s", async (_title, params, error) => {
      const { browser } = await signedIn();
      const reply = await browser.get(`/auth/logout?${new URLSearchParams(await params())}`);
      expectErrorPage(reply, error);
      expect(await sessionAlive(browser)).toBe(true);
    });

    it("client_id that differs from the id_token_hint's audience", async () => {
      const { browser, idToken } = await signedIn();
      const reply = await browser.get(`/auth/logout?${new URLSearchParams({ id_token_hint: idToken, client_id: "other-rp" })}`);
      expectErrorPage(reply, "invalid_request");
      expect(await sessionAlive(browser)).toBe(true);
    });

    it("a repeated parameter", async () => {
      const { browser } = await signedIn();
      const reply = await browser.get(`/auth/logout?client_id=logout-rp&client_id=other-rp`);
      expectErrorPage(reply, "invalid_request");
    });
  });

  it("openid-client's buildEndSessionUrl produces a URL the endpoint accepts", async () => {
    const { browser, idToken } = await signedIn();
    const config = await client.discovery(new URL(issuer), "logout-rp", secret, undefined, { execute: [client.allowInsecureRequests] });
    const url = client.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: afterLogout, state: "lib" });
    const page = await browser.get(url.pathname + url.search);
    expect(page.status).toBe(200);
    const done = await browser.post("/auth/logout", hiddenFields(page.body));
    expect(new URL(done.location!).searchParams.get("state")).toBe("lib");
  });
});
