import { randomBytes } from "node:crypto";
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { noTokenChallenge } from "../../src/domain/oidc/dpop/resource-access.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import {
  authorizeUrl,
  basicAuthorization,
  Browser,
  createUser,
  expectCodeRedirect,
  expectErrorRedirect,
  expectPage,
  jsonOrUndefined,
  pkce,
  registerClient,
  signIn,
  submitPage,
  type Reply,
  type TestUser,
} from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Everything around the tokens, through real HTTP on every database target:
 * discovery metadata, the JWKS and key rotation, userinfo, RFC 7009
 * revocation, RFC 7662 introspection and the grant management API. Tokens
 * come from the real flow: authorize, login, consent, code, token endpoint.
 */

const targets = await databaseTargets();

const paths = {
  token: "/api/oidc/v1/token",
  userinfo: "/api/oidc/v1/userinfo",
  jwks: "/api/oidc/v1/jwks",
  revoke: "/api/oidc/v1/revoke",
  introspect: "/api/oidc/v1/introspect",
  grants: "/api/oidc/v1/grants",
};

type ClientKey = "app" | "other" | "pub";

interface ClientSetup {
  id: string;
  secret?: string;
  redirectUri: string;
}

const clients: Record<ClientKey, ClientSetup> = {
  app: { id: "rs-app", secret: "rs-app-secret-0123456789abcdef", redirectUri: "https://app.example/cb" },
  other: { id: "rs-other", secret: "rs-other-secret-0123456789abcdef", redirectUri: "https://other.example/cb" },
  pub: { id: "rs-public", redirectUri: "https://public.example/cb" },
};

const paymentDetails = [
  {
    type: "payment_initiation",
    actions: ["initiate", "status"],
    locations: ["https://bank.example/payments"],
    instructedAmount: { currency: "EUR", amount: "123.50" },
    creditorName: "Merchant A",
    creditorAccount: { iban: "DE02100100109307118603" },
  },
];

/** A standing permission (not one-off): an approval of it is remembered. */
const accountDetails = [{ type: "account_information", actions: ["list_accounts", "read_balances"], locations: ["https://bank.example/accounts"] }];

/** One answer of a JSON endpoint: status, headers, raw text and the parsed body when it is JSON. */
interface JsonReply {
  status: number;
  headers: Headers;
  text: string;
  json: Record<string, unknown> | undefined;
}

