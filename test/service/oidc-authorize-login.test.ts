import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { OidcRepository } from "../../src/storage/oidc-repository.ts";
import type { ScratchDatabase } from "../support/databases.ts";
import { authorizeUrl, Browser, createUser, csrfOf, expectPage, expectPageHeaders, registerClient, sessionCookie, signIn } from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { sqlite, redirectUri, live, params, browser, expectError, authorizeServer, wrongOtp } from "../support/oidc-authorize-server.ts";

/**
 * The login page's protections through real HTTP requests on SQLite: CSRF, and the throttling of
 * failed sign-ins.
 */

authorizeServer();

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
