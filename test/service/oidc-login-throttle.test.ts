import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { totpCode } from "../../src/domain/credentials/totp.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { challengeOf, derOf, mockCard, signChallenge } from "../support/jpki.ts";
import { authorizeUrl, Browser, createUser, csrfOf, expectPage, registerClient, signIn, type Reply, type TestUser } from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * The sign-in throttle as people meet it, over HTTP on each database: a
 * pause felt only at the address that guessed, a warning before the last
 * attempt, when to try again in Japan time, passwords and one-time codes
 * counted apart, the card still open, a reset that does not lift a pause,
 * unknown logins answered exactly as known ones, and limits shared by two
 * instances on one database. Each client address is a loopback address of
 * its own (127.0.0.2, …).
 */
const redirectUri = "https://throttle-app.example/cb";

/** The alert's words on a page, or undefined. */
function alertOf(reply: Reply): string | undefined {
  return /role="alert"[^>]*>\s*<p>([^<]*)<\/p>/.exec(reply.body)?.[1];
}

/** Six digits that are not the code of a time step near now (all of which would be accepted). */
function wrongOtp(secret: string): string {
  const now = Date.now();
  const valid = new Set([-60_000, -30_000, 0, 30_000, 60_000].map((d) => totpCode(secret, now + d)));
  return ["000000", "111111", "222222", "333333", "444444", "555555"].find((c) => !valid.has(c))!;
}