/** What the token endpoint answered for a code. */
interface Issued {
  access: string;
  refresh: string | undefined;
  idToken: string | undefined;
  grantId: string;
  body: Record<string, unknown>;
}

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let database: ScratchDatabase | undefined;
    let server: TestServer | undefined;
    let issuer: string;

    const live = (): TestServer => {
      if (!server) throw new Error("server not started");
      return server;
    };

    async function call(
      method: string,
      path: string,
      options: { headers?: Record<string, string>; form?: Record<string, string | undefined> } = {},
    ): Promise<JsonReply> {
      const headers: Record<string, string> = { accept: "application/json", ...options.headers };
      let body: string | undefined;
      if (options.form) {
        const form = new URLSearchParams();
        for (const [name, value] of Object.entries(options.form)) if (value !== undefined) form.append(name, value);
        body = form.toString();
        headers["content-type"] = "application/x-www-form-urlencoded";
      }
      const response = await fetch(new URL(path, live().url), { method, redirect: "manual", headers, ...(body !== undefined ? { body } : {}) });
      const text = await response.text();
      return { status: response.status, headers: response.headers, text, json: jsonOrUndefined(text) };
    }

    /** The client's credentials: an Authorization header for confidential clients, client_id in the form for the public one. */
    function credentials(client: ClientKey): { headers: Record<string, string>; form: Record<string, string> } {
      const c = clients[client];
      return c.secret ? { headers: { authorization: basicAuthorization(c.id, c.secret) }, form: {} } : { headers: {}, form: { client_id: c.id } };
    }

    /** POSTs a form to a client-authenticated endpoint as `client` (no credentials when `client` is undefined). */
    function asClient(path: string, client: ClientKey | undefined, form: Record<string, string | undefined>): Promise<JsonReply> {
      if (!client) return call("POST", path, { form });
      const auth = credentials(client);
      return call("POST", path, { headers: auth.headers, form: { ...auth.form, ...form } });
    }

    const revoke = (client: ClientKey | undefined, form: Record<string, string | undefined>) => asClient(paths.revoke, client, form);
    const introspect = (client: ClientKey | undefined, form: Record<string, string | undefined>) => asClient(paths.introspect, client, form);
    const refresh = (client: ClientKey, refreshToken: string) => asClient(paths.token, client, { grant_type: "refresh_token", refresh_token: refreshToken });

    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    const userinfo = (token: string, method: "GET" | "POST" = "GET") => call(method, paths.userinfo, { headers: bearer(token) });

    /**
     * Drives the authorization flow in `browser` up to the redirect with the
     * code: signs in when the login page comes and allows on the consent page
     * when it comes. Returns the code and whether consent was asked.
     */
    async function authorize(
      browser: Browser,
      user: TestUser,
      client: ClientKey,
      request: { scope: string; verifierChallenge: string; nonce?: string; authorizationDetails?: unknown[] },
    ): Promise<{ code: string; consentShown: boolean }> {
      const state = `st-${randomBytes(6).toString("hex")}`;
      let reply: Reply = await browser.get(
        authorizeUrl({
          client_id: clients[client].id,
          redirect_uri: clients[client].redirectUri,
          response_type: "code",
          scope: request.scope,
          state,
          nonce: request.nonce,
          code_challenge: request.verifierChallenge,
          code_challenge_method: "S256",
          authorization_details: request.authorizationDetails ? JSON.stringify(request.authorizationDetails) : undefined,
        }),
      );
      if (reply.location?.startsWith("/auth/login?")) reply = await signIn(browser, reply, user.login, user.password);
      const consentShown = reply.location?.startsWith("/auth/consent?") ?? false;
      if (consentShown) reply = await submitPage(browser, reply, "consent", { decision: "allow" });
      return { code: expectCodeRedirect(reply, { redirectUri: clients[client].redirectUri, issuer, state }), consentShown };
    }

    /** Exchanges a code at the token endpoint (client_secret_basic, or client_id for the public client); asserts success. */
    async function exchange(client: ClientKey, code: string, verifier: string): Promise<Issued> {
      const reply = await asClient(paths.token, client, {
        grant_type: "authorization_code",
        code,
        redirect_uri: clients[client].redirectUri,
        code_verifier: verifier,
      });
      expect(reply.status, reply.text).toBe(200);
      const body = reply.json!;
      expect(body.token_type).toBe("Bearer");
      expect(body.access_token).toEqual(expect.any(String));
      expect(body.grant_id).toEqual(expect.any(String));
      return {
        access: body.access_token as string,
        refresh: body.refresh_token as string | undefined,
        idToken: body.id_token as string | undefined,
        grantId: body.grant_id as string,
        body,
      };
    }

    /** A whole flow in a new browser (or the one given) for a user (a new one unless given): the tokens. */
    async function tokensFor(
      client: ClientKey,
      scope: string,
      options: { user?: TestUser; browser?: Browser; authorizationDetails?: unknown[] } = {},
    ): Promise<Issued & { user: TestUser; browser: Browser; consentShown: boolean }> {
      const user = options.user ?? (await createUser(live()));
      const browser = options.browser ?? new Browser(live().url);
      const { verifier, challenge } = pkce();
      const { code, consentShown } = await authorize(browser, user, client, {
        scope,
        verifierChallenge: challenge,
        nonce: `n-${randomBytes(4).toString("hex")}`,
        ...(options.authorizationDetails ? { authorizationDetails: options.authorizationDetails } : {}),
      });
      return { ...(await exchange(client, code, verifier)), user, browser, consentShown };
    }

    async function fetchJwks(): Promise<JSONWebKeySet> {
      const reply = await call("GET", paths.jwks);
      expect(reply.status, reply.text).toBe(200);
      return reply.json as unknown as JSONWebKeySet;
    }

    function expectInvalidClient(reply: JsonReply): void {
      expect(reply.status, reply.text).toBe(401);
      expect(reply.json?.error).toBe("invalid_client");
      expect(reply.headers.get("www-authenticate")).toMatch(/^Basic realm="shomei"/);
      expect(reply.headers.get("cache-control")).toBe("no-store");
    }

    function expectOAuthError(reply: JsonReply, status: number, error: string): void {
      expect(reply.status, reply.text).toBe(status);
      expect(reply.json?.error, reply.text).toBe(error);
      expect(reply.json?.error_description).toMatch(/\S/);
    }

    /** 401 with an RFC 6750 challenge naming invalid_token. */
    function expectInvalidToken(reply: JsonReply): void {
      expect(reply.status, reply.text).toBe(401);
      expect(reply.headers.get("www-authenticate")).toMatch(/^Bearer realm="shomei", error="invalid_token"/);
      expect(reply.json?.error).toBe("invalid_token");
      expect(reply.json).not.toHaveProperty("sub");
    }

    /** Exactly `{"active":false}`: nothing else about the token leaks. */
    function expectInactive(reply: JsonReply): void {
      expect(reply.status, reply.text).toBe(200);
      expect(reply.headers.get("content-type")).toMatch(/^application\/json/);
      expect(reply.text).toBe('{"active":false}');
    }

    beforeAll(async () => {
      database = await target.create();
      server = await startTestServer(database.url);
      issuer = server.domain.oidc.issuer;
      await registerClient(server, {
        client_id: clients.app.id,
        client_name: "Resource App",
        token_endpoint_auth_method: "client_secret_basic",
        client_secret: clients.app.secret,
        redirect_uris: [clients.app.redirectUri],
        scope: "openid profile email offline_access",
        authorization_details_types: ["payment_initiation", "account_information"],
      });
      await registerClient(server, {
        client_id: clients.other.id,
        client_name: "Other App",
        token_endpoint_auth_method: "client_secret_basic",
        client_secret: clients.other.secret,
        redirect_uris: [clients.other.redirectUri],
        scope: "openid profile email offline_access",
      });
      await registerClient(server, {
        client_id: clients.pub.id,
        client_name: "Public App",
        token_endpoint_auth_method: "none",
        redirect_uris: [clients.pub.redirectUri],
        scope: "openid offline_access",
      });
    });

    afterAll(async () => {
      await server?.close();
      await database?.drop();
    });

    describe("discovery", () => {
      const documents = ["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"];

      it.each(documents)("%s describes the provider", async (document) => {
        const s = live();
        const reply = await call("GET", document);
        expect(reply.status, reply.text).toBe(200);
        expect(reply.headers.get("content-type")).toMatch(/^application\/json/);
        const m = reply.json!;
        // The base URL is derived from the bound port (the test server listens on port 0).
        const base = s.config.baseUrl;
        expect(base).toBe(`http://localhost:${s.port}`);
        expect(m.issuer).toBe(base);
        expect(m.issuer).toBe(issuer);
        expect(m.authorization_endpoint).toBe(`${base}/api/oidc/v1/authorize`);
        expect(m.token_endpoint).toBe(`${base}${paths.token}`);
        expect(m.userinfo_endpoint).toBe(`${base}${paths.userinfo}`);
        expect(m.jwks_uri).toBe(`${base}${paths.jwks}`);
        expect(m.pushed_authorization_request_endpoint).toBe(`${base}/api/oidc/v1/par`);
        expect(m.revocation_endpoint).toBe(`${base}${paths.revoke}`);
        expect(m.introspection_endpoint).toBe(`${base}${paths.introspect}`);
        expect(m.grant_management_endpoint).toBe(`${base}${paths.grants}`);
        expect(m.response_types_supported).toEqual(["code"]);
        expect(m.response_modes_supported).toEqual(["query"]);
        expect(m.grant_types_supported).toEqual(["authorization_code", "refresh_token", "client_credentials"]);
        expect(m.code_challenge_methods_supported).toEqual(["S256"]);
        expect(m.id_token_signing_alg_values_supported).toEqual(["ES256", "RS256"]);
        expect(m.subject_types_supported).toEqual(["public"]);
        expect([...(m.token_endpoint_auth_methods_supported as string[])].sort()).toEqual(
          ["client_secret_basic", "client_secret_post", "none", "private_key_jwt"],
        );
        // Revocation and introspection are for clients that authenticate: never "none".
        for (const field of ["revocation_endpoint_auth_methods_supported", "introspection_endpoint_auth_methods_supported"]) {
          expect([...(m[field] as string[])].sort(), field).toEqual(["client_secret_basic", "client_secret_post", "private_key_jwt"]);
        }
        expect(m.authorization_response_iss_parameter_supported).toBe(true);
        expect(m.acr_values_supported).toEqual(["low", "high", "very_high"]);

        expect(m.scopes_supported).toEqual(expect.arrayContaining(["openid", "profile", "email", "offline_access"]));
        expect(m.claims_supported).toEqual(expect.arrayContaining(["sub", "name", "preferred_username", "email"]));
        expect(m.prompt_values_supported).toEqual(expect.arrayContaining(["none", "login", "consent"]));
        expect(m.authorization_details_types_supported).toEqual(expect.arrayContaining(["payment_initiation"]));
        expect([...(m.grant_management_actions_supported as string[])].sort()).toEqual(["create", "merge", "replace"]);
        expect(m.grant_management_action_required).toBe(false);
        expect(m.require_pushed_authorization_requests).toBe(false);
      });

      it("both documents are the same", async () => {
        const [a, b] = await Promise.all(documents.map((d) => call("GET", d)));
        expect(a!.json).toEqual(b!.json);
      });

      it("every endpoint is an absolute URL under the issuer and answers on this server", async () => {
        const m = (await call("GET", documents[0]!)).json!;
        const fields = [
          "authorization_endpoint",
          "token_endpoint",
          "userinfo_endpoint",
          "jwks_uri",
          "pushed_authorization_request_endpoint",
          "revocation_endpoint",
          "introspection_endpoint",
          "grant_management_endpoint",
          "end_session_endpoint",
        ];
        const urls: Record<string, string> = {};
        for (const field of fields) {
          const value = m[field];
          expect(typeof value, field).toBe("string");
          expect(URL.canParse(value as string), field).toBe(true);
          expect((value as string).startsWith(`${issuer}/`), `${field} = ${String(value)}`).toBe(true);
          urls[field] = value as string;
        }
        // Each is called the way clients call it; what it answers is its own refusal of an empty request, never 404.
        const answer = async (method: string, url: string, form?: Record<string, string>) => {
          const reply = await call(method, url, form ? { form } : {});
          expect(reply.status, `${method} ${url}: ${reply.text}`).not.toBe(404);
          return reply.status;
        };
        const authorization = await fetch(urls.authorization_endpoint!, { redirect: "manual" });
        expect(authorization.status).toBe(400);
        expect(await authorization.text()).toContain("<code>invalid_request</code>");
        expect(await answer("POST", urls.token_endpoint!, { grant_type: "authorization_code" })).toBe(401);
        expect(await answer("GET", urls.userinfo_endpoint!)).toBe(401);
        expect(await answer("POST", urls.userinfo_endpoint!)).toBe(401);
        expect(await answer("GET", urls.jwks_uri!)).toBe(200);
        expect(await answer("POST", urls.pushed_authorization_request_endpoint!, { response_type: "code" })).toBe(401);
        expect(await answer("POST", urls.revocation_endpoint!, { token: "x" })).toBe(401);
        expect(await answer("POST", urls.introspection_endpoint!, { token: "x" })).toBe(401);
        expect(await answer("GET", `${urls.grant_management_endpoint!}/some-grant`)).toBe(401);
        expect(await answer("DELETE", `${urls.grant_management_endpoint!}/some-grant`)).toBe(401);
        await answer("GET", urls.end_session_endpoint!);
        // A path the provider does not serve is a 404 here, so the checks above tell something.
        expect((await call("GET", "/api/oidc/v1/no-such-endpoint")).status).toBe(404);
      });

      it("authorization_details_types_supported follows the registered clients", async () => {
        const type = `tax_return_${randomBytes(4).toString("hex")}`;
        for (const document of documents) {
          expect((await call("GET", document)).json!.authorization_details_types_supported).not.toContain(type);
        }
        await registerClient(live(), {
          client_id: `rs-typed-${randomBytes(4).toString("hex")}`,
          client_secret: "rs-typed-secret-0123456789abcdef",
          redirect_uris: ["https://typed.example/cb"],
          scope: "openid",
          authorization_details_types: [type, "payment_initiation"],
        });
        for (const document of documents) {
          const types = (await call("GET", document)).json!.authorization_details_types_supported as string[];
          expect(types).toContain(type);
          expect(types).toContain("payment_initiation");
          // Each type once, in order.
          expect(types).toEqual([...new Set(types)].sort());
        }
      });
    });

    describe("JWKS", () => {
      it("publishes public members only, with kid, alg and use", async () => {
        const reply = await call("GET", paths.jwks);
        expect(reply.status).toBe(200);
        expect(reply.headers.get("content-type")).toMatch(/^application\/jwk-set\+json/);
        const keys = (reply.json as unknown as JSONWebKeySet).keys;
        expect(new Set(keys.map((k) => k.alg))).toEqual(new Set(["ES256", "RS256"]));
        for (const key of keys) {
          if (key.alg === "ES256") {
            expect(Object.keys(key).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x", "y"]);
            expect(key).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig", kid: expect.stringMatching(/\S/) });
          } else {
            expect(Object.keys(key).sort()).toEqual(["alg", "e", "kid", "kty", "n", "use"]);
            expect(key).toMatchObject({ kty: "RSA", e: "AQAB", alg: "RS256", use: "sig", kid: expect.stringMatching(/\S/) });
          }
          expect(key).not.toHaveProperty("d");
        }
        expect(reply.text).not.toMatch(/"d"\s*:/);
        expect(new Set(keys.map((k) => k.kid)).size).toBe(keys.length);
      });

      it("the ID token's kid is published and the token verifies against the JWKS", async () => {
        const issued = await tokensFor("app", "openid");
        const header = decodeProtectedHeader(issued.idToken!);
        expect(header.alg).toBe("ES256");
        const jwks = await fetchJwks();
        expect(jwks.keys.map((k) => k.kid)).toContain(header.kid);
        const { payload } = await jwtVerify(issued.idToken!, createLocalJWKSet(jwks), { issuer, audience: clients.app.id });
        expect(payload.sub).toBe(issued.user.row.id);
      });

      it("after rotate() new ID tokens carry the new kid and the old kid stays published", async () => {
        const s = live();
        const before = await tokensFor("app", "openid");
        const oldKid = decodeProtectedHeader(before.idToken!).kid!;
        expect((await fetchJwks()).keys.map((k) => k.kid)).toContain(oldKid);

        const rotated = await s.domain.oidc.signingKeys.rotate("ES256");
        expect(rotated.newKid).not.toBe(oldKid);
        expect(rotated.retiredKid).toBe(oldKid);

        const after = await tokensFor("app", "openid");
        expect(decodeProtectedHeader(after.idToken!).kid).toBe(rotated.newKid);

        const jwks = await fetchJwks();
        const kids = jwks.keys.map((k) => k.kid);
        expect(kids).toContain(oldKid);
        expect(kids).toContain(rotated.newKid);
        const keySet = createLocalJWKSet(jwks);
        const old = await jwtVerify(before.idToken!, keySet, { issuer, audience: clients.app.id });
        expect(old.protectedHeader.kid).toBe(oldKid);
        expect(old.payload.sub).toBe(before.user.row.id);
        const fresh = await jwtVerify(after.idToken!, keySet, { issuer, audience: clients.app.id });
        expect(fresh.payload.sub).toBe(after.user.row.id);

        // The old token, verified against only the new key, fails: the old key is what makes it verify.
        const onlyNew = createLocalJWKSet({ keys: jwks.keys.filter((k) => k.kid === rotated.newKid) });
        await expect(jwtVerify(before.idToken!, onlyNew, { issuer, audience: clients.app.id })).rejects.toThrow();
      });
    });

    describe("userinfo", () => {
      it.each(["GET", "POST"] as const)("%s without a token → 401 with bare Bearer and DPoP challenges", async (method) => {
        const reply = await call(method, paths.userinfo);
        expect(reply.status, reply.text).toBe(401);
        expect(reply.headers.get("www-authenticate")).toBe(noTokenChallenge);
        expect(reply.headers.get("cache-control")).toBe("no-store");
      });

      it.each(["GET", "POST"] as const)("%s with a malformed or unknown token → 401 invalid_token", async (method) => {
        for (const authorization of ["Bearer a b", "Bearer !!!", `Bearer ${randomBytes(32).toString("base64url")}`]) {
          const reply = await call(method, paths.userinfo, { headers: { authorization } });
          expectInvalidToken(reply);
        }
      });

      it.each(["GET", "POST"] as const)("%s with another scheme or an empty Bearer or DPoP → 401 with the bare challenges, as without a token (RFC 6750 §3.1)", async (method) => {
        for (const authorization of ["Bearer", "Bearer ", `Basic ${Buffer.from("a:b").toString("base64")}`, "DPoP", "DPoP "]) {
          const reply = await call(method, paths.userinfo, { headers: { authorization } });
          expect(reply.status, authorization).toBe(401);
          expect(reply.headers.get("www-authenticate")).toBe(noTokenChallenge);
        }
      });

      it.each(["GET", "POST"] as const)("%s: claims follow the granted scopes; sub, auth_time, acr, amr and sid are the ID token's", async (method) => {
        const cases: Array<[string, (user: TestUser) => Record<string, unknown>]> = [
          ["openid", () => ({})],
          ["openid profile", (u) => ({ name: "Test User", preferred_username: u.login })],
          ["openid email", (u) => ({ email: `${u.login}@example.com`, email_verified: false })],
          ["openid profile email", (u) => ({ name: "Test User", preferred_username: u.login, email: `${u.login}@example.com`, email_verified: false })],
        ];
        for (const [scope, claims] of cases) {
          const issued = await tokensFor("app", scope);
          expect(issued.body.scope).toBe(scope);
          const reply = await userinfo(issued.access, method);
          expect(reply.status, reply.text).toBe(200);
          expect(reply.headers.get("cache-control")).toBe("no-store");
          const { sub, auth_time, acr, amr, sid, jpki_verified } = decodeJwt(issued.idToken!);
          expect(jpki_verified).toBe(false);
          expect(amr).toEqual(["pwd"]);
          expect(sub).toBe(issued.user.row.id);
          // The authentication the token stems from is always there, the same as in the ID token.
          expect(sid).toMatch(/^[A-Za-z0-9_-]{43}$/);
          expect(reply.json, scope).toEqual({ sub, auth_time, acr, amr, sid, jpki_verified, ...claims(issued.user) });
          expect(acr).toBe("low");
        }
      });

      it("a refresh token is not an access token → 401 invalid_token", async () => {
        const issued = await tokensFor("app", "openid offline_access");
        expect(issued.refresh).toEqual(expect.any(String));
        expectInvalidToken(await userinfo(issued.refresh!));
        expectInvalidToken(await userinfo(issued.refresh!, "POST"));
        // The access token of the same response works.
        expect((await userinfo(issued.access)).status).toBe(200);
      });

      it("an access token revoked at /revoke stops working at once", async () => {
        const issued = await tokensFor("app", "openid profile");
        expect((await userinfo(issued.access)).status).toBe(200);
        expect((await revoke("app", { token: issued.access })).status).toBe(200);
        expectInvalidToken(await userinfo(issued.access));
        expectInvalidToken(await userinfo(issued.access, "POST"));
      });
    });

    describe("revocation (RFC 7009)", () => {
      it("requires client authentication", async () => {
        const issued = await tokensFor("app", "openid");
        expectInvalidClient(await revoke(undefined, { token: issued.access }));
        expectInvalidClient(
          await call("POST", paths.revoke, {
            headers: { authorization: basicAuthorization(clients.app.id, "wrong-secret-0123456789abcdef") },
            form: { token: issued.access },
          }),
        );
        // The public client cannot revoke either.
        expectInvalidClient(await revoke("pub", { token: issued.access }));
        // None of these touched the token.
        expect((await userinfo(issued.access)).status).toBe(200);
      });

      it("a missing or empty token → 400 invalid_request", async () => {
        for (const form of [{}, { token: "" }, { token_type_hint: "access_token" }]) {
          const reply = await revoke("app", form);
          expectOAuthError(reply, 400, "invalid_request");
          expect(reply.headers.get("cache-control")).toBe("no-store");
        }
      });

      it("revoking an access token → 200; userinfo and introspection then refuse it, the refresh token lives on", async () => {
        const issued = await tokensFor("app", "openid offline_access");
        const reply = await revoke("app", { token: issued.access });
        expect(reply.status, reply.text).toBe(200);
        expect(reply.text).toBe("");
        expectInvalidToken(await userinfo(issued.access));
        expectInactive(await introspect("app", { token: issued.access }));
        // Revoking it again is still 200.
        expect((await revoke("app", { token: issued.access })).status).toBe(200);
        // Only that token was revoked.
        expect((await introspect("app", { token: issued.refresh! })).json?.active).toBe(true);
        const refreshed = await refresh("app", issued.refresh!);
        expect(refreshed.status, refreshed.text).toBe(200);
        expect((await userinfo(refreshed.json!.access_token as string)).status).toBe(200);
      });

      it("revoking a refresh token → 200; it no longer refreshes and the access tokens of its family stop working", async () => {
        const issued = await tokensFor("app", "openid offline_access");
        // One rotation first, so the family holds two access tokens and a consumed refresh token.
        const rotated = await refresh("app", issued.refresh!);
        expect(rotated.status, rotated.text).toBe(200);
        const secondAccess = rotated.json!.access_token as string;
        const secondRefresh = rotated.json!.refresh_token as string;
        expect((await userinfo(issued.access)).status).toBe(200);
        expect((await userinfo(secondAccess)).status).toBe(200);

        const reply = await revoke("app", { token: secondRefresh });
        expect(reply.status, reply.text).toBe(200);
        expect(reply.text).toBe("");
        expectOAuthError(await refresh("app", secondRefresh), 400, "invalid_grant");
        expectInvalidToken(await userinfo(issued.access));
        expectInvalidToken(await userinfo(secondAccess));
        expectInactive(await introspect("app", { token: secondRefresh }));
        expectInactive(await introspect("app", { token: secondAccess }));
      });

      it("an unknown token → 200", async () => {
        const reply = await revoke("app", { token: randomBytes(32).toString("base64url") });
        expect(reply.status, reply.text).toBe(200);
        expect(reply.text).toBe("");
      });

      it("another client's tokens → 200, and they keep working", async () => {
        const theirs = await tokensFor("other", "openid offline_access");
        expect((await revoke("app", { token: theirs.access })).status).toBe(200);
        expect((await revoke("app", { token: theirs.refresh!, token_type_hint: "refresh_token" })).status).toBe(200);
        expect((await userinfo(theirs.access)).status).toBe(200);
        expect((await introspect("other", { token: theirs.access })).json?.active).toBe(true);
        expect((await introspect("other", { token: theirs.refresh! })).json?.active).toBe(true);
        const refreshed = await refresh("other", theirs.refresh!);
        expect(refreshed.status, refreshed.text).toBe(200);
      });

      it("token_type_hint is accepted, matching or not", async () => {
        const a = await tokensFor("app", "openid offline_access");
        expect((await revoke("app", { token: a.access, token_type_hint: "access_token" })).status).toBe(200);
        expectInvalidToken(await userinfo(a.access));
        expect((await revoke("app", { token: a.refresh!, token_type_hint: "refresh_token" })).status).toBe(200);
        expectOAuthError(await refresh("app", a.refresh!), 400, "invalid_grant");

        // A hint naming the other type does not stop the server from finding the token (RFC 7009 §2.1).
        const b = await tokensFor("app", "openid offline_access");
        expect((await revoke("app", { token: b.access, token_type_hint: "refresh_token" })).status).toBe(200);
        expectInvalidToken(await userinfo(b.access));
        expect((await revoke("app", { token: b.refresh!, token_type_hint: "access_token" })).status).toBe(200);
        expectOAuthError(await refresh("app", b.refresh!), 400, "invalid_grant");
      });
    });

    describe("introspection (RFC 7662)", () => {
      it("an active access token: every member, matching the token response", async () => {
        const before = Math.floor(Date.now() / 1000);
        const issued = await tokensFor("app", "openid profile");
        const after = Math.floor(Date.now() / 1000);
        const reply = await introspect("app", { token: issued.access });
        expect(reply.status, reply.text).toBe(200);
        expect(reply.headers.get("cache-control")).toBe("no-store");
        const body = reply.json!;
        expect(body).toEqual({
          active: true,
          token_type: "Bearer",
          client_id: clients.app.id,
          sub: issued.user.row.id,
          scope: "openid profile",
          exp: expect.any(Number),
          iat: expect.any(Number),
          iss: issuer,
          grant_id: issued.grantId,
        });
        expect(body.iat as number).toBeGreaterThanOrEqual(before);
        expect(body.iat as number).toBeLessThanOrEqual(after);
        expect((body.exp as number) - (body.iat as number)).toBe(issued.body.expires_in);
        expect(body.sub).toBe(decodeJwt(issued.idToken!).sub);
      });

      it("a refresh token → active, without token_type (RFC 7662: the RFC 6749 type, which only access tokens have); once rotated it is inactive", async () => {
        const issued = await tokensFor("app", "openid offline_access");
        const reply = await introspect("app", { token: issued.refresh!, token_type_hint: "refresh_token" });
        expect(reply.status, reply.text).toBe(200);
        expect(reply.json).toEqual({
          active: true,
          client_id: clients.app.id,
          sub: issued.user.row.id,
          scope: "openid offline_access",
          exp: expect.any(Number),
          iat: expect.any(Number),
          iss: issuer,
          grant_id: issued.grantId,
        });
        // Refresh tokens outlive access tokens.
        const access = (await introspect("app", { token: issued.access })).json!;
        expect((reply.json!.exp as number) - (reply.json!.iat as number)).toBeGreaterThan((access.exp as number) - (access.iat as number));

        expect((await refresh("app", issued.refresh!)).status).toBe(200);
        expectInactive(await introspect("app", { token: issued.refresh! }));
      });

      it("revoked, unknown and another client's tokens → exactly {\"active\":false}", async () => {
        const mine = await tokensFor("app", "openid offline_access");
        const theirs = await tokensFor("other", "openid offline_access");
        expect((await revoke("app", { token: mine.access })).status).toBe(200);
        expectInactive(await introspect("app", { token: mine.access }));
        expectInactive(await introspect("app", { token: randomBytes(32).toString("base64url") }));
        expectInactive(await introspect("app", { token: "not a token at all" }));
        expectInactive(await introspect("app", { token: theirs.access }));
        expectInactive(await introspect("app", { token: theirs.refresh! }));
        // To their own client they are active.
        expect((await introspect("other", { token: theirs.access })).json?.active).toBe(true);
      });

      it("requires client authentication; a public client is refused", async () => {
        const issued = await tokensFor("pub", "openid offline_access");
        expect(issued.refresh).toEqual(expect.any(String));
        expectInvalidClient(await introspect(undefined, { token: issued.access }));
        expectInvalidClient(await introspect("pub", { token: issued.access }));
        expectInvalidClient(await introspect("pub", { token: issued.refresh! }));
        expectInvalidClient(
          await call("POST", paths.introspect, {
            headers: { authorization: basicAuthorization(clients.app.id, "wrong-secret-0123456789abcdef") },
            form: { token: issued.access },
          }),
        );
        // The public client's token itself is fine.
        expect((await userinfo(issued.access)).status).toBe(200);
      });

      it("a missing token → 400 invalid_request", async () => {
        expectOAuthError(await introspect("app", {}), 400, "invalid_request");
        expectOAuthError(await introspect("app", { token: "" }), 400, "invalid_request");
      });
    });

    describe("grant management API", () => {
      const grantPath = (grantId: string) => `${paths.grants}/${encodeURIComponent(grantId)}`;
      const getGrant = (grantId: string, token?: string) => call("GET", grantPath(grantId), token ? { headers: bearer(token) } : {});
      const deleteGrant = (grantId: string, token?: string) => call("DELETE", grantPath(grantId), token ? { headers: bearer(token) } : {});

      it("GET returns the grant's scopes and authorization_details, as the token response and introspection say", async () => {
        const issued = await tokensFor("app", "openid offline_access", { authorizationDetails: paymentDetails });
        expect(issued.consentShown).toBe(true);
        expect(issued.body.authorization_details).toEqual(paymentDetails);
        expect(issued.grantId).toMatch(/^[A-Za-z0-9_-]{20,}$/);

        const reply = await getGrant(issued.grantId, issued.access);
        expect(reply.status, reply.text).toBe(200);
        expect(reply.headers.get("cache-control")).toBe("no-store");
        expect(reply.json).toEqual({ scopes: [{ scope: "openid offline_access" }], authorization_details: paymentDetails });

        const introspected = (await introspect("app", { token: issued.access })).json!;
        expect(introspected.grant_id).toBe(issued.grantId);
        expect(introspected.authorization_details).toEqual(paymentDetails);
        // The refresh token's family carries the same grant and details.
        const refreshed = await refresh("app", issued.refresh!);
        expect(refreshed.json).toMatchObject({ grant_id: issued.grantId, authorization_details: paymentDetails });
      });

      it("a grant without authorization_details has none in the answer", async () => {
        const issued = await tokensFor("app", "openid profile");
        expect(issued.body).not.toHaveProperty("authorization_details");
        const reply = await getGrant(issued.grantId, issued.access);
        expect(reply.status, reply.text).toBe(200);
        expect(reply.json).toEqual({ scopes: [{ scope: "openid profile" }] });
      });

      it("no token → 401; another client's token or an unknown grant → 404", async () => {
        const mine = await tokensFor("app", "openid", { authorizationDetails: paymentDetails });
        const theirs = await tokensFor("other", "openid");

        for (const reply of [await getGrant(mine.grantId), await deleteGrant(mine.grantId)]) {
          expect(reply.status, reply.text).toBe(401);
          expect(reply.headers.get("www-authenticate")).toBe(noTokenChallenge);
        }
        expectInvalidToken(await getGrant(mine.grantId, randomBytes(32).toString("base64url")));

        for (const reply of [await getGrant(mine.grantId, theirs.access), await deleteGrant(mine.grantId, theirs.access)]) {
          expect(reply.status, reply.text).toBe(404);
          expect(reply.json).toMatchObject({ error: "invalid_grant_id" });
          expect(reply.text).not.toContain("payment_initiation");
        }
        // The other client's own grant is visible to it.
        expect((await getGrant(theirs.grantId, theirs.access)).status).toBe(200);
        expect((await getGrant(theirs.grantId, mine.access)).status).toBe(404);
        expect((await getGrant(`unknown-${randomBytes(8).toString("hex")}`, mine.access)).status).toBe(404);
        // The refused DELETE changed nothing.
        expect((await getGrant(mine.grantId, mine.access)).json).toMatchObject({ authorization_details: paymentDetails });
        expect((await userinfo(mine.access)).status).toBe(200);
      });

      it("a payment (one-off type) shows the consent page every time, even identical to one approved in this browser", async () => {
        const first = await tokensFor("app", "openid", { authorizationDetails: paymentDetails });
        expect(first.consentShown).toBe(true);
        const again = await tokensFor("app", "openid", { user: first.user, browser: first.browser, authorizationDetails: paymentDetails });
        expect(again.consentShown).toBe(true);
        expect(again.grantId).toBe(first.grantId);
        // prompt=none cannot show it: consent_required, never a code for an unseen payment.
        const silent = await first.browser.get(
          authorizeUrl({
            client_id: clients.app.id,
            redirect_uri: clients.app.redirectUri,
            response_type: "code",
            scope: "openid",
            state: "silent",
            prompt: "none",
            code_challenge: pkce().challenge,
            code_challenge_method: "S256",
            authorization_details: JSON.stringify(paymentDetails),
          }),
        );
        expectErrorRedirect(silent, { redirectUri: clients.app.redirectUri, error: "consent_required", issuer, state: "silent" });
      });

      it("DELETE → 204; the grant is gone with every token under it, and the next authorization asks for consent again", async () => {
        const issued = await tokensFor("app", "openid offline_access", { authorizationDetails: accountDetails });
        expect(issued.consentShown).toBe(true);
        const { user, browser } = issued;

        // Before the deletion, the same request in the same browser skips consent and keeps the grant.
        const again = await tokensFor("app", "openid offline_access", { user, browser, authorizationDetails: accountDetails });
        expect(again.consentShown).toBe(false);
        expect(again.grantId).toBe(issued.grantId);

        // A live token of the same client under another grant (another user), to ask after the deletion.
        const bystander = await tokensFor("app", "openid");
        expect(bystander.grantId).not.toBe(issued.grantId);

        const removed = await deleteGrant(issued.grantId, issued.access);
        expect(removed.status, removed.text).toBe(204);
        expect(removed.text).toBe("");

        // The token used was under the grant: it is dead, so 401; a live token of the client sees no such grant.
        expectInvalidToken(await getGrant(issued.grantId, issued.access));
        const gone = await getGrant(issued.grantId, bystander.access);
        expect(gone.status, gone.text).toBe(404);
        expect(gone.json).toMatchObject({ error: "invalid_grant_id" });
        expect((await deleteGrant(issued.grantId, bystander.access)).status).toBe(404);

        for (const token of [issued, again]) {
          expectOAuthError(await refresh("app", token.refresh!), 400, "invalid_grant");
          expectInvalidToken(await userinfo(token.access));
          expectInactive(await introspect("app", { token: token.access }));
          expectInactive(await introspect("app", { token: token.refresh! }));
        }
        // Other grants are untouched.
        expect((await userinfo(bystander.access)).status).toBe(200);

        // The session is kept (no login page), but consent is asked again, and a new grant is made.
        const { verifier, challenge } = pkce();
        const state = "after-revocation";
        const start = await browser.get(
          authorizeUrl({
            client_id: clients.app.id,
            redirect_uri: clients.app.redirectUri,
            response_type: "code",
            scope: "openid offline_access",
            state,
            code_challenge: challenge,
            code_challenge_method: "S256",
            authorization_details: JSON.stringify(accountDetails),
          }),
        );
        expectPage(start, "consent");
        const done = await submitPage(browser, start, "consent", { decision: "allow" });
        const code = expectCodeRedirect(done, { redirectUri: clients.app.redirectUri, issuer, state });
        const renewed = await exchange("app", code, verifier);
        expect(renewed.grantId).not.toBe(issued.grantId);
        expect((await getGrant(renewed.grantId, renewed.access)).json).toEqual({
          scopes: [{ scope: "openid offline_access" }],
          authorization_details: accountDetails,
        });
        expect((await userinfo(renewed.access)).json).toEqual({ sub: user.row.id, auth_time: expect.any(Number), acr: "low", amr: ["pwd"], sid: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), jpki_verified: false });
      });
    });
  });
}
