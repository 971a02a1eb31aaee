import { randomBytes, randomUUID } from "node:crypto";
import { exportJWK, generateKeyPair, type CryptoKey } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOidc } from "../../src/app/compose-oidc.ts";
import { sha256Hex, storedKeyOf } from "../../src/domain/oidc/flow/secrets.ts";
import type { OidcClient } from "../../src/domain/oidc/client.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import {
  authorizeUrl,
  basicAuthorization,
  Browser,
  clientAssertion,
  createUser,
  csrfOf,
  expectCodeRedirect,
  expectErrorPage,
  expectErrorRedirect,
  expectPage,
  findCode,
  findRequestUri,
  jwtBearer,
  pkce,
  postPar,
  registerClient,
  requestUriPrefix,
  signIn,
  submitPage,
  type ParReply,
  type Reply,
} from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { clientIds, clientSecrets, expectOAuthError, publicRedirect, redirects, request, requestUriCount, type Method } from "../support/oidc-par-clients.ts";

/**
 * The pushed authorization request endpoint (spec 4.2, RFC 9126) and the
 * request_uri lifecycle (spec 3.2), on every database target.
 *
 * Where invalid_request_uri goes, as implemented: the authorization endpoint
 * cannot use the pushed redirect_uri of a request_uri it refuses, so the error
 * is a 400 HTML page (no redirect) when the query carries only client_id and
 * request_uri, as RFC 9126 has clients send it. Only when the query also
 * carries a redirect_uri that exactly matches one registered for that client
 * is the error redirected there, with the query's state and iss.
 */

