import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import {
  authorizeUrl,
  basicAuthorization,
  Browser,
  createUser,
  expectCodeRedirect,
  getUserinfo,
  obtainCode,
  pkce,
  postForm,
  postPar,
  postToken,
  registerClient,
  type TestUser,
} from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { StatementCounter } from "../support/statement-counter.ts";

/**
 * The SQL statements the three hot paths of the provider execute per request
 * (the costs docs/performance.md's benchmarks measure), counted on the
 * real server's connection: a change that adds a statement to one of them
 * fails here rather than only in a benchmark.
 */

const targets = await databaseTargets();

const clientId = "count-client";
const secret = "count-client-secret-0123456789";
const redirectUri = "https://count.example/cb";

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let database: ScratchDatabase | undefined;
    let server: TestServer | undefined;
    let user: TestUser;
    let browser: Browser;

    const live = (): TestServer => {
      if (!server) throw new Error("server not started");
      return server;
    };

    /** Runs `request` with every statement on the server's connection counted. */
    async function counted<T>(request: () => Promise<T>): Promise<{ result: T; counter: StatementCounter }> {
      const counter = new StatementCounter();
      const plain = live().database.db;
      live().database.db = plain.withPlugin(counter);
      try {
        return { result: await request(), counter };
      } finally {
        live().database.db = plain;
      }
    }

    beforeAll(async () => {
      database = await target.create();
      server = await startTestServer(database.url);
      await registerClient(server, {
        client_id: clientId,
        token_endpoint_auth_method: "client_secret_basic",
        client_secret: secret,
        redirect_uris: [redirectUri],
        scope: "openid profile email offline_access",
      });
      user = await createUser(server);
      browser = new Browser(server.url);
      // Signed in, with a grant covering every scope the paths below ask for; and the provider's signing keys made, as
      // the first ID token makes them: the counts below are of a running provider, whichever test runs first.
      const code = await obtainCode(server, browser, user, { clientId, redirectUri, scope: "openid profile email offline_access" });
      const first = await postToken(server, { grant_type: "authorization_code", code, redirect_uri: redirectUri }, { authorization: basicAuthorization(clientId, secret) });
      expect(first.status, first.text).toBe(200);
    });

    afterAll(async () => {
      await server?.close();
      await database?.drop();
    });

    const authorization = { authorization: basicAuthorization(clientId, secret) };

    async function refreshToken(): Promise<string> {
      const { verifier, challenge } = pkce();
      const code = await obtainCode(live(), browser, user, { clientId, redirectUri, scope: "openid profile offline_access", codeChallenge: challenge });
      const reply = await postToken(live(), { grant_type: "authorization_code", code, redirect_uri: redirectUri, code_verifier: verifier }, authorization);
      expect(reply.status, reply.text).toBe(200);
      return reply.json!.refresh_token as string;
    }

    /** Asserts the statements a request executed: how many, how many of them write, and (in the message) which. */
    function expectStatements(counter: StatementCounter, expected: { total: number; writes: number }): void {
      expect({ total: counter.count, writes: counter.writes }, counter.statements.join(", ")).toEqual(expected);
    }

    const authorizeRequest = (state: string, extra: Record<string, string> = {}) =>
      authorizeUrl({
        client_id: clientId,
        redirect_uri: redirectUri,
        response_type: "code",
        scope: "openid profile",
        state,
        code_challenge: pkce().challenge,
        code_challenge_method: "S256",
        ...extra,
      });

    /** The user's one grant for the client, as stored. */
    async function storedGrant(): Promise<{ id: string; updated_at: number }> {
      const rows = await live().database.db.selectFrom("oidc_grants").select(["id", "updated_at"]).where("client_id", "=", clientId).execute();
      expect(rows).toHaveLength(1);
      return { id: rows[0]!.id, updated_at: Number(rows[0]!.updated_at) };
    }

    it("authorize with a session and a covering grant: 3 statements, 1 write (the code)", async () => {
      const { result: reply, counter } = await counted(() => browser.get(authorizeRequest("s1")));
      expectCodeRedirect(reply, { redirectUri, issuer: live().domain.oidc.issuer, state: "s1" });
      expect(counter.statements).toEqual(["select oidc_client_version", "select oidc_sessions", "insert one_time_records"]);
      expectStatements(counter, { total: 3, writes: 1 });
    });

    it("authorize leaves the current grant as it was when the request changes nothing in it", async () => {
      const { id } = await storedGrant();
      await live().database.db.updateTable("oidc_grants").set({ updated_at: 1 }).where("id", "=", id).execute();
      expectCodeRedirect(await browser.get(authorizeRequest("s2")), { redirectUri, issuer: live().domain.oidc.issuer, state: "s2" });
      expect(await storedGrant()).toEqual({ id, updated_at: 1 });
    });

    it("authorize naming the grant by grant_id still makes it the current grant", async () => {
      const { id } = await storedGrant();
      await live().database.db.updateTable("oidc_grants").set({ updated_at: 1 }).where("id", "=", id).execute();
      const reply = await browser.get(authorizeRequest("s3", { grant_management_action: "merge", grant_id: id }));
      expectCodeRedirect(reply, { redirectUri, issuer: live().domain.oidc.issuer, state: "s3" });
      expect((await storedGrant()).updated_at).toBeGreaterThan(1);
    });

    it("PAR with client_secret_basic: 2 statements, 1 write (the request_uri)", async () => {
      const { challenge } = pkce();
      const { result: reply, counter } = await counted(() =>
        postPar(live(), { response_type: "code", redirect_uri: redirectUri, scope: "openid profile", state: "s4", code_challenge: challenge, code_challenge_method: "S256" }, authorization),
      );
      expect(reply.status, reply.text).toBe(201);
      expect(counter.statements).toEqual(["select oidc_client_version", "insert one_time_records"]);
      expectStatements(counter, { total: 2, writes: 1 });
    });

    it("refresh_token grant with rotation: 5 statements, 2 writes (the rotation, the new tokens), and the JPKI links for jpki_verified", async () => {
      const presented = await refreshToken();
      const { result: reply, counter } = await counted(() => postToken(live(), { grant_type: "refresh_token", refresh_token: presented }, authorization));
      expect(reply.status, reply.text).toBe(200);
      expect(reply.json!.refresh_token).toMatch(/^[A-Za-z0-9_-]{51}$/);
      // The ID token's jpki_verified is asked of the JPKI side, as every issuance asks it, not carried by the token
      // store's rotation: the user's links are the JPKI side's data, read through its own port.
      expect(counter.statements).toEqual(["select oidc_client_version", "update oidc_tokens", "insert oidc_tokens", "select oidc_jpki_links", "select one_time_records"]);
      expectStatements(counter, { total: 5, writes: 2 });
    });

    it("authorization_code grant: 7 statements, 2 writes (the code, the tokens)", async () => {
      const { verifier, challenge } = pkce();
      const code = await obtainCode(live(), browser, user, { clientId, redirectUri, scope: "openid profile offline_access", codeChallenge: challenge });
      const { result: reply, counter } = await counted(() =>
        postToken(live(), { grant_type: "authorization_code", code, redirect_uri: redirectUri, code_verifier: verifier }, authorization),
      );
      expect(reply.status, reply.text).toBe(200);
      expect(reply.json!.refresh_token).toMatch(/^[A-Za-z0-9_-]{51}$/);
      expectStatements(counter, { total: 7, writes: 2 });
    });

    /** A fresh access token of the signed-in user, and its grant. */
    async function accessToken(): Promise<{ accessToken: string; grantId: string }> {
      const { verifier, challenge } = pkce();
      const code = await obtainCode(live(), browser, user, { clientId, redirectUri, scope: "openid profile", codeChallenge: challenge });
      const reply = await postToken(live(), { grant_type: "authorization_code", code, redirect_uri: redirectUri, code_verifier: verifier }, authorization);
      expect(reply.status, reply.text).toBe(200);
      return { accessToken: reply.json!.access_token as string, grantId: reply.json!.grant_id as string };
    }

    it("userinfo: 3 statements (the token with its grant, the user, the JPKI links), no write", async () => {
      const { accessToken: token } = await accessToken();
      const { result: reply, counter } = await counted(() => getUserinfo(live(), token));
      expect(reply.status).toBe(200);
      expect(reply.json.sub).toBe(user.row.id);
      expect(counter.statements).toEqual(["select oidc_tokens", "select oidc_users", "select oidc_jpki_links"]);
      expectStatements(counter, { total: 3, writes: 0 });
    });

    it("introspection: 2 statements (the client version, the token with its grant), no write", async () => {
      const { accessToken: token } = await accessToken();
      const { result: reply, counter } = await counted(() => postForm(live(), "/api/oidc/v1/introspect", { token }, authorization));
      expect(reply.json?.active).toBe(true);
      expect(counter.statements).toEqual(["select oidc_client_version", "select oidc_tokens"]);
      expectStatements(counter, { total: 2, writes: 0 });
    });

    it("grant management GET: 2 statements (the token with its grant, the grant asked for), no write", async () => {
      const { accessToken: token, grantId } = await accessToken();
      const { result: reply, counter } = await counted(() => fetch(new URL(`/api/oidc/v1/grants/${grantId}`, live().url), { headers: { authorization: `Bearer ${token}` } }));
      expect(reply.status).toBe(200);
      expect(counter.statements).toEqual(["select oidc_tokens", "select oidc_grants"]);
      expectStatements(counter, { total: 2, writes: 0 });
    });
  });
}
