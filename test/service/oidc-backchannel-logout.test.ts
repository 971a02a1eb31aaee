import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backchannelLogoutEvent, registerLogoutRp, signInTo, verifiedLogoutToken, type LogoutRp } from "../support/backchannel-rp.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { Browser, createUser } from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { WebhookReceiver } from "../support/webhook-receiver.ts";

/**
 * OpenID Connect Back-Channel Logout 1.0 through real requests on each
 * database: relying parties on loopback verify every logout token with
 * jose against the provider's JWKS. Each way a session ends (the
 * end-session endpoint, the sign-out page, the operator's commands, expiry)
 * tells every client that was issued a code in it, one token per session
 * with its sid; another session's clients are told nothing; a failing
 * relying party is tried again; what is queued outlives the instance.
 */
const root = fileURLToPath(new URL("../..", import.meta.url));

for (const target of await databaseTargets()) {
  describe.skipIf(target.unavailable !== undefined)(`back-channel logout on ${targetTitle(target)}`, () => {
    let scratch: ScratchDatabase;
    let server: TestServer;
    let receiver: WebhookReceiver;
    let dataDir: string;

    beforeAll(async () => {
      scratch = await target.create();
      dataDir = mkdtempSync(path.join(tmpdir(), "shomei-bcl-"));
      // A short schedule, so that a retry happens within a test; a short poll, so that the CLI's queue is seen soon.
      server = await startTestServer(scratch.url, { backchannelLogoutRetrySchedule: "0,100ms,100ms", webhookPollMs: 50, webhookTimeoutMs: 2000, dataDir });
      receiver = await new WebhookReceiver().start();
    });

    afterAll(async () => {
      await server?.close();
      await receiver?.close();
      await scratch?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    function hiddenFields(body: string): Record<string, string> {
      return Object.fromEntries([...body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]));
    }

    /** Asks to sign out at /auth/logout with `query` and confirms on the page. */
    async function confirmSignOut(browser: Browser, query: Record<string, string>): Promise<number> {
      const page = await browser.get(`/auth/logout?${new URLSearchParams(query)}`);
      expect(page.status).toBe(200);
      return (await browser.post("/auth/logout", hiddenFields(page.body))).status;
    }

    /** The logout deliveries queued for a client, whatever their state. */
    function queuedFor(rp: LogoutRp) {
      return server.database.db.selectFrom("oidc_logout_deliveries").selectAll().where("client_id", "=", rp.clientId).execute();
    }

    /** The sids of the verified logout tokens the RP got, after checking each token's claims. */
    async function receivedSids(rp: LogoutRp, count: number, sub: string): Promise<string[]> {
      const requests = await receiver.waitFor(rp.path, count);
      const sids: string[] = [];
      for (const request of requests) {
        const { payload } = await verifiedLogoutToken(server, request, rp.clientId);
        expect(payload.sub).toBe(sub);
        expect(payload.events).toEqual({ [backchannelLogoutEvent]: {} });
        sids.push(payload.sid as string);
      }
      return sids.sort();
    }

    it("discovery says back-channel logout is supported, with sid", async () => {
      const metadata = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      expect(metadata.backchannel_logout_supported).toBe(true);
      expect(metadata.backchannel_logout_session_supported).toBe(true);
    });

    it("RP-initiated logout tells every client of the session, with its sid and the spec's claims; another session's clients nothing", async () => {
      const user = await createUser(server);
      const [a, b, c] = [await registerLogoutRp(server, receiver, { sessionRequired: true }), await registerLogoutRp(server, receiver), await registerLogoutRp(server, receiver)];
      const browser = new Browser(server.url);
      const atA = await signInTo(server, browser, user, a);
      const atB = await signInTo(server, browser, user, b);
      expect(atB.sid).toBe(atA.sid);
      // Another session of the same user, at c and at a.
      const other = new Browser(server.url);
      const otherAtC = await signInTo(server, other, user, c);
      await signInTo(server, other, user, a);
      expect(otherAtC.sid).not.toBe(atA.sid);

      const status = await confirmSignOut(browser, { id_token_hint: atA.idToken, post_logout_redirect_uri: `https://${a.clientId}.example/bye`, state: "s" });
      expect(status).toBe(303);

      const tokens = [];
      for (const rp of [a, b]) {
        const [request] = await receiver.waitFor(rp.path, 1);
        const { payload, header } = await verifiedLogoutToken(server, request!, rp.clientId);
        expect(header).toMatchObject({ typ: "logout+jwt", alg: "ES256", kid: expect.any(String) });
        expect(payload).toEqual({
          iss: server.domain.oidc.issuer,
          aud: rp.clientId,
          sub: user.row.id,
          sid: atA.sid,
          iat: expect.any(Number),
          exp: payload.iat! + 120,
          jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
          events: { [backchannelLogoutEvent]: {} },
        });
        expect(payload).not.toHaveProperty("nonce");
        tokens.push(payload);
      }
      expect(tokens[0]!.jti).not.toBe(tokens[1]!.jti);
      // Queued with the session's end, in its transaction: c got nothing, and a only this session's token.
      expect(await queuedFor(c)).toEqual([]);
      expect((await queuedFor(a)).map((d) => d.sid)).toEqual([atA.sid]);
    });

    it("the sign-out page tells every client of the session", async () => {
      const user = await createUser(server);
      const [a, b] = [await registerLogoutRp(server, receiver), await registerLogoutRp(server, receiver, { sessionRequired: true })];
      const browser = new Browser(server.url);
      const { sid } = await signInTo(server, browser, user, a);
      await signInTo(server, browser, user, b);
      // The home page's sign-out link: no application named.
      const home = await browser.get("/");
      expect(home.body).toContain('href="/auth/logout');
      expect(await confirmSignOut(browser, {})).toBe(200);
      expect(await receivedSids(a, 1, user.row.id)).toEqual([sid]);
      expect(await receivedSids(b, 1, user.row.id)).toEqual([sid]);
    });

    it("`shomei user sign-out` ends every session of the user: one token per session and client, each with its sid", async () => {
      const user = await createUser(server);
      const bystander = await createUser(server);
      const [a, b] = [await registerLogoutRp(server, receiver, { sessionRequired: true }), await registerLogoutRp(server, receiver)];
      const first = new Browser(server.url);
      const second = new Browser(server.url);
      const sid1 = (await signInTo(server, first, user, a)).sid;
      await signInTo(server, first, user, b);
      const sid2 = (await signInTo(server, second, user, a)).sid;
      await signInTo(server, new Browser(server.url), bystander, a);

      const run = await shomei({}, "user", "sign-out", user.login);
      expect(run.stderr).toBe("");
      expect(run).toMatchObject({ code: 0, stdout: `2 sessions of ${user.login} ended; the applications they signed in to are told by the running server\n` });

      expect(await receivedSids(a, 2, user.row.id)).toEqual([sid1, sid2].sort());
      expect(await receivedSids(b, 1, user.row.id)).toEqual([sid1]);
      expect((await queuedFor(a)).filter((d) => d.user_id === bystander.row.id)).toEqual([]);
      const unknown = await shomei({}, "user", "sign-out", "nobody-here");
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toContain("no user nobody-here");
    });

    it("a relying party that fails is tried again: 503, then 200, with the same jti", async () => {
      const user = await createUser(server);
      const a = await registerLogoutRp(server, receiver);
      receiver.answer(a.path, (n) => (n === 1 ? 503 : 200));
      const browser = new Browser(server.url);
      const { sid } = await signInTo(server, browser, user, a);
      expect(await confirmSignOut(browser, {})).toBe(200);
      const requests = await receiver.waitFor(a.path, 2);
      const [first, second] = await Promise.all(requests.map((r) => verifiedLogoutToken(server, r, a.clientId)));
      expect(first!.payload.sid).toBe(sid);
      expect(second!.payload.jti).toBe(first!.payload.jti);
      const delivered = await eventually(async () => {
        const [row] = await queuedFor(a);
        return row?.state === "delivered" ? row : undefined;
      });
      expect(delivered).toMatchObject({ attempts: 2, last_status_code: 200 });
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      for (const outcome of ["delivered", "failed"]) {
        const counted = new RegExp(`^shomei_backchannel_logout_attempts_total\\{outcome="${outcome}"\\} (\\d+)$`, "m").exec(metrics);
        expect(Number(counted?.[1]), outcome).toBeGreaterThanOrEqual(1);
      }
    });

    it("`shomei user set-password` signs the user out everywhere: the clients are told", async () => {
      const user = await createUser(server);
      const a = await registerLogoutRp(server, receiver);
      const { sid } = await signInTo(server, new Browser(server.url), user, a);
      const run = await shomei({ input: "a brand new password" }, "user", "set-password", user.login);
      expect(run).toMatchObject({ code: 0, stdout: expect.stringContaining(`password of ${user.login} replaced, 1 session ended;`) });
      expect(await receivedSids(a, 1, user.row.id)).toEqual([sid]);
    });

    it("a token queued while no loop runs is sent by the next instance to start: the outbox is in the database", async () => {
      const user = await createUser(server);
      const a = await registerLogoutRp(server, receiver);
      const browser = new Browser(server.url);
      const { sid } = await signInTo(server, browser, user, a);
      await server.domain.logoutDelivery.stop();
      try {
        expect(await confirmSignOut(browser, {})).toBe(200);
        expect(await queuedFor(a)).toMatchObject([{ sid, state: "pending", attempts: 0 }]);
        const next = await startTestServer(scratch.url, { backchannelLogoutRetrySchedule: "0,100ms,100ms", webhookPollMs: 50, webhookTimeoutMs: 2000, dataDir });
        try {
          const [request] = await receiver.waitFor(a.path, 1);
          const { payload } = await verifiedLogoutToken(next, request!, a.clientId);
          expect(payload.sid).toBe(sid);
        } finally {
          await next.close();
        }
      } finally {
        server.domain.logoutDelivery.start();
      }
    });

    it("an expired session ends at the sweep: its clients are told", async () => {
      const user = await createUser(server);
      const a = await registerLogoutRp(server, receiver);
      const { sid } = await signInTo(server, new Browser(server.url), user, a);
      await server.database.db.updateTable("oidc_sessions").set({ expires_at: Date.now() - 1000 }).where("user_id", "=", user.row.id).execute();
      await server.domain.sweeper.sweep();
      expect(await receivedSids(a, 1, user.row.id)).toEqual([sid]);
    });

    it("a client without a backchannel_logout_uri is not remembered and gets nothing", async () => {
      const user = await createUser(server);
      const quiet = await registerLogoutRp(server, receiver, { listens: false });
      const browser = new Browser(server.url);
      await signInTo(server, browser, user, quiet);
      const remembered = await server.database.db.selectFrom("oidc_session_clients").selectAll().where("client_id", "=", quiet.clientId).execute();
      expect(remembered).toEqual([]);
      expect(await confirmSignOut(browser, {})).toBe(200);
      expect(await queuedFor(quiet)).toEqual([]);
    });

    /** `node bin/shomei.js …` on this server's database and data directory. */
    function shomei(options: { input?: string }, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
      return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, ["bin/shomei.js", ...args], {
          cwd: root,
          env: { PATH: process.env.PATH ?? "", HOME: dataDir, SHOMEI_DATA_DIR: dataDir, DATABASE_URL: scratch.url, SHOMEI_MODE: "mock" },
          stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
        });
        if (options.input !== undefined) child.stdin!.end(options.input);
        let stdout = "";
        let stderr = "";
        child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
        child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
        child.on("error", reject);
        child.on("close", (code) => resolve({ code, stdout, stderr }));
      });
    }
  });
}

/** Polls until `probe` returns a value (the delivery loop records an outcome after the receiver has answered). */
async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