const targets = await databaseTargets();

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let database: ScratchDatabase | undefined;
    let server: TestServer | undefined;
    let issuer: string;
    let privateKey: CryptoKey;
    let strangerKey: CryptoKey;
    let basicClient: OidcClient;

    const live = (): TestServer => {
      if (!server) throw new Error("server not started");
      return server;
    };

    /** POSTs to PAR authenticated by the client's method; `form` replaces the request body's parameters. */
    async function push(method: Method, form: Record<string, string | undefined> = request(method)): Promise<ParReply> {
      switch (method) {
        case "basic":
          return postPar(live(), form, { authorization: basicAuthorization(clientIds.basic, clientSecrets.basic) });
        case "post":
          return postPar(live(), { ...form, client_id: clientIds.post, client_secret: clientSecrets.post });
        case "jwt":
          return postPar(live(), {
            ...form,
            client_id: clientIds.jwt,
            client_assertion_type: jwtBearer,
            client_assertion: await clientAssertion(privateKey, clientIds.jwt, issuer),
          });
      }
    }

    /** Pushes a valid request and returns its request_uri. */
    async function pushed(method: Method = "basic", form?: Record<string, string | undefined>): Promise<string> {
      const reply = await push(method, form);
      expect(reply.status, reply.text).toBe(201);
      return reply.json!.request_uri as string;
    }

    function expectInvalidClient(reply: ParReply): void {
      expectOAuthError(reply, 401, "invalid_client");
      expect(reply.headers.get("www-authenticate")).toMatch(/^Basic realm="shomei"/);
    }

    /** The authorization request a client sends with a request_uri (RFC 9126 §4). */
    const byReference = (clientId: string, requestUri: string, extra: Record<string, string> = {}) =>
      authorizeUrl({ client_id: clientId, request_uri: requestUri, ...extra });

    /** The page says in words what the description says to the client. */
    const pageWords: Record<string, string> = {
      "request_uri is not one this server issued": "This sign-in was not started by this service. Return to the app and start again.",
      "request_uri was issued to another client": "This sign-in belongs to another app. Return to the app and start again.",
      "request_uri has expired": "This sign-in has expired. Return to the app and start again.",
      "request_uri has already been used": "This sign-in has already been used, for example by opening the same page again. Return to the app and start again.",
    };

    function expectInvalidRequestUriPage(reply: Reply, description: string): void {
      expectErrorPage(reply, "invalid_request_uri");
      expect(pageWords[description], description).toBeDefined();
      expect(reply.body).toContain(pageWords[description]);
    }

    beforeAll(async () => {
      database = await target.create();
      // Public clients' requests from this one address are limited; the limit has its own tests below.
      server = await startTestServer(database.url, { publicParMaxPerAddress: 10_000 });
      issuer = server.domain.oidc.issuer;
      const keys = await generateKeyPair("ES256");
      privateKey = keys.privateKey;
      strangerKey = (await generateKeyPair("ES256")).privateKey;
      const publicJwk = { ...(await exportJWK(keys.publicKey)), kid: "k1", alg: "ES256", use: "sig" };
      const s = server;
      basicClient = await registerClient(s, {
        client_id: clientIds.basic,
        client_name: "Basic App",
        token_endpoint_auth_method: "client_secret_basic",
        client_secret: clientSecrets.basic,
        redirect_uris: [redirects.basic],
        scope: "openid profile",
        authorization_details_types: ["account_information", "payment_initiation"],
      });
      await registerClient(s, {
        client_id: clientIds.post,
        client_name: "Post App",
        token_endpoint_auth_method: "client_secret_post",
        client_secret: clientSecrets.post,
        redirect_uris: [redirects.post],
        scope: "openid",
      });
      await registerClient(s, {
        client_id: clientIds.jwt,
        client_name: "JWT App",
        token_endpoint_auth_method: "private_key_jwt",
        jwks: { keys: [publicJwk] },
        redirect_uris: [redirects.jwt],
        scope: "openid",
      });
      await registerClient(s, {
        client_id: clientIds.required,
        client_name: "PAR Required App",
        token_endpoint_auth_method: "client_secret_basic",
        client_secret: clientSecrets.required,
        redirect_uris: [redirects.required],
        scope: "openid profile",
        require_pushed_authorization_requests: true,
      });
      for (const clientId of [clientIds.public, clientIds.otherPublic]) {
        await registerClient(s, { client_id: clientId, token_endpoint_auth_method: "none", redirect_uris: [publicRedirect], scope: "openid" });
      }
    });

    afterAll(async () => {
      await server?.close();
      await database?.drop();
    });

    describe("issuing a request_uri", () => {
      it.each([["client_secret_basic", "basic"], ["client_secret_post", "post"], ["private_key_jwt", "jwt"]] as Array<[string, Method]>)("%s → 201 with a single-use request_uri", async (_name, method) => {
        const form = request(method, { nonce: "n-1", scope: "openid" });
        const reply = await push(method, form);
        expect(reply.status, reply.text).toBe(201);
        expect(reply.location).toBeUndefined();
        expect(reply.headers.get("content-type")).toMatch(/^application\/json/);
        expect(reply.headers.get("cache-control")).toBe("no-store");
        expect(reply.json).toEqual({ request_uri: expect.any(String), expires_in: 60 });

        const requestUri = reply.json!.request_uri as string;
        expect(requestUri.startsWith(requestUriPrefix)).toBe(true);
        const random = requestUri.slice(requestUriPrefix.length);
        expect(random).toMatch(/^[A-Za-z0-9_-]+$/);
        // At least 128 random bits: the base64url part decodes to at least 16 bytes, and encodes them exactly.
        const bytes = Buffer.from(random, "base64url");
        expect(bytes.length * 8).toBeGreaterThanOrEqual(128);
        expect(bytes.toString("base64url")).toBe(random);

        const record = await findRequestUri(live(), requestUri);
        expect(record).toBeDefined();
        expect(record!.owner).toBe(clientIds[method]);
        expect(record!.consumedAt).toBeNull();
        expect(record!.expiresAt - record!.createdAt).toBe(60_000);
        expect(record!.payload).toMatchObject({
          clientId: clientIds[method],
          redirectUri: redirects[method],
          responseType: "code",
          scopes: ["openid"],
          state: form.state,
          nonce: "n-1",
          codeChallenge: form.code_challenge,
          codeChallengeMethod: "S256",
        });

        const second = await pushed(method);
        expect(second).not.toBe(requestUri);
      });

      it("client_secret_basic with the client_id repeated in the body works", async () => {
        expect((await push("basic", { ...request("basic"), client_id: clientIds.basic })).status).toBe(201);
      });

      it("the lifetime follows the parLifetimeSeconds setting", async () => {
        const scratch = await target.create();
        const short = await startTestServer(scratch.url, { parLifetimeSeconds: 5 });
        try {
          await registerClient(short, {
            client_id: clientIds.basic,
            client_secret: clientSecrets.basic,
            redirect_uris: [redirects.basic],
            scope: "openid",
          });
          const reply = await postPar(short, request("basic"), { authorization: basicAuthorization(clientIds.basic, clientSecrets.basic) });
          expect(reply.status, reply.text).toBe(201);
          expect(reply.json!.expires_in).toBe(5);
          const record = await findRequestUri(short, reply.json!.request_uri as string);
          expect(record!.expiresAt - record!.createdAt).toBe(5_000);
        } finally {
          await short.close();
          await scratch.drop();
        }
      });
    });

    describe("client authentication failures → 401 invalid_client with WWW-Authenticate", () => {
      it("wrong secret, client_secret_basic", async () => {
        expectInvalidClient(await postPar(live(), request("basic"), { authorization: basicAuthorization(clientIds.basic, "wrong-secret-0123456789") }));
      });

      it("wrong secret, client_secret_post", async () => {
        expectInvalidClient(await postPar(live(), { ...request("post"), client_id: clientIds.post, client_secret: "wrong-secret-0123456789" }));
      });

      it("unknown client, by Basic and by post", async () => {
        expectInvalidClient(await postPar(live(), request("basic"), { authorization: basicAuthorization("no-such-client", clientSecrets.basic) }));
        expectInvalidClient(await postPar(live(), { ...request("post"), client_id: "no-such-client", client_secret: clientSecrets.post }));
      });

      it("no credentials at all, or a confidential client's client_id alone; nothing stored", async () => {
        const before = await requestUriCount(live());
        expectInvalidClient(await postPar(live(), request("basic")));
        expectInvalidClient(await postPar(live(), { ...request("basic"), client_id: clientIds.basic }));
        expectInvalidClient(await postPar(live(), { ...request("post"), client_id: clientIds.post }));
        expectInvalidClient(await postPar(live(), { ...request("jwt"), client_id: clientIds.jwt }));
        expect(await requestUriCount(live())).toBe(before);
      });

      it("a method other than the registered one", async () => {
        expectInvalidClient(await postPar(live(), { ...request("basic"), client_id: clientIds.basic, client_secret: clientSecrets.basic }));
      });

      it("private_key_jwt signed by a key the client did not register", async () => {
        const assertion = await clientAssertion(strangerKey, clientIds.jwt, issuer);
        expectInvalidClient(await postPar(live(), { ...request("jwt"), client_id: clientIds.jwt, client_assertion_type: jwtBearer, client_assertion: assertion }));
      });

      it("private_key_jwt: a replayed assertion is refused", async () => {
        const assertion = await clientAssertion(privateKey, clientIds.jwt, issuer);
        const body = { ...request("jwt"), client_id: clientIds.jwt, client_assertion_type: jwtBearer, client_assertion: assertion };
        const first = await postPar(live(), body);
        expect(first.status, first.text).toBe(201);
        expectInvalidClient(await postPar(live(), body));
        // Also with a different request around the same assertion.
        expectInvalidClient(await postPar(live(), { ...body, state: "another" }));
      });

      it("secrets never appear in the answer", async () => {
        const reply = await postPar(live(), { ...request("post"), client_id: clientIds.post, client_secret: "wrong-secret-0123456789" });
        expect(reply.text).not.toContain("wrong-secret-0123456789");
        expect(reply.text).not.toContain(clientSecrets.post);
      });
    });

    describe("public clients (token_endpoint_auth_method none), identified by client_id, with PKCE", () => {
      const publicRequest = (overrides: Record<string, string | undefined> = {}) => ({
        client_id: clientIds.public,
        redirect_uri: publicRedirect,
        response_type: "code",
        scope: "openid",
        state: "public-state",
        code_challenge: pkce().challenge,
        code_challenge_method: "S256",
        ...overrides,
      });

      it("→ 201, and the flow continues with the request_uri to a code bound to the PKCE challenge", async () => {
        const s = live();
        const form = publicRequest();
        const reply = await postPar(s, form);
        expect(reply.status, reply.text).toBe(201);
        const requestUri = reply.json!.request_uri as string;
        expect((await findRequestUri(s, requestUri))!.owner).toBe(clientIds.public);
        const user = await createUser(s);
        const b = new Browser(s.url);
        const afterLogin = await signIn(b, await b.get(byReference(clientIds.public, requestUri)), user.login, user.password);
        const done = await submitPage(b, afterLogin, "consent", { decision: "allow" });
        const code = expectCodeRedirect(done, { redirectUri: publicRedirect, issuer, state: form.state });
        expect((await findCode(s, code))!.payload).toMatchObject({ clientId: clientIds.public, codeChallenge: form.code_challenge });
      });

      it("without PKCE, or with plain PKCE → 400 invalid_request; nothing stored", async () => {
        const before = await requestUriCount(live());
        const without = await postPar(live(), publicRequest({ code_challenge: undefined, code_challenge_method: undefined }));
        expectOAuthError(without, 400, "invalid_request");
        expect(without.json!.error_description).toBe("public clients must use PKCE (code_challenge with code_challenge_method S256)");
        const plain = await postPar(live(), publicRequest({ code_challenge_method: "plain" }));
        expectOAuthError(plain, 400, "invalid_request");
        expect(plain.json!.error_description).toBe("code_challenge_method must be S256");
        const defaulted = await postPar(live(), publicRequest({ code_challenge_method: undefined }));
        expectOAuthError(defaulted, 400, "invalid_request");
        expect(await requestUriCount(live())).toBe(before);
      });

      it("with a secret, or an unknown client_id → 401 invalid_client", async () => {
        expectInvalidClient(await postPar(live(), publicRequest({ client_secret: "a secret it does not have" })));
        expectInvalidClient(await postPar(live(), publicRequest({ client_id: "no-such-public-client" })));
      });

      it("the authorization endpoint also refuses a public client's request without PKCE", async () => {
        const form = publicRequest({ code_challenge: undefined, code_challenge_method: undefined });
        const reply = await new Browser(live().url).get(authorizeUrl(form));
        expectErrorRedirect(reply, { redirectUri: publicRedirect, error: "invalid_request", issuer, state: form.state });
      });
    });

    describe("validation errors → 400 JSON, never a redirect", () => {
      const cases: Array<[string, Record<string, string | undefined>, string]> = [
        ["response_type missing", { response_type: undefined }, "invalid_request"],
        ["response_type=token", { response_type: "token" }, "unsupported_response_type"],
        ["unknown scope", { scope: "openid payments" }, "invalid_scope"],
        ["prompt with an unknown value", { prompt: "select_account" }, "invalid_request"],
        ["prompt=none combined with login", { prompt: "none login" }, "invalid_request"],
        ["max_age=-1", { max_age: "-1" }, "invalid_request"],
        ["max_age=1.5", { max_age: "1.5" }, "invalid_request"],
        ["neither state nor PKCE", { state: undefined, code_challenge: undefined, code_challenge_method: undefined }, "invalid_request"],
        ["code_challenge_method=plain", { code_challenge_method: "plain" }, "invalid_request"],
        ["redirect_uri missing", { redirect_uri: undefined }, "invalid_request"],
        ["redirect_uri with a trailing slash", { redirect_uri: `${redirects.basic}/` }, "invalid_request"],
        ["redirect_uri of another client", { redirect_uri: redirects.post }, "invalid_request"],
        ["authorization_details not JSON", { authorization_details: "{" }, "invalid_authorization_details"],
        ["authorization_details not an array", { authorization_details: JSON.stringify({ type: "account_information" }) }, "invalid_authorization_details"],
        ["authorization_details entry without type", { authorization_details: JSON.stringify([{ actions: ["x"] }]) }, "invalid_authorization_details"],
        ["authorization_details type not allowed", { authorization_details: JSON.stringify([{ type: "tax_returns" }]) }, "invalid_authorization_details"],
        ["grant_id without grant_management_action", { grant_id: "g-1" }, "invalid_request"],
        ["grant_management_action=create with grant_id", { grant_management_action: "create", grant_id: "g-1" }, "invalid_request"],
        ["request_uri in the body", { request_uri: `${requestUriPrefix}${"a".repeat(43)}` }, "invalid_request"],
        ["client_id of another client than the authenticated one", { client_id: clientIds.post }, "invalid_request"],
      ];

      it.each(cases.map(([name, overrides, error]) => ({ name, overrides, error })))("$name → 400 $error", async ({ overrides, error }) => {
        expectOAuthError(await push("basic", request("basic", overrides)), 400, error);
      });

      it("a repeated parameter → 400 invalid_request", async () => {
        const body = new URLSearchParams(request("basic") as Record<string, string>);
        body.append("scope", "profile");
        expectOAuthError(await postPar(live(), body, { authorization: basicAuthorization(clientIds.basic, clientSecrets.basic) }), 400, "invalid_request");
      });

      it("the same validation for client_secret_post and private_key_jwt clients", async () => {
        expectOAuthError(await push("post", request("post", { response_type: "token" })), 400, "unsupported_response_type");
        expectOAuthError(await push("jwt", request("jwt", { scope: "openid profile" })), 400, "invalid_scope");
      });

      it.each([
        ["application/json", JSON.stringify({ client_id: clientIds.post, client_secret: clientSecrets.post, response_type: "code" })],
        ["text/plain", "client_id=par-post&client_secret=x"],
        ["multipart/form-data; boundary=x", "--x--"],
      ])("content type %s → 400 invalid_request", async (contentType, body) => {
        expectOAuthError(await postPar(live(), body, { "content-type": contentType }), 400, "invalid_request");
      });
    });

    describe("request_uri lifecycle (spec 3.2)", () => {
      it("issued → authorize continues with the login page → consumed; a second use → invalid_request_uri", async () => {
        const requestUri = await pushed("basic");
        const first = await new Browser(live().url).get(byReference(clientIds.basic, requestUri));
        expectPage(first, "login");
        expect((await findRequestUri(live(), requestUri))!.consumedAt).not.toBeNull();

        const second = await new Browser(live().url).get(byReference(clientIds.basic, requestUri));
        expectInvalidRequestUriPage(second, "request_uri has already been used");
      });

      it("a request_uri stored before ordered secrets (43 characters, keyed by its whole SHA-256) is still taken, once", async () => {
        const requestUri = await pushed("basic");
        expect(requestUri).toMatch(/^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{51}$/);
        const oldSecret = randomBytes(32).toString("base64url");
        const oldUri = `urn:ietf:params:oauth:request_uri:${oldSecret}`;
        await live()
          .database.db.updateTable("one_time_records")
          .set({ key_hash: sha256Hex(oldSecret) })
          .where("key_hash", "=", storedKeyOf(requestUri.slice("urn:ietf:params:oauth:request_uri:".length)))
          .executeTakeFirstOrThrow();
        expectPage(await new Browser(live().url).get(byReference(clientIds.basic, oldUri)), "login");
        expectInvalidRequestUriPage(await new Browser(live().url).get(byReference(clientIds.basic, oldUri)), "request_uri has already been used");
        expectInvalidRequestUriPage(await new Browser(live().url).get(byReference(clientIds.basic, requestUri)), "request_uri is not one this server issued");
      });

      it("invalid_request_uri is redirected when the query also carries a registered redirect_uri, with the query's state", async () => {
        const requestUri = await pushed("basic");
        expectPage(await new Browser(live().url).get(byReference(clientIds.basic, requestUri)), "login");
        const state = "query state & ü";
        const reply = await new Browser(live().url).get(byReference(clientIds.basic, requestUri, { redirect_uri: redirects.basic, state }));
        expectErrorRedirect(reply, { redirectUri: redirects.basic, error: "invalid_request_uri", issuer, state });
        // A redirect_uri that is not registered keeps it a page.
        const unregistered = await new Browser(live().url).get(byReference(clientIds.basic, requestUri, { redirect_uri: `${redirects.basic}/x`, state }));
        expectErrorPage(unregistered, "invalid_request_uri");
      });

      it("expired → invalid_request_uri, and the record stays unconsumed", async () => {
        // Issued by the same domain services over the same database, with a clock 61 s behind: already expired.
        const s = live();
        const past = createOidc(s.config, s.database, s.domain.oidc.secretKey, () => Date.now() - 61_000, s.domain.oidc);
        const issued = await past.pushed.push(basicClient, request("basic"));
        expect(issued.expiresIn).toBe(60);
        const record = await findRequestUri(s, issued.requestUri);
        expect(record!.expiresAt).toBeLessThan(Date.now());

        const reply = await new Browser(s.url).get(byReference(clientIds.basic, issued.requestUri));
        expectInvalidRequestUriPage(reply, "request_uri has expired");
        expect(await findRequestUri(s, issued.requestUri)).toEqual(record);
        // Still expired, not consumed, on a second attempt.
        expectInvalidRequestUriPage(await new Browser(s.url).get(byReference(clientIds.basic, issued.requestUri)), "request_uri has expired");
      });

      it("presented with another client's client_id → invalid_request_uri, unchanged; the right client can still use it", async () => {
        const requestUri = await pushed("basic");
        const before = await findRequestUri(live(), requestUri);
        const foreign = await new Browser(live().url).get(byReference(clientIds.post, requestUri));
        expectInvalidRequestUriPage(foreign, "request_uri was issued to another client");
        expect(await findRequestUri(live(), requestUri)).toEqual(before);
        // Even with the other client's registered redirect_uri, the error goes there and nothing changes.
        const foreignRedirected = await new Browser(live().url).get(byReference(clientIds.post, requestUri, { redirect_uri: redirects.post, state: "s" }));
        expectErrorRedirect(foreignRedirected, { redirectUri: redirects.post, error: "invalid_request_uri", issuer, state: "s" });
        expect(await findRequestUri(live(), requestUri)).toEqual(before);

        expectPage(await new Browser(live().url).get(byReference(clientIds.basic, requestUri)), "login");
      });

      it("unknown or malformed request_uri → invalid_request_uri", async () => {
        const b = new Browser(live().url);
        const unknown = `${requestUriPrefix}${randomBytes(32).toString("base64url")}`;
        expectInvalidRequestUriPage(await b.get(byReference(clientIds.basic, unknown)), "request_uri is not one this server issued");
        for (const malformed of ["https://evil.example/request", `${requestUriPrefix}short`, requestUriPrefix, `urn:other:${randomBytes(32).toString("base64url")}`]) {
          expectInvalidRequestUriPage(await b.get(byReference(clientIds.basic, malformed)), "request_uri is not one this server issued");
        }
      });

      it("with an unknown client_id → invalid_client page; without client_id → invalid_request page", async () => {
        const requestUri = await pushed("basic");
        expectErrorPage(await new Browser(live().url).get(byReference("no-such-client", requestUri)), "invalid_client");
        expectErrorPage(await new Browser(live().url).get(authorizeUrl({ request_uri: requestUri })), "invalid_request");
        // Neither attempt consumed it.
        expect((await findRequestUri(live(), requestUri))!.consumedAt).toBeNull();
      });

      it("the same request_uri presented by 20 browsers at once → exactly one continues", async () => {
        const requestUri = await pushed("basic");
        const replies = await Promise.all(Array.from({ length: 20 }, () => new Browser(live().url).get(byReference(clientIds.basic, requestUri))));
        const continued = replies.filter((r) => r.status === 303);
        expect(continued).toHaveLength(1);
        expectPage(continued[0]!, "login");
        const refused = replies.filter((r) => r.status !== 303);
        expect(refused).toHaveLength(19);
        for (const reply of refused) expectInvalidRequestUriPage(reply, "request_uri has already been used");
      });

      it("only the pushed parameters count: other query parameters are ignored", async () => {
        const s = live();
        const user = await createUser(s);
        const form = request("basic", { scope: "openid", state: "pushed state" });
        const requestUri = await pushed("basic", form);
        const b = new Browser(s.url);
        const start = await b.get(byReference(clientIds.basic, requestUri, { scope: "openid profile", state: "tampered", nonce: "tampered" }));
        const afterLogin = await signIn(b, start, user.login, user.password);
        const consent = await b.get(expectPage(afterLogin, "consent"));
        expect(consent.body).not.toContain("Your name and profile");
        const done = await b.post(afterLogin.location!, { csrf: csrfOf(consent.body), decision: "allow" });
        const code = expectCodeRedirect(done, { redirectUri: redirects.basic, issuer, state: "pushed state" });
        expect((await findCode(s, code))!.payload).toMatchObject({ scopes: ["openid"], nonce: null, codeChallenge: form.code_challenge });
      });
    });

    it("large authorization_details (≈ 40 KiB) work through PAR and are shown on the consent page", async () => {
      const s = live();
      const marker = `marker-${randomUUID()}`;
      const details = Array.from({ length: 40 }, (_, i) => ({
        type: "account_information",
        identifier: `${marker}-${i}`,
        actions: ["list_accounts", "read_balances"],
        locations: [`https://bank.example/accounts/${i}`],
        note: `${i}:${"n".repeat(900)}`,
      }));
      const json = JSON.stringify(details);
      expect(json.length).toBeGreaterThan(38 * 1024);
      expect(json.length).toBeLessThan(48 * 1024);

      // The JWT client may not request this type; the basic client may.
      expectOAuthError(await push("jwt", request("jwt", { authorization_details: json })), 400, "invalid_authorization_details");

      const form = request("basic", { authorization_details: json });
      const large = await pushed("basic", form);
      const user = await createUser(s);
      const b = new Browser(s.url);
      const afterLogin = await signIn(b, await b.get(byReference(clientIds.basic, large)), user.login, user.password);
      const consent = await b.get(expectPage(afterLogin, "consent"));
      expect(consent.status).toBe(200);
      for (let i = 0; i < details.length; i++) expect(consent.body).toContain(`${marker}-${i}`);
      expect(consent.body).toContain("account_information");
      expect(consent.body).toContain("https://bank.example/accounts/39");

      const done = await b.post(afterLogin.location!, { csrf: csrfOf(consent.body), decision: "allow" });
      const code = expectCodeRedirect(done, { redirectUri: redirects.basic, issuer, state: form.state });
      expect((await findCode(s, code))!.payload.authorizationDetails).toEqual(details);
    });

    it("a client that requires PAR completes the whole flow through PAR", async () => {
      const s = live();
      const user = await createUser(s);
      const form = request("required", { scope: "openid profile", nonce: "n-required" });
      const reply = await postPar(s, form, { authorization: basicAuthorization(clientIds.required, clientSecrets.required) });
      expect(reply.status, reply.text).toBe(201);
      const requestUri = reply.json!.request_uri as string;

      const b = new Browser(s.url);
      const start = await b.get(byReference(clientIds.required, requestUri));
      const afterLogin = await signIn(b, start, user.login, user.password);
      const done = await submitPage(b, afterLogin, "consent", { decision: "allow" });
      const code = expectCodeRedirect(done, { redirectUri: redirects.required, issuer, state: form.state });
      expect((await findCode(s, code))!.payload).toMatchObject({
        clientId: clientIds.required,
        redirectUri: redirects.required,
        scopes: ["openid", "profile"],
        nonce: "n-required",
        codeChallenge: form.code_challenge,
        userId: user.row.id,
      });

      // The plain authorization endpoint stays closed to it.
      const plain = await new Browser(s.url).get(authorizeUrl({ client_id: clientIds.required, ...form }));
      expectErrorRedirect(plain, { redirectUri: redirects.required, error: "invalid_request", issuer, state: form.state });
    });

  });
}