for (const target of await databaseTargets()) {
  describe.skipIf(target.unavailable !== undefined)(`sign-in throttle on ${targetTitle(target)}`, () => {
    let database: ScratchDatabase;
    let dataDir: string;
    let server: TestServer;
    let second: TestServer;
    let next = 2;
    /** A client at an address no other test uses. */
    const elsewhere = (on: TestServer = server) => new Browser(on.url, `127.0.0.${next++}`);

    beforeAll(async () => {
      database = await target.create();
      dataDir = mkdtempSync(path.join(tmpdir(), "shomei-throttle-"));
      server = await startTestServer(database.url, { dataDir });
      // A second instance on the same database: the limits are the database's, not a process's.
      second = await startTestServer(database.url, { dataDir });
      await registerClient(server, { client_id: "throttle-app", client_secret: "throttle-app-secret-0123456789", redirect_uris: [redirectUri], scope: "openid" });
    });

    afterAll(async () => {
      await second?.close();
      await server?.close();
      await database?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    const request = (extra: Record<string, string> = {}) =>
      authorizeUrl({ client_id: "throttle-app", redirect_uri: redirectUri, response_type: "code", scope: "openid", state: "s1", ...extra });

    /** The login page's path and CSRF token in browser `b`. */
    async function loginForm(b: Browser, extra: Record<string, string> = {}): Promise<{ path: string; csrf: string; body: string }> {
      const path = expectPage(await b.get(request(extra)), "login");
      const page = await b.get(path);
      return { path, csrf: csrfOf(page.body), body: page.body };
    }

    async function wrongPasswords(b: Browser, login: string, count: number, extra: Record<string, string> = {}): Promise<Reply[]> {
      const { path, csrf } = await loginForm(b, extra);
      const replies: Reply[] = [];
      for (let i = 0; i < count; i++) replies.push(await b.post(path, { csrf, login, password: `wrong-password-${i}` }));
      return replies;
    }

    it("guesses from one address pause password sign-in there only: the holder signs in from their own", async () => {
      const user = await createUser(server);
      const guesser = elsewhere();
      expect((await wrongPasswords(guesser, user.login, 5)).map((r) => r.status)).toEqual([401, 401, 401, 401, 401]);
      const { path, csrf } = await loginForm(guesser);
      expect((await guesser.post(path, { csrf, login: user.login, password: user.password })).status).toBe(429);
      const holder = elsewhere();
      const signedIn = await signIn(holder, await holder.get(request()), user.login, user.password);
      expect(signedIn.location, signedIn.body).toMatch(/^\/auth\/consent\?/);
    });

    it("warns before the last attempt and says when to try again, in Japan time, in Japanese and English", async () => {
      for (const [uiLocales, warning, paused] of [
        ["ja", "あと1回失敗すると、パスワードでのログインがしばらく止まります。", /(\d{1,2}):(\d{2}) 日本標準時以降にもう一度お試しください。マイナンバーカードを登録している場合は/],
        ["en", "One more failed attempt will pause sign-in with a password for a while.", /You can try again after (\d{1,2}):(\d{2}) [AP]M Japan Standard Time\. You can still sign in with your My Number card/],
      ] as const) {
        const user = await createUser(server);
        const b = elsewhere();
        const replies = await wrongPasswords(b, user.login, 5, { ui_locales: uiLocales });
        expect(replies.slice(0, 3).map((r) => alertOf(r)?.includes(warning))).toEqual([false, false, false]);
        expect(alertOf(replies[3]!)).toContain(warning);
        // The fifth failure starts the pause, and says until when.
        expect(alertOf(replies[4]!)).toMatch(paused);
        const { path, csrf, body } = await loginForm(b, { ui_locales: uiLocales });
        const refused = await b.post(path, { csrf, login: user.login, password: user.password });
        expect(refused.status).toBe(429);
        const retryAfter = Number(refused.headers.get("retry-after"));
        expect(retryAfter).toBeGreaterThan(14 * 60);
        expect(retryAfter).toBeLessThanOrEqual(15 * 60);
        // The time said is when Retry-After ends, in Japan, to the minute (the seconds may tip it over).
        const inJapan = new Intl.DateTimeFormat(uiLocales, { hour: "numeric", minute: "2-digit", timeZone: "Asia/Tokyo", timeZoneName: "long" });
        const end = Date.now() + retryAfter * 1000;
        expect(alertOf(refused)).toMatch(paused);
        expect([end - 60_000, end, end + 60_000].some((at) => alertOf(refused)!.includes(`${inJapan.format(at)}`))).toBe(true);
        // The card's way stays on the page.
        expect(body).toContain('id="jpki-sign-in"');
        expect(refused.body).toContain('id="jpki-sign-in"');
      }
    });

    it("an unknown login is answered exactly as a known one, failure by failure", async () => {
      const user = await createUser(server);
      const known = await wrongPasswords(elsewhere(), user.login, 6);
      const knownEnded = Date.now();
      const unknown = await wrongPasswords(elsewhere(), "no-such-person", 6);
      // Each pause runs the same length from its fifth failure; a clock time in the message and Retry-After can differ by
      // no more than the second sequence took (a minute may turn meanwhile, and a busy machine stretches the sixth reply).
      const apart = Math.ceil((Date.now() - knownEnded) / 1000);
      expect(unknown.map((r) => r.status)).toEqual(known.map((r) => r.status));
      const timeOfDay = /\d{1,2}:\d{2} [AP]M/;
      expect(unknown.map((r) => alertOf(r)?.replace(timeOfDay, "<time>"))).toEqual(known.map((r) => alertOf(r)?.replace(timeOfDay, "<time>")));
      const untilKnown = Number(known[5]!.headers.get("retry-after"));
      const untilUnknown = Number(unknown[5]!.headers.get("retry-after"));
      expect(untilKnown).toBeGreaterThan(0);
      expect(Math.abs(untilUnknown - untilKnown)).toBeLessThanOrEqual(apart + 1);
    });

    it("one-time codes are counted apart from passwords: five wrong codes pause the step-up, not password sign-in", async () => {
      const user = await createUser(server, { totp: true });
      const b = elsewhere();
      const reauth = expectPage(await signIn(b, await b.get(request({ acr_values: "high" })), user.login, user.password), "reauth");
      const csrf = csrfOf((await b.get(reauth)).body);
      const replies: Reply[] = [];
      for (let i = 0; i < 6; i++) replies.push(await b.post(reauth, { csrf, password: user.password, otp: wrongOtp(user.totpSecret!) }));
      expect(replies.map((r) => r.status)).toEqual([401, 401, 401, 401, 401, 429]);
      expect(alertOf(replies[3]!)).toContain("One more failed attempt will pause this step for a while.");
      expect(alertOf(replies[5]!)).toMatch(/^Too many failed attempts\. You can try again after \d{1,2}:\d{2} [AP]M Japan Standard Time\.$/);
      // The password was right each time: it has all its attempts, from the same address.
      const again = new Browser(server.url, b.from);
      const signedIn = await signIn(again, await again.get(request()), user.login, user.password);
      expect(signedIn.location, signedIn.body).toMatch(/^\/auth\/consent\?/);
    });

    it("while passwords are paused, the card still signs in", async () => {
      const user = await createUser(server);
      const accountId = (await server.domain.accounts.create(`throttle-cards-${next}`, "active")).id;
      const card = await mockCard(server, accountId);
      await server.domain.oidc.jpki.linkByOperator(user.row.id, derOf(card));
      const b = elsewhere();
      await wrongPasswords(b, user.login, 5);
      const { path } = await loginForm(b);
      const cardPath = path.replace("/auth/login?", "/auth/login/jpki?");
      const page = await b.get(cardPath);
      const challenge = challengeOf(page.body);
      const signedIn = await b.post(cardPath, { csrf: csrfOf(page.body), method: "jpki", challenge, certificate: card.certificatePem, signature: signChallenge(card, challenge) });
      expect(signedIn.location, signedIn.body).toMatch(/^\/auth\/consent\?/);
    });

    it("a password reset does not lift a pause in force", async () => {
      const user: TestUser = await createUser(server);
      const b = elsewhere();
      await wrongPasswords(b, user.login, 5);
      await server.domain.oidc.users.setPassword(user.row.id, "a brand new password");
      const { path, csrf } = await loginForm(b);
      expect((await b.post(path, { csrf, login: user.login, password: "a brand new password" })).status).toBe(429);
      // Elsewhere the new password works at once.
      const holder = elsewhere();
      expect((await signIn(holder, await holder.get(request()), user.login, "a brand new password")).location).toMatch(/^\/auth\/consent\?/);
    });

    it("two instances on one database share the limits", async () => {
      const user = await createUser(server);
      const address = `127.0.0.${next++}`;
      const one = new Browser(server.url, address);
      const two = new Browser(second.url, address);
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const b = i % 2 ? two : one;
        const { path, csrf } = await loginForm(b);
        statuses.push((await b.post(path, { csrf, login: user.login, password: `wrong-${i}` })).status);
      }
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    });
  });
}
