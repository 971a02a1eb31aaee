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
  postForm,
  postToken,
  registerClient,
  sessionCookie,
  submitPage,
  type TestUser,
} from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Edges found by probing the token half: bytes a database refuses, grants
 * narrowed after tokens were issued, clients removed, forged sign-outs, and
 * the discovery fields RFC 8414 ties together.
 */
const targets = await databaseTargets();
const secret = "hardening-secret-0123456789";
const redirectUri = "https://hardening.example/cb";

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let scratch: ScratchDatabase;
    let server: TestServer;
    let user: TestUser;

    beforeAll(async () => {
      scratch = await target.create();
      server = await startTestServer(scratch.url);
      await registerClient(server, { client_id: "hardening", client_secret: secret, redirect_uris: [redirectUri], scope: "openid profile email offline_access" });
      user = await createUser(server);
    });

    afterAll(async () => {
      await server?.close();
      await scratch?.drop();
    });

    const auth = (clientId = "hardening") => ({ authorization: basicAuthorization(clientId, secret) });

    async function tokensFor(browser: Browser, scope: string, clientId = "hardening"): Promise<Record<string, string>> {
      const code = await obtainCode(server, browser, user, { clientId, redirectUri, scope });
      const reply = await postToken(server, { grant_type: "authorization_code", code, redirect_uri: redirectUri }, auth(clientId));
      expect(reply.status, reply.text).toBe(200);
      return reply.json as Record<string, string>;
    }

    describe("a NUL byte anywhere is a clean 4xx, never a 5xx (PostgreSQL refuses such text)", () => {
      const forms: [string, string, Record<string, string>, Record<string, string>][] = [
        ["token, client_id in the body", "/api/oidc/v1/token", { client_id: "\u0000", grant_type: "authorization_code", code: "x", redirect_uri: redirectUri }, {}],
        ["token, client_secret_post", "/api/oidc/v1/token", { client_id: "a\u0000b", client_secret: "s", grant_type: "authorization_code" }, {}],
        ["token, Basic user", "/api/oidc/v1/token", { grant_type: "authorization_code" }, { authorization: `Basic ${Buffer.from("c\u0000:s").toString("base64")}` }],
        ["PAR", "/api/oidc/v1/par", { client_id: "\u0000", client_secret: "s" }, {}],
        ["revocation", "/api/oidc/v1/revoke", { client_id: "\u0000", client_secret: "s", token: "t" }, {}],
        ["introspection", "/api/oidc/v1/introspect", { client_id: "\u0000", client_secret: "s", token: "t" }, {}],
      ];
      it.each(forms)("%s → 401 invalid_client", async (_title, path, form, headers) => {
        const reply = await postForm(server, path, form, headers);
        expect(reply.status, reply.text).toBe(401);
        expect(reply.json?.error).toBe("invalid_client");
      });

      it("authorize and logout with client_id=%00 → 400 error page", async () => {
        const browser = new Browser(server.url);
        for (const path of [`/api/oidc/v1/authorize?client_id=%00&redirect_uri=${encodeURIComponent(redirectUri)}&response_type=code&state=s`, "/auth/logout?client_id=%00"]) {
          const reply = await browser.get(path);
          expect(reply.status, path).toBe(400);
          expect(reply.body).toContain("<code>invalid_client</code>");
        }
      });

      it("the grant API with a NUL in the grant id → 404 invalid_grant_id", async () => {
        const tokens = await tokensFor(new Browser(server.url), "openid");
        const reply = await fetch(`${server.url}/api/oidc/v1/grants/a%00b`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
        expect(reply.status).toBe(404);
        expect(((await reply.json()) as { error: string }).error).toBe("invalid_grant_id");
      });

      it("a login name with a NUL is a wrong login, not an error", async () => {
        const browser = new Browser(server.url);
        const start = await browser.get(authorizeUrl({ client_id: "hardening", redirect_uri: redirectUri, response_type: "code", scope: "openid", state: "s" }));
        const page = await browser.get(start.location!);
        const csrf = /name="csrf" value="([^"]*)"/.exec(page.body)![1]!;
        const reply = await browser.post(start.location!, { csrf, login: "a\u0000b", password: "whatever" });
        expect(reply.status).toBe(401);
        expect(reply.body).toContain("not correct");
      });
    });

    describe("a grant replaced with fewer rights ends the tokens it no longer covers", () => {
      it("the old refresh token is refused and the old access token stops; tokens of the narrowed grant work", async () => {
        const browser = new Browser(server.url);
        const wide = await tokensFor(browser, "openid profile email offline_access");
        expect((await getUserinfo(server, wide.access_token!)).status).toBe(200);

        const state = "narrow";
        const start = await browser.get(
          authorizeUrl({
            client_id: "hardening",
            redirect_uri: redirectUri,
            response_type: "code",
            scope: "openid",
            state,
            grant_management_action: "replace",
            grant_id: wide.grant_id,
          }),
        );
        // A narrower request is covered by what the user granted, so consent may be skipped.
        const answered = start.location?.startsWith("/auth/consent?") ? await submitPage(browser, start, "consent", { decision: "allow" }) : start;
        const code = expectCodeRedirect(answered, { redirectUri, issuer: server.domain.oidc.issuer, state });
        const narrow = await postToken(server, { grant_type: "authorization_code", code, redirect_uri: redirectUri }, auth());
        expect(narrow.status, narrow.text).toBe(200);
        expect(narrow.json!.grant_id).toBe(wide.grant_id);
        expect(narrow.json!.scope).toBe("openid");

        const refreshed = await postToken(server, { grant_type: "refresh_token", refresh_token: wide.refresh_token! }, auth());
        expect(refreshed.status).toBe(400);
        expect(refreshed.json!.error).toBe("invalid_grant");
        expect((await getUserinfo(server, wide.access_token!)).status).toBe(401);
        const introspected = await postForm(server, "/api/oidc/v1/introspect", { token: wide.access_token! }, auth());
        expect(introspected.json).toEqual({ active: false });
        expect((await getUserinfo(server, narrow.json!.access_token as string)).json).toEqual({
          sub: user.row.id,
          auth_time: expect.any(Number),
          acr: "low",
          amr: ["pwd"],
          sid: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
          jpki_verified: false,
        });
      });
    });

    it("removing a client revokes its grants and tokens, also if the client_id is registered again", async () => {
      await registerClient(server, { client_id: "short-lived", client_secret: secret, redirect_uris: [redirectUri], scope: "openid offline_access" });
      const tokens = await tokensFor(new Browser(server.url), "openid offline_access", "short-lived");
      expect(await server.domain.oidc.clients.delete("short-lived", Date.now())).toBe(true);
      expect((await getUserinfo(server, tokens.access_token!)).status).toBe(401);
      await registerClient(server, { client_id: "short-lived", client_secret: secret, redirect_uris: [redirectUri], scope: "openid offline_access" });
      const refreshed = await postToken(server, { grant_type: "refresh_token", refresh_token: tokens.refresh_token! }, auth("short-lived"));
      expect(refreshed.status).toBe(400);
      expect(refreshed.json!.error).toBe("invalid_grant");
      expect(await server.domain.oidc.grants.find(tokens.grant_id!)).toBeUndefined();
    });

    it("a refresh with a blank scope is invalid_scope and leaves the refresh token usable", async () => {
      const tokens = await tokensFor(new Browser(server.url), "openid offline_access");
      const blank = await postToken(server, { grant_type: "refresh_token", refresh_token: tokens.refresh_token!, scope: "  " }, auth());
      expect(blank.status).toBe(400);
      expect(blank.json!.error).toBe("invalid_scope");
      const ok = await postToken(server, { grant_type: "refresh_token", refresh_token: tokens.refresh_token! }, auth());
      expect(ok.status, ok.text).toBe(200);
    });

    it("a forged sign-out (a POST carrying no session cookie) does not clear the session cookie", async () => {
      const reply = await postForm(server, "/auth/logout", { confirm: "yes" }, { accept: "text/html" });
      expect(reply.status).toBe(200);
      expect(reply.headers.get("set-cookie") ?? "").not.toContain(sessionCookie);
    });

    it("discovery lists the signing algorithms for every endpoint that accepts private_key_jwt (RFC 8414 §2)", async () => {
      const metadata = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      for (const endpoint of ["token_endpoint", "revocation_endpoint", "introspection_endpoint"]) {
        expect(metadata[`${endpoint}_auth_methods_supported`]).toContain("private_key_jwt");
        expect(metadata[`${endpoint}_auth_signing_alg_values_supported`]).toEqual(expect.arrayContaining(["ES256", "RS256"]));
      }
    });
  });
}
