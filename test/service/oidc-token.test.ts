import { createHash, randomBytes, randomUUID } from "node:crypto";
import { createRemoteJWKSet, exportJWK, generateKeyPair, jwtVerify, SignJWT, type CryptoKey, type JWTPayload, type JWTVerifyGetKey } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex, storedKeyOf } from "../../src/domain/oidc/flow/secrets.ts";
import { OneTimeRecords } from "../../src/storage/one-time-records.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import {
  basicAuthorization,
  Browser,
  clientAssertion,
  createUser,
  findCode,
  getUserinfo,
  jwtBearer,
  obtainCode,
  pkce,
  postToken,
  registerClient,
  sessionCookie,
  type CodeRequest,
  type TestUser,
  type TokenReply,
} from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * The token endpoint (RFC 6749 §3.2, §4.1.3, §5, §6; RFC 7636; RFC 7523;
 * OIDC Core 3.1.3) through real HTTP requests, on every database target.
 * Codes come from the real authorization flow (authorize → login → consent).
 *
 * "Nothing issued" is checked on the oidc_tokens table: a refused request adds
 * no row. Tests in this file run one after another, so the row count of the
 * whole table is a reliable measure.
 */

const targets = await databaseTargets();

const clientIds = { basic: "tok-basic", post: "tok-post", jwt: "tok-jwt", public: "tok-public", codeOnly: "tok-code-only" };
type ClientName = keyof typeof clientIds;
const secrets = { basic: "tok-basic-secret-0123456789", post: "tok-post-secret-0123456789", codeOnly: "tok-code-only-secret-0123456789" };
const redirects: Record<ClientName, string> = {
  basic: "https://basic.example/cb",
  post: "https://post.example/cb",
  jwt: "https://jwt.example/cb",
  public: "https://public.example/cb",
  codeOnly: "https://code-only.example/cb",
};
const accessTokenLifetime = 3600;
const idTokenLifetime = 3600;

/** The token response members (RFC 6749 §5.1, OIDC Core 3.1.3.3, Grant Management, RFC 9396 §7). */
interface TokenJson {
  access_token: string;
  token_type: string;
  expires_in: number;
  scope: string;
  id_token?: string;
  refresh_token?: string;
  grant_id: string;
  authorization_details?: unknown[];
}

/** at_hash computed here, independently of the server: left half of SHA-256 of the ASCII access token, base64url. */
function expectedAtHash(accessToken: string): string {
  return createHash("sha256").update(accessToken, "ascii").digest().subarray(0, 16).toString("base64url");
}

const base64urlJson = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let database: ScratchDatabase | undefined;
    let server: TestServer | undefined;
    let issuer: string;
    let tokenEndpoint: string;
    let parEndpoint: string;
    let privateKey: CryptoKey;
    let strangerKey: CryptoKey;
    let remoteJwks: JWTVerifyGetKey;
    let user: TestUser;
    const browsers = new Map<ClientName, Browser>();

    const live = (): TestServer => {
      if (!server) throw new Error("server not started");
      return server;
    };

    /** One browser per client, signed in as `user` after its first flow, so later codes skip login and consent. */
    const browserFor = (name: ClientName): Browser => {
      let b = browsers.get(name);
      if (!b) browsers.set(name, (b = new Browser(live().url)));
      return b;
    };

    /** A code for the client through the real flow; `request` overrides the defaults (scope openid, a random state). */
    const codeFor = (name: ClientName, request: Partial<CodeRequest> = {}): Promise<string> =>
      obtainCode(live(), browserFor(name), user, { clientId: clientIds[name], redirectUri: redirects[name], scope: "openid", ...request });

    /** Form members and headers that authenticate the client by its registered method. */
    async function credentials(name: ClientName): Promise<{ form: Record<string, string>; headers: Record<string, string> }> {
      switch (name) {
        case "basic":
        case "codeOnly":
          return { form: {}, headers: { authorization: basicAuthorization(clientIds[name], secrets[name]) } };
        case "post":
          return { form: { client_id: clientIds.post, client_secret: secrets.post }, headers: {} };
        case "jwt":
          return {
            form: { client_id: clientIds.jwt, client_assertion_type: jwtBearer, client_assertion: await clientAssertion(privateKey, clientIds.jwt, issuer) },
            headers: {},
          };
        case "public":
          return { form: { client_id: clientIds.public }, headers: {} };
      }
    }

    /** POSTs `form` to the token endpoint, authenticated as the client. */
    async function token(name: ClientName, form: Record<string, string | undefined>): Promise<TokenReply> {
      const auth = await credentials(name);
      return postToken(live(), { ...form, ...auth.form }, auth.headers);
    }

    const exchange = (name: ClientName, code: string, extra: Record<string, string | undefined> = {}) =>
      token(name, { grant_type: "authorization_code", code, redirect_uri: redirects[name], ...extra });

    const refresh = (name: ClientName, refreshToken: string, extra: Record<string, string | undefined> = {}) =>
      token(name, { grant_type: "refresh_token", refresh_token: refreshToken, ...extra });

    /** A 200 token response with the headers RFC 6749 §5.1 requires; the basic members checked. */
    function expectIssued(reply: TokenReply): TokenJson {
      expect(reply.status, reply.text).toBe(200);
      expect(reply.location).toBeUndefined();
      expect(reply.headers.get("content-type")).toMatch(/^application\/json/);
      expect(reply.headers.get("cache-control")).toBe("no-store");
      expect(reply.headers.get("pragma")).toBe("no-cache");
      const json = reply.json as unknown as TokenJson;
      expect(json.access_token).toMatch(/^[A-Za-z0-9_-]{51}$/);
      expect(json.token_type).toBe("Bearer");
      expect(json.expires_in).toBe(accessTokenLifetime);
      expect(json.grant_id).toMatch(/^[A-Za-z0-9_-]{43}$/);
      if (json.refresh_token !== undefined) {
        expect(json.refresh_token).toMatch(/^[A-Za-z0-9_-]{51}$/);
        expect(json.refresh_token).not.toBe(json.access_token);
      }
      return json;
    }

    /** An RFC 6749 §5.2 error: exact status and code, JSON, no-store, and no token in the body. */
    function expectTokenError(reply: TokenReply, status: number, error: string): void {
      expect(reply.status, reply.text).toBe(status);
      expect(reply.location).toBeUndefined();
      expect(reply.headers.get("content-type")).toMatch(/^application\/json/);
      expect(reply.headers.get("cache-control")).toBe("no-store");
      expect(reply.json?.error, reply.text).toBe(error);
      expect(reply.json?.error_description).toMatch(/\S/);
      for (const member of ["access_token", "refresh_token", "id_token", "token_type"]) expect(reply.json).not.toHaveProperty(member);
      if (status === 401) {
        expect(reply.headers.get("www-authenticate")).toMatch(/^Basic realm="shomei"/);
      } else {
        expect(reply.headers.get("www-authenticate")).toBeNull();
      }
    }

    const expectInvalidClient = (reply: TokenReply) => expectTokenError(reply, 401, "invalid_client");

    /** Rows in oidc_tokens: every access and refresh token ever issued by this server. */
    async function tokenCount(): Promise<number> {
      const row = await live().database.db.selectFrom("oidc_tokens").select((eb) => eb.fn.countAll<number | string>().as("n")).executeTakeFirstOrThrow();
      return Number(row.n);
    }

    async function tokenRow(value: string) {
      return live().database.db.selectFrom("oidc_tokens").selectAll().where("token_hash", "=", storedKeyOf(value)).executeTakeFirst();
    }

    /** The ID token verified against the server's JWKS (signature, alg, iss, aud), with its header. */
    async function verifiedIdToken(idToken: string, clientId: string): Promise<{ payload: JWTPayload; kid: string | undefined; typ: string | undefined }> {
      const { payload, protectedHeader } = await jwtVerify(idToken, remoteJwks, { issuer, audience: clientId, algorithms: ["ES256"] });
      expect(protectedHeader.alg).toBe("ES256");
      return { payload, kid: protectedHeader.kid, typ: protectedHeader.typ };
    }

    async function publishedKids(): Promise<string[]> {
      const response = await fetch(new URL("/api/oidc/v1/jwks", live().url));
      expect(response.status).toBe(200);
      const jwks = (await response.json()) as { keys: Array<Record<string, unknown>> };
      for (const key of jwks.keys) for (const member of ["d", "p", "q", "k"]) expect(key).not.toHaveProperty(member);
      return jwks.keys.map((k) => k.kid as string);
    }

    /**
     * Checks every claim of an ID token from a code exchange (OIDC Core 2, 3.1.3.6):
     * exactly the expected members, times in seconds, at_hash of this access token.
     */
    async function expectIdToken(
      tokens: TokenJson,
      expected: { clientId: string; code: string; nonce: string | undefined; issuedFrom: number; issuedUntil: number },
    ): Promise<JWTPayload> {
      expect(tokens.id_token).toBeDefined();
      const { payload, kid, typ } = await verifiedIdToken(tokens.id_token!, expected.clientId);
      expect(typ).toBe("JWT");
      expect(kid).toMatch(/\S/);
      expect(await publishedKids()).toContain(kid);
      const stored = (await findCode(live(), expected.code))!.payload;
      const members = ["iss", "sub", "aud", "azp", "exp", "iat", "auth_time", "acr", "amr", "at_hash", "sid", "jpki_verified", ...(expected.nonce === undefined ? [] : ["nonce"])];
      expect(Object.keys(payload).sort()).toEqual(members.sort());
      expect(payload.iss).toBe(issuer);
      expect(payload.sub).toBe(user.row.id);
      expect(payload.aud).toBe(expected.clientId);
      expect(payload.azp).toBe(expected.clientId);
      expect(payload.iat).toBeGreaterThanOrEqual(Math.floor(expected.issuedFrom / 1000));
      expect(payload.iat).toBeLessThanOrEqual(Math.ceil(expected.issuedUntil / 1000));
      expect(payload.exp).toBe(payload.iat! + idTokenLifetime);
      expect(payload.auth_time).toBe(Math.floor(stored.authTime / 1000));
      expect(Number.isInteger(payload.auth_time)).toBe(true);
      expect(payload.acr).toBe("low");
      expect(payload.jpki_verified).toBe(false);
      expect(payload.amr).toEqual(["pwd"]);
      expect(payload.at_hash).toBe(expectedAtHash(tokens.access_token));
      expect(payload.sid).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(payload.sid).toBe(stored.sid);
      if (expected.nonce === undefined) expect(payload).not.toHaveProperty("nonce");
      else expect(payload.nonce).toBe(expected.nonce);
      return payload;
    }

    beforeAll(async () => {
      database = await target.create();
      server = await startTestServer(database.url);
      issuer = server.domain.oidc.issuer;
      parEndpoint = `${issuer}/api/oidc/v1/par`;
      const discovery = (await (await fetch(new URL("/.well-known/openid-configuration", server.url))).json()) as Record<string, unknown>;
      tokenEndpoint = discovery.token_endpoint as string;
      expect(tokenEndpoint).toBe(`${issuer}/api/oidc/v1/token`);
      expect(discovery.jwks_uri).toBe(`${issuer}/api/oidc/v1/jwks`);
      // The issuer names localhost; the test server listens on 127.0.0.1, so the JWKS is fetched there.
      remoteJwks = createRemoteJWKSet(new URL("/api/oidc/v1/jwks", server.url));

      const keys = await generateKeyPair("ES256");
      privateKey = keys.privateKey;
      strangerKey = (await generateKeyPair("ES256")).privateKey;
      const publicJwk = { ...(await exportJWK(keys.publicKey)), kid: "k1", alg: "ES256", use: "sig" };
      const s = server;
      await registerClient(s, {
        client_id: clientIds.basic,
        token_endpoint_auth_method: "client_secret_basic",
        client_secret: secrets.basic,
        redirect_uris: [redirects.basic],
        scope: "openid profile email offline_access",
        authorization_details_types: ["account_information"],
      });
      await registerClient(s, {
        client_id: clientIds.post,
        token_endpoint_auth_method: "client_secret_post",
        client_secret: secrets.post,
        redirect_uris: [redirects.post],
        scope: "openid profile offline_access",
      });
      await registerClient(s, {
        client_id: clientIds.jwt,
        token_endpoint_auth_method: "private_key_jwt",
        jwks: { keys: [publicJwk] },
        redirect_uris: [redirects.jwt],
        scope: "openid offline_access",
      });
      await registerClient(s, {
        client_id: clientIds.public,
        token_endpoint_auth_method: "none",
        redirect_uris: [redirects.public],
        scope: "openid profile offline_access",
      });
      await registerClient(s, {
        client_id: clientIds.codeOnly,
        token_endpoint_auth_method: "client_secret_basic",
        client_secret: secrets.codeOnly,
        redirect_uris: [redirects.codeOnly],
        scope: "openid offline_access",
        grant_types: ["authorization_code"],
      });
      user = await createUser(s);
    });

    afterAll(async () => {
      await server?.close();
      await database?.drop();
    });

    describe("successful code exchange", () => {
      it("client_secret_basic with PKCE, nonce and authorization_details: every response member, and the ID token's claims", async () => {
        const { verifier, challenge } = pkce();
        const details = [{ type: "account_information", actions: ["list_accounts"], locations: ["https://bank.example/accounts"] }];
        const code = await codeFor("basic", {
          scope: "openid profile offline_access",
          nonce: "n-0S6_WzA2Mj",
          codeChallenge: challenge,
          authorizationDetails: details,
        });
        const grantId = (await findCode(live(), code))!.payload.grantId;
        const before = await tokenCount();
        const from = Date.now();
        const tokens = expectIssued(await exchange("basic", code, { code_verifier: verifier }));
        const until = Date.now();

        expect(Object.keys(tokens).sort()).toEqual(
          ["access_token", "token_type", "expires_in", "scope", "id_token", "refresh_token", "grant_id", "authorization_details"].sort(),
        );
        expect(tokens.scope.split(" ").sort()).toEqual(["offline_access", "openid", "profile"]);
        expect(tokens.grant_id).toBe(grantId);
        expect(tokens.authorization_details).toEqual(details);
        expect(tokens.refresh_token).toBeDefined();
        await expectIdToken(tokens, { clientId: clientIds.basic, code, nonce: "n-0S6_WzA2Mj", issuedFrom: from, issuedUntil: until });

        // One access and one refresh token stored, by hash only, bound to the client, user and grant.
        expect(await tokenCount()).toBe(before + 2);
        const access = await tokenRow(tokens.access_token);
        const refreshRow = await tokenRow(tokens.refresh_token!);
        expect(access).toMatchObject({ kind: "access", client_id: clientIds.basic, user_id: user.row.id, grant_id: grantId, revoked_at: null });
        expect(refreshRow).toMatchObject({ kind: "refresh", client_id: clientIds.basic, user_id: user.row.id, grant_id: grantId, consumed_at: null });
        expect(Number(access!.expires_at) - Number(access!.created_at)).toBe(accessTokenLifetime * 1000);

        // The access token works at userinfo, with the claims of the granted scopes.
        const info = await getUserinfo(live(), tokens.access_token);
        expect(info.status).toBe(200);
        expect(info.json).toMatchObject({ sub: user.row.id, name: "Test User", preferred_username: user.login });
        // The code is now used.
        expect((await findCode(live(), code))!.consumedAt).not.toBeNull();
      });

      it("client_secret_post without nonce or PKCE: the ID token has no nonce; no authorization_details member", async () => {
        const code = await codeFor("post", { scope: "openid" });
        const from = Date.now();
        const tokens = expectIssued(await exchange("post", code));
        const until = Date.now();
        expect(Object.keys(tokens).sort()).toEqual(["access_token", "expires_in", "grant_id", "id_token", "scope", "token_type"]);
        expect(tokens.scope).toBe("openid");
        await expectIdToken(tokens, { clientId: clientIds.post, code, nonce: undefined, issuedFrom: from, issuedUntil: until });
      });

      it("private_key_jwt with the issuer as audience, as a string and as a one-element array", async () => {
        for (const audience of [issuer, [issuer]]) {
          const code = await codeFor("jwt", { nonce: `n-${audience.length}` });
          const from = Date.now();
          const reply = await postToken(live(), {
            grant_type: "authorization_code",
            code,
            redirect_uri: redirects.jwt,
            client_id: clientIds.jwt,
            client_assertion_type: jwtBearer,
            client_assertion: await clientAssertion(privateKey, clientIds.jwt, audience),
          });
          const until = Date.now();
          const tokens = expectIssued(reply);
          await expectIdToken(tokens, { clientId: clientIds.jwt, code, nonce: `n-${audience.length}`, issuedFrom: from, issuedUntil: until });
        }
      });

      it("private_key_jwt without client_id in the body (the client named by the assertion's sub)", async () => {
        const code = await codeFor("jwt");
        const reply = await postToken(live(), {
          grant_type: "authorization_code",
          code,
          redirect_uri: redirects.jwt,
          client_assertion_type: jwtBearer,
          client_assertion: await clientAssertion(privateKey, clientIds.jwt, issuer),
        });
        expect(expectIssued(reply).scope).toBe("openid");
      });

      it("a public client (token_endpoint_auth_method none) with PKCE, identified by client_id alone; it can refresh too", async () => {
        const { verifier, challenge } = pkce();
        const code = await codeFor("public", { scope: "openid offline_access", nonce: "public-nonce", codeChallenge: challenge });
        const from = Date.now();
        const tokens = expectIssued(await exchange("public", code, { code_verifier: verifier }));
        const until = Date.now();
        expect(tokens.refresh_token).toBeDefined();
        await expectIdToken(tokens, { clientId: clientIds.public, code, nonce: "public-nonce", issuedFrom: from, issuedUntil: until });

        const refreshed = expectIssued(await refresh("public", tokens.refresh_token!));
        expect(refreshed.refresh_token).toBeDefined();
        expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
      });

      it("a code without the openid scope yields an access token but no ID token", async () => {
        const code = await codeFor("basic", { scope: "profile" });
        const tokens = expectIssued(await exchange("basic", code));
        expect(tokens.scope).toBe("profile");
        expect(tokens).not.toHaveProperty("id_token");
        expect(tokens).not.toHaveProperty("refresh_token");
        // Userinfo is for OpenID requests only.
        expect((await getUserinfo(live(), tokens.access_token)).status).toBe(403);
      });
    });

    describe("invalid_request (400)", () => {
      it("each malformed request is refused without touching the code, which still works afterwards", async () => {
        const code = await codeFor("basic");
        const before = await tokenCount();
        const basic = { authorization: basicAuthorization(clientIds.basic, secrets.basic) };
        const valid = { grant_type: "authorization_code", code, redirect_uri: redirects.basic };
        const repeated = (name: string, second: string) => {
          const form = new URLSearchParams(valid);
          form.append(name, second);
          return form;
        };

        const twice = repeated("client_id", clientIds.basic);
        twice.append("client_id", clientIds.basic);
        const assertion = await clientAssertion(privateKey, clientIds.jwt, issuer);

        const cases: Array<[string, Record<string, string | undefined> | URLSearchParams | string, Record<string, string>]> = [
          ["grant_type missing", { ...valid, grant_type: undefined }, basic],
          ["grant_type empty (counts as missing)", { ...valid, grant_type: "" }, basic],
          ["code missing", { ...valid, code: undefined }, basic],
          ["code empty", { ...valid, code: "" }, basic],
          ["redirect_uri missing", { ...valid, redirect_uri: undefined }, basic],
          ["code repeated", repeated("code", code), basic],
          ["grant_type repeated", repeated("grant_type", "authorization_code"), basic],
          ["redirect_uri repeated", repeated("redirect_uri", redirects.basic), basic],
          ["client_id repeated", twice, basic],
          ["a JSON body", JSON.stringify(valid), { ...basic, "content-type": "application/json" }],
          ["a text/plain body", new URLSearchParams(valid).toString(), { ...basic, "content-type": "text/plain" }],
          ["two client authentication methods (Basic and client_secret)", { ...valid, client_id: clientIds.basic, client_secret: secrets.basic }, basic],
          ["client_assertion without client_assertion_type", { ...valid, client_id: clientIds.jwt, client_assertion: assertion }, {}],
          ["client_secret without client_id", { ...valid, client_secret: secrets.post }, {}],
        ];
        for (const [name, body, headers] of cases) {
          const reply = await postToken(live(), body, headers);
          expect(reply.json?.error, `${name}: ${reply.text}`).toBe("invalid_request");
          expectTokenError(reply, 400, "invalid_request");
        }
        expect(await tokenCount()).toBe(before);
        expect((await findCode(live(), code))!.consumedAt).toBeNull();
        expectIssued(await exchange("basic", code));
      });

      it("refresh_token missing (or empty) for grant_type=refresh_token", async () => {
        const before = await tokenCount();
        expectTokenError(await token("basic", { grant_type: "refresh_token" }), 400, "invalid_request");
        expectTokenError(await token("basic", { grant_type: "refresh_token", refresh_token: "" }), 400, "invalid_request");
        expect(await tokenCount()).toBe(before);
      });
    });

    describe("invalid_client (401 with WWW-Authenticate)", () => {
      it("every failed client authentication is refused before the code is looked at", async () => {
        const code = await codeFor("basic");
        const before = await tokenCount();
        const valid = { grant_type: "authorization_code", code, redirect_uri: redirects.basic };
        const cases: Array<[string, Record<string, string | undefined>, Record<string, string>]> = [
          ["wrong secret, client_secret_basic", valid, { authorization: basicAuthorization(clientIds.basic, "wrong-secret-0123456789") }],
          ["wrong secret, client_secret_post", { ...valid, client_id: clientIds.post, client_secret: "wrong-secret-0123456789" }, {}],
          ["unknown client, client_secret_basic", valid, { authorization: basicAuthorization("no-such-client", secrets.basic) }],
          ["unknown client, client_secret_post", { ...valid, client_id: "no-such-client", client_secret: secrets.post }, {}],
          ["unknown client, client_id alone", { ...valid, client_id: "no-such-client" }, {}],
          ["no credentials and no client_id", valid, {}],
          ["a confidential client with its client_id alone", { ...valid, client_id: clientIds.basic }, {}],
          ["client_secret_post for a client_secret_basic client", { ...valid, client_id: clientIds.basic, client_secret: secrets.basic }, {}],
          ["client_secret_basic for a client_secret_post client", valid, { authorization: basicAuthorization(clientIds.post, secrets.post) }],
          ["a secret for a public client", { ...valid, client_id: clientIds.public, client_secret: "any-secret-0123456789" }, {}],
          ["a secret for a private_key_jwt client", { ...valid, client_id: clientIds.jwt, client_secret: "any-secret-0123456789" }, {}],
          ["another client's secret", valid, { authorization: basicAuthorization(clientIds.basic, secrets.post) }],
          ["an empty secret", valid, { authorization: basicAuthorization(clientIds.basic, "") }],
          ["a Bearer Authorization header", valid, { authorization: "Bearer abcdef" }],
          ["malformed Basic credentials", valid, { authorization: "Basic !!!not-base64!!!" }],
          ["Basic credentials without a colon", valid, { authorization: `Basic ${Buffer.from(clientIds.basic).toString("base64")}` }],
        ];
        for (const [name, form, headers] of cases) {
          const reply = await postToken(live(), form, headers);
          expect(reply.json?.error, `${name}: ${reply.text}`).toBe("invalid_client");
          expectInvalidClient(reply);
          // The secrets presented or registered never appear in the answer.
          expect(reply.text).not.toContain("wrong-secret");
          expect(reply.text).not.toContain(secrets.basic);
        }
        expect(await tokenCount()).toBe(before);
        expect((await findCode(live(), code))!.consumedAt).toBeNull();
        expectIssued(await exchange("basic", code));
      });
    });

    describe("private_key_jwt at the token endpoint", () => {
      const hand = (header: Record<string, unknown>, claims: Record<string, unknown>, signature = "") =>
        `${base64urlJson(header)}.${base64urlJson(claims)}.${signature}`;

      it("every bad assertion → 401 invalid_client, nothing issued, the code untouched; then a good one redeems it", async () => {
        const code = await codeFor("jwt");
        const before = await tokenCount();
        const now = Math.floor(Date.now() / 1000);
        const claims = { iss: clientIds.jwt, sub: clientIds.jwt, aud: issuer, iat: now, exp: now + 60, jti: randomUUID() };
        const signed = (overrides: { aud?: string | string[]; iat?: number; exp?: number }, key: CryptoKey = privateKey) =>
          new SignJWT({})
            .setProtectedHeader({ alg: "ES256", kid: "k1" })
            .setIssuer(clientIds.jwt)
            .setSubject(clientIds.jwt)
            .setAudience(overrides.aud ?? issuer)
            .setIssuedAt(overrides.iat ?? now)
            .setExpirationTime(overrides.exp ?? now + 60)
            .setJti(randomUUID())
            .sign(key);

        // A valid assertion whose claims are changed after signing.
        const [header, , signature] = (await signed({})).split(".");
        const tampered = `${header}.${base64urlJson({ ...claims, exp: now + 240 })}.${signature}`;
        const hs256 = await new SignJWT({ ...claims, jti: randomUUID() })
          .setProtectedHeader({ alg: "HS256" })
          .sign(new TextEncoder().encode("a-shared-secret-of-32-bytes-long!"));

        const cases: Array<[string, string, string]> = [
          ["audience of another endpoint (PAR)", await signed({ aud: parEndpoint }), jwtBearer],
          ["audience of the token endpoint URL (only the issuer identifier is accepted)", await signed({ aud: tokenEndpoint }), jwtBearer],
          ["audience of the issuer and another server at once", await signed({ aud: [issuer, "https://other-as.example"] }), jwtBearer],
          ["audience of another server", await signed({ aud: "https://evil.example/token" }), jwtBearer],
          ["expired two minutes ago", await signed({ iat: now - 180, exp: now - 120 }), jwtBearer],
          ["signed with a key not in the client's JWKS", await signed({}, strangerKey), jwtBearer],
          ["alg none, unsigned", hand({ alg: "none", typ: "JWT" }, claims), jwtBearer],
          ["alg none with the signature of a valid assertion", hand({ alg: "none" }, claims, (await signed({})).split(".")[2]), jwtBearer],
          ["HS256 (client_secret_jwt is not accepted)", hs256, jwtBearer],
          ["a valid signature over altered claims (exp pushed back)", tampered, jwtBearer],
          ["not a JWT at all", "not-a-jwt", jwtBearer],
          ["three segments of garbage", "a.b.c", jwtBearer],
          ["a header that is not JSON", `${Buffer.from("{alg").toString("base64url")}.${base64urlJson(claims)}.sig`, jwtBearer],
          ["client_assertion_type saml2-bearer", await signed({}), "urn:ietf:params:oauth:client-assertion-type:saml2-bearer"],
          ["client_assertion_type misspelled", await signed({}), `${jwtBearer}x`],
        ];

        for (const [name, assertion, type] of cases) {
          const reply = await postToken(live(), {
            grant_type: "authorization_code",
            code,
            redirect_uri: redirects.jwt,
            client_id: clientIds.jwt,
            client_assertion_type: type,
            client_assertion: assertion,
          });
          expect(reply.json?.error, `${name}: ${reply.text}`).toBe("invalid_client");
          expectInvalidClient(reply);
        }
        expect(await tokenCount()).toBe(before);
        expect((await findCode(live(), code))!.consumedAt).toBeNull();

        expectIssued(
          await postToken(live(), {
            grant_type: "authorization_code",
            code,
            redirect_uri: redirects.jwt,
            client_id: clientIds.jwt,
            client_assertion_type: jwtBearer,
            client_assertion: await signed({}),
          }),
        );
      });

      it("a replayed assertion (same jti) → invalid_client, even with another code; the code stays usable", async () => {
        const assertion = await clientAssertion(privateKey, clientIds.jwt, issuer);
        const form = (code: string) => ({
          grant_type: "authorization_code",
          code,
          redirect_uri: redirects.jwt,
          client_id: clientIds.jwt,
          client_assertion_type: jwtBearer,
          client_assertion: assertion,
        });
        expectIssued(await postToken(live(), form(await codeFor("jwt"))));

        const second = await codeFor("jwt");
        const before = await tokenCount();
        expectInvalidClient(await postToken(live(), form(second)));
        // Also as a refresh request.
        expectInvalidClient(
          await postToken(live(), { grant_type: "refresh_token", refresh_token: "x".repeat(43), client_assertion_type: jwtBearer, client_assertion: assertion }),
        );
        expect(await tokenCount()).toBe(before);
        expect((await findCode(live(), second))!.consumedAt).toBeNull();
        expectIssued(await exchange("jwt", second));
      });

      it("the same jti in a new assertion is a replay too", async () => {
        const jti = randomUUID();
        expectIssued(
          await postToken(live(), {
            grant_type: "authorization_code",
            code: await codeFor("jwt"),
            redirect_uri: redirects.jwt,
            client_id: clientIds.jwt,
            client_assertion_type: jwtBearer,
            client_assertion: await clientAssertion(privateKey, clientIds.jwt, issuer, jti),
          }),
        );
        expectInvalidClient(
          await postToken(live(), {
            grant_type: "authorization_code",
            code: await codeFor("jwt"),
            redirect_uri: redirects.jwt,
            client_id: clientIds.jwt,
            client_assertion_type: jwtBearer,
            client_assertion: await clientAssertion(privateKey, clientIds.jwt, issuer, jti),
          }),
        );
      });
    });

    describe("invalid_grant (400)", () => {
      it("an unknown code", async () => {
        const before = await tokenCount();
        expectTokenError(await exchange("basic", "A".repeat(43)), 400, "invalid_grant");
        expectTokenError(await exchange("basic", "not-a-code"), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);
      });

      it("an expired code", async () => {
        const code = await codeFor("basic");
        await live()
          .database.db.updateTable("one_time_records")
          .set({ expires_at: Date.now() - 1000 })
          .where("kind", "=", "authorization_code")
          .where("key_hash", "=", storedKeyOf(code))
          .execute();
        const before = await tokenCount();
        expectTokenError(await exchange("basic", code), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);
      });

      it("a code issued to another client; the code is left to its client, which can still redeem it", async () => {
        const code = await codeFor("basic");
        const before = await tokenCount();
        // With the other client's own redirect_uri, and with the one the code was issued for.
        expectTokenError(await exchange("post", code), 400, "invalid_grant");
        expectTokenError(await exchange("post", code, { redirect_uri: redirects.basic }), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);
        expect((await findCode(live(), code))!.consumedAt).toBeNull();
        expectIssued(await exchange("basic", code));
      });

      it("a redirect_uri that differs from the authorization request's; the failed check burns the code", async () => {
        const code = await codeFor("basic");
        const before = await tokenCount();
        for (const redirectUri of [`${redirects.basic}/`, "https://basic.example/CB", redirects.post]) {
          // Only the first attempt gets as far as the redirect_uri check; the code is used up by it.
          expectTokenError(await exchange("basic", code, { redirect_uri: redirectUri }), 400, "invalid_grant");
        }
        expectTokenError(await exchange("basic", code), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);
      });

      it("a wrong code_verifier; the failed check burns the code", async () => {
        const { verifier, challenge } = pkce();
        const code = await codeFor("basic", { codeChallenge: challenge });
        const before = await tokenCount();
        expectTokenError(await exchange("basic", code, { code_verifier: pkce().verifier }), 400, "invalid_grant");
        expectTokenError(await exchange("basic", code, { code_verifier: verifier }), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);
      });

      it.each([
        ["the challenge itself", (p: { verifier: string; challenge: string }) => p.challenge],
        ["a verifier too short (42 characters)", (p: { verifier: string; challenge: string }) => p.verifier.slice(0, 42)],
        ["the verifier with an extra character", (p: { verifier: string; challenge: string }) => `${p.verifier}a`],
      ])("code_verifier: %s → invalid_grant", async (_name, pick) => {
        const pair = pkce();
        const code = await codeFor("basic", { codeChallenge: pair.challenge });
        expectTokenError(await exchange("basic", code, { code_verifier: pick(pair) }), 400, "invalid_grant");
      });

      it("no code_verifier for a code issued with a code_challenge", async () => {
        const { verifier, challenge } = pkce();
        const code = await codeFor("basic", { codeChallenge: challenge });
        const before = await tokenCount();
        expectTokenError(await exchange("basic", code), 400, "invalid_grant");
        expectTokenError(await exchange("basic", code, { code_verifier: verifier }), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);
      });

      it("a code_verifier for a code issued without a code_challenge", async () => {
        const code = await codeFor("basic");
        const before = await tokenCount();
        expectTokenError(await exchange("basic", code, { code_verifier: pkce().verifier }), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);
      });

      it("a public client's code issued without PKCE cannot be redeemed", async () => {
        // The authorization endpoint no longer issues one (public clients must send code_challenge); a code stored
        // before that rule is still refused here.
        const code = randomUUID();
        const now = Date.now();
        await new OneTimeRecords(live().database).issue({
          kind: "authorization_code",
          keyHash: storedKeyOf(code),
          owner: clientIds.public,
          payload: { clientId: clientIds.public, redirectUri: redirects.public, codeChallenge: null, nonce: null, scopes: ["openid"], authorizationDetails: [], grantId: "g", userId: user.row.id, authTime: now, acr: "low", amr: ["pwd"] },
          now,
          ttlMs: 60_000,
        });
        const before = await tokenCount();
        expectTokenError(await exchange("public", code), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);
      });

      it("an unknown refresh token, and an access token presented as a refresh token", async () => {
        const tokens = expectIssued(await exchange("basic", await codeFor("basic", { scope: "openid offline_access" })));
        const before = await tokenCount();
        expectTokenError(await refresh("basic", "B".repeat(43)), 400, "invalid_grant");
        expectTokenError(await refresh("basic", tokens.access_token), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);
        // Neither attempt harmed the real tokens.
        expect((await getUserinfo(live(), tokens.access_token)).status).toBe(200);
        expectIssued(await refresh("basic", tokens.refresh_token!));
      });

      it("codes and tokens stored before ordered secrets (43 characters, keyed by their whole SHA-256) still work", async () => {
        const db = live().database.db;
        const legacy = () => randomBytes(32).toString("base64url");
        // A code as the previous version stored it: its record keyed by the SHA-256 of a 43-character value.
        const code = await codeFor("basic", { scope: "openid offline_access" });
        const oldCode = legacy();
        await db.updateTable("one_time_records").set({ key_hash: sha256Hex(oldCode) }).where("key_hash", "=", storedKeyOf(code)).executeTakeFirstOrThrow();
        expect(oldCode).toHaveLength(43);
        expect(storedKeyOf(oldCode)).toBe(sha256Hex(oldCode));
        expectTokenError(await exchange("basic", code), 400, "invalid_grant");
        const tokens = expectIssued(await exchange("basic", oldCode));
        // Tokens as the previous version stored them.
        const oldAccess = legacy();
        const oldRefresh = legacy();
        for (const [value, old] of [[tokens.access_token, oldAccess], [tokens.refresh_token!, oldRefresh]] as const) {
          await db.updateTable("oidc_tokens").set({ token_hash: sha256Hex(old) }).where("token_hash", "=", storedKeyOf(value)).executeTakeFirstOrThrow();
        }
        expect((await getUserinfo(live(), oldAccess)).status).toBe(200);
        expect((await getUserinfo(live(), tokens.access_token)).status).toBe(401);
        const refreshed = expectIssued(await refresh("basic", oldRefresh));
        expect(refreshed.refresh_token).toMatch(/^[A-Za-z0-9_-]{51}$/);
        // Rotation used the old token up: presenting it again is a replay.
        expectTokenError(await refresh("basic", oldRefresh), 400, "invalid_grant");
      });

      it("a rotated refresh token", async () => {
        const first = expectIssued(await exchange("basic", await codeFor("basic", { scope: "openid offline_access" })));
        expectIssued(await refresh("basic", first.refresh_token!));
        const before = await tokenCount();
        expectTokenError(await refresh("basic", first.refresh_token!), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);
      });

      it("a refresh token of another client; the owner's token is left intact", async () => {
        const tokens = expectIssued(await exchange("post", await codeFor("post", { scope: "openid offline_access" })));
        const before = await tokenCount();
        expectTokenError(await refresh("basic", tokens.refresh_token!), 400, "invalid_grant");
        expectTokenError(await refresh("public", tokens.refresh_token!), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);
        expect((await tokenRow(tokens.refresh_token!))).toMatchObject({ consumed_at: null, revoked_at: null });
        expect((await getUserinfo(live(), tokens.access_token)).status).toBe(200);
        expectIssued(await refresh("post", tokens.refresh_token!));
      });
    });

    describe("unsupported_grant_type and unauthorized_client (400)", () => {
      it.each([
        ["password", { username: "someone", password: "secret" }],
        ["client_credentials", { scope: "openid" }],
        ["implicit", {}],
        ["urn:ietf:params:oauth:grant-type:jwt-bearer", { assertion: "a.b.c" }],
        ["urn:ietf:params:oauth:grant-type:device_code", { device_code: "x" }],
        ["AUTHORIZATION_CODE", {}],
      ] as Array<[string, Record<string, string>]>)("grant_type=%s → unsupported_grant_type", async (grantType, extra) => {
        const before = await tokenCount();
        expectTokenError(await token("basic", { grant_type: grantType, ...extra }), 400, "unsupported_grant_type");
        expect(await tokenCount()).toBe(before);
      });

      it("a client registered for authorization_code only gets no refresh token even with offline_access, and refresh_token is unauthorized_client", async () => {
        const code = await codeFor("codeOnly", { scope: "openid offline_access" });
        const before = await tokenCount();
        const tokens = expectIssued(await exchange("codeOnly", code));
        expect(tokens.scope.split(" ").sort()).toEqual(["offline_access", "openid"]);
        expect(tokens).not.toHaveProperty("refresh_token");
        expect(tokens.id_token).toBeDefined();
        expect(await tokenCount()).toBe(before + 1);

        // Refresh is refused for what the client is, whatever token it presents: an unknown one or another client's live one.
        const foreign = expectIssued(await exchange("basic", await codeFor("basic", { scope: "openid offline_access" })));
        const afterForeign = await tokenCount();
        expectTokenError(await refresh("codeOnly", "C".repeat(43)), 400, "unauthorized_client");
        expectTokenError(await refresh("codeOnly", foreign.refresh_token!), 400, "unauthorized_client");
        expect(await tokenCount()).toBe(afterForeign);
        expectIssued(await refresh("basic", foreign.refresh_token!));
      });
    });

    describe("invalid_scope (400)", () => {
      it("a refresh asking for a scope that was not granted; nothing is issued and the refresh token stays usable", async () => {
        const tokens = expectIssued(await exchange("basic", await codeFor("basic", { scope: "openid profile offline_access" })));
        const before = await tokenCount();
        for (const scope of ["openid email", "openid profile offline_access email", "payments"]) {
          expectTokenError(await refresh("basic", tokens.refresh_token!, { scope }), 400, "invalid_scope");
        }
        expect(await tokenCount()).toBe(before);
        // The refused requests did not use up the token: it still refreshes, and nothing was revoked.
        const refreshed = expectIssued(await refresh("basic", tokens.refresh_token!));
        expect(refreshed.scope.split(" ").sort()).toEqual(["offline_access", "openid", "profile"]);
        expect((await getUserinfo(live(), tokens.access_token)).status).toBe(200);
      });
    });

    describe("code replay", () => {
      it("a second use → invalid_grant, and every token from the first use (and its refreshes) is revoked", async () => {
        const code = await codeFor("basic", { scope: "openid profile offline_access" });
        const first = expectIssued(await exchange("basic", code));
        const rotated = expectIssued(await refresh("basic", first.refresh_token!));
        expect((await getUserinfo(live(), first.access_token)).status).toBe(200);
        expect((await getUserinfo(live(), rotated.access_token)).status).toBe(200);

        const before = await tokenCount();
        expectTokenError(await exchange("basic", code), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);

        for (const accessToken of [first.access_token, rotated.access_token]) {
          const info = await getUserinfo(live(), accessToken);
          expect(info.status).toBe(401);
          expect(info.headers.get("www-authenticate")).toContain('error="invalid_token"');
        }
        expectTokenError(await refresh("basic", rotated.refresh_token!), 400, "invalid_grant");
        expectTokenError(await refresh("basic", first.refresh_token!), 400, "invalid_grant");
        for (const value of [first.access_token, first.refresh_token!, rotated.access_token, rotated.refresh_token!]) {
          expect((await tokenRow(value))!.revoked_at).not.toBeNull();
        }
      });

      it("a replay by another client neither succeeds nor revokes the rightful client's tokens", async () => {
        const code = await codeFor("basic", { scope: "openid offline_access" });
        const tokens = expectIssued(await exchange("basic", code));
        expectTokenError(await exchange("post", code, { redirect_uri: redirects.basic }), 400, "invalid_grant");
        expect((await getUserinfo(live(), tokens.access_token)).status).toBe(200);
        expectIssued(await refresh("basic", tokens.refresh_token!));
      });

      it("the same code redeemed by 10 concurrent requests: one redemption stores tokens, and the replays revoke them", async () => {
        const code = await codeFor("basic");
        const before = await tokenCount();
        const replies = await Promise.all(Array.from({ length: 10 }, () => exchange("basic", code)));
        // The one redemption that won may already have answered before any replay arrived, or may learn of
        // the replays once its tokens are stored and answer invalid_grant: either way, never two successes.
        const won = replies.filter((r) => r.status === 200);
        expect(won.length).toBeLessThanOrEqual(1);
        for (const reply of won) expectIssued(reply);
        for (const reply of replies.filter((r) => r.status !== 200)) expectTokenError(reply, 400, "invalid_grant");
        // Exactly one access token was stored (scope openid: no refresh token), and the replays revoked it.
        expect(await tokenCount()).toBe(before + 1);
        const stored = await live().database.db.selectFrom("oidc_tokens").select("revoked_at").where("family", "=", storedKeyOf(code)).execute();
        expect(stored).toHaveLength(1);
        expect(stored[0]!.revoked_at).not.toBeNull();
      });
    });

    describe("refresh tokens", () => {
      it("are issued only when offline_access was granted", async () => {
        const code = await codeFor("post", { scope: "openid profile" });
        const before = await tokenCount();
        const tokens = expectIssued(await exchange("post", code));
        expect(tokens).not.toHaveProperty("refresh_token");
        expect(await tokenCount()).toBe(before + 1);
        expect((await tokenRow(tokens.access_token))!.kind).toBe("access");
      });

      it("rotate: each refresh returns new tokens and uses up the old refresh token; the refresh answer has every member", async () => {
        const details = [{ type: "account_information", actions: ["read_balances"] }];
        const code = await codeFor("basic", { scope: "openid profile offline_access", authorizationDetails: details });
        const first = expectIssued(await exchange("basic", code));
        const seen = new Set([first.access_token, first.refresh_token!]);
        let current = first;
        for (let i = 0; i < 3; i++) {
          const before = await tokenCount();
          const next = expectIssued(await refresh("basic", current.refresh_token!));
          expect(Object.keys(next).sort()).toEqual(
            ["access_token", "token_type", "expires_in", "scope", "id_token", "refresh_token", "grant_id", "authorization_details"].sort(),
          );
          expect(next.grant_id).toBe(first.grant_id);
          expect(next.scope).toBe(first.scope);
          expect(next.authorization_details).toEqual(details);
          expect(seen.has(next.access_token)).toBe(false);
          expect(seen.has(next.refresh_token!)).toBe(false);
          seen.add(next.access_token).add(next.refresh_token!);
          expect(await tokenCount()).toBe(before + 2);
          expect((await tokenRow(current.refresh_token!))!.consumed_at).not.toBeNull();
          expect((await getUserinfo(live(), next.access_token)).status).toBe(200);
          current = next;
        }
      });

      it("replaying a rotated refresh token revokes the whole family: the newest refresh token and the access tokens stop working", async () => {
        const first = expectIssued(await exchange("basic", await codeFor("basic", { scope: "openid offline_access" })));
        const second = expectIssued(await refresh("basic", first.refresh_token!));
        const third = expectIssued(await refresh("basic", second.refresh_token!));
        expect((await getUserinfo(live(), third.access_token)).status).toBe(200);

        const before = await tokenCount();
        expectTokenError(await refresh("basic", second.refresh_token!), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);

        expectTokenError(await refresh("basic", third.refresh_token!), 400, "invalid_grant");
        for (const tokens of [first, second, third]) {
          expect((await getUserinfo(live(), tokens.access_token)).status).toBe(401);
          expect((await tokenRow(tokens.access_token))!.revoked_at).not.toBeNull();
          expect((await tokenRow(tokens.refresh_token!))!.revoked_at).not.toBeNull();
        }

        // Another family of the same user and client is not affected.
        const other = expectIssued(await exchange("basic", await codeFor("basic", { scope: "openid offline_access" })));
        expectIssued(await refresh("basic", other.refresh_token!));
      });

      it("sid: one per session, stable across its codes, neither the cookie nor its stored hash; userinfo says the same", async () => {
        const b = new Browser(live().url);
        const request = { clientId: clientIds.basic, redirectUri: redirects.basic, scope: "openid" };
        const first = expectIssued(await exchange("basic", await obtainCode(live(), b, user, request)));
        const cookie = b.jar.get(sessionCookie);
        expect(cookie).toMatch(/^[A-Za-z0-9_-]{43}$/);
        const sid = (await verifiedIdToken(first.id_token!, clientIds.basic)).payload.sid;
        expect(sid).toMatch(/^[A-Za-z0-9_-]{43}$/);
        expect(sid).not.toBe(cookie);
        expect(sid).not.toBe(sha256Hex(cookie!));
        expect(sid).not.toBe(Buffer.from(sha256Hex(cookie!), "hex").toString("base64url"));

        // The same session, later: the same sid; in the ID token and at userinfo.
        const second = expectIssued(await exchange("basic", await obtainCode(live(), b, user, request)));
        expect((await verifiedIdToken(second.id_token!, clientIds.basic)).payload.sid).toBe(sid);
        const info = await getUserinfo(live(), second.access_token);
        expect(info.status).toBe(200);
        expect(info.json).toMatchObject({ sid, acr: "low", amr: ["pwd"] });
        expect(info.json.auth_time).toBe((await verifiedIdToken(second.id_token!, clientIds.basic)).payload.auth_time);

        // Another session of the same user: another sid.
        const other = expectIssued(await exchange("basic", await obtainCode(live(), new Browser(live().url), user, request)));
        expect((await verifiedIdToken(other.id_token!, clientIds.basic)).payload.sid).not.toBe(sid);
      });

      it("the refreshed ID token keeps sub, auth_time, acr, amr and sid, has no nonce, and its at_hash matches the new access token", async () => {
        const code = await codeFor("basic", { scope: "openid offline_access", nonce: "original-nonce" });
        const first = expectIssued(await exchange("basic", code));
        const original = (await verifiedIdToken(first.id_token!, clientIds.basic)).payload;
        expect(original.nonce).toBe("original-nonce");

        const refreshed = expectIssued(await refresh("basic", first.refresh_token!));
        expect(refreshed.id_token).toBeDefined();
        expect(refreshed.id_token).not.toBe(first.id_token);
        const { payload, kid } = await verifiedIdToken(refreshed.id_token!, clientIds.basic);
        expect(await publishedKids()).toContain(kid);
        expect(Object.keys(payload).sort()).toEqual(["acr", "amr", "at_hash", "aud", "auth_time", "azp", "exp", "iat", "iss", "jpki_verified", "sid", "sub"]);
        expect(payload.sid).toBe(original.sid);
        expect(payload).not.toHaveProperty("nonce");
        expect(payload.sub).toBe(original.sub);
        expect(payload.sub).toBe(user.row.id);
        expect(payload.auth_time).toBe(original.auth_time);
        expect(payload.acr).toBe(original.acr);
        expect(payload.amr).toEqual(original.amr);
        expect(payload.aud).toBe(clientIds.basic);
        expect(payload.azp).toBe(clientIds.basic);
        expect(payload.iat).toBeGreaterThanOrEqual(original.iat!);
        expect(payload.exp).toBe(payload.iat! + idTokenLifetime);
        expect(payload.at_hash).toBe(expectedAtHash(refreshed.access_token));
        expect(payload.at_hash).not.toBe(original.at_hash);
      });

      it("scope narrowing: the access token gets the narrower scope; the refresh token keeps the original one (RFC 6749 §6)", async () => {
        const tokens = expectIssued(await exchange("basic", await codeFor("basic", { scope: "openid profile email offline_access" })));
        expect(tokens.scope.split(" ").sort()).toEqual(["email", "offline_access", "openid", "profile"]);

        const narrowed = expectIssued(await refresh("basic", tokens.refresh_token!, { scope: "openid offline_access" }));
        expect(narrowed.scope).toBe("openid offline_access");
        const narrowInfo = await getUserinfo(live(), narrowed.access_token);
        expect(narrowInfo.status).toBe(200);
        expect(narrowInfo.json).toEqual({ sub: user.row.id, auth_time: expect.any(Number), acr: "low", amr: ["pwd"], sid: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), jpki_verified: false });
        expect(JSON.parse((await tokenRow(narrowed.access_token))!.scopes)).toEqual(["openid", "offline_access"]);

        // Narrower still, without offline_access: the client keeps a refresh token.
        const openidOnly = expectIssued(await refresh("basic", narrowed.refresh_token!, { scope: "openid" }));
        expect(openidOnly.scope).toBe("openid");
        expect(openidOnly.refresh_token).toBeDefined();
        expect(openidOnly.id_token).toBeDefined();

        // Omitted, the scope is the one originally granted, and it can be asked for in full again.
        const full = expectIssued(await refresh("basic", openidOnly.refresh_token!));
        expect(full.scope.split(" ").sort()).toEqual(["email", "offline_access", "openid", "profile"]);
        const fullInfo = await getUserinfo(live(), full.access_token);
        expect(fullInfo.json).toMatchObject({ sub: user.row.id, name: "Test User", email: `${user.login}@example.com` });
        const again = expectIssued(await refresh("basic", full.refresh_token!, { scope: "profile openid" }));
        expect(again.scope).toBe("profile openid");

        // Narrowing to a scope without openid: no ID token.
        const profileOnly = expectIssued(await refresh("basic", again.refresh_token!, { scope: "profile" }));
        expect(profileOnly.scope).toBe("profile");
        expect(profileOnly).not.toHaveProperty("id_token");
      });

      it("the same refresh token presented by 10 concurrent requests: one use rotates it, and the replays revoke the family", async () => {
        const tokens = expectIssued(await exchange("basic", await codeFor("basic", { scope: "openid offline_access" })));
        const family = (await tokenRow(tokens.refresh_token!))!.family;
        const before = await tokenCount();
        const replies = await Promise.all(Array.from({ length: 10 }, () => refresh("basic", tokens.refresh_token!)));
        const won = replies.filter((r) => r.status === 200);
        expect(won.length).toBeLessThanOrEqual(1);
        for (const reply of won) expectIssued(reply);
        for (const reply of replies.filter((r) => r.status !== 200)) expectTokenError(reply, 400, "invalid_grant");
        // One rotation stored one access and one refresh token; every token of the family ends revoked.
        expect(await tokenCount()).toBe(before + 2);
        const stored = await live().database.db.selectFrom("oidc_tokens").select("revoked_at").where("family", "=", family).execute();
        expect(stored).toHaveLength(4);
        expect(stored.every((row) => row.revoked_at !== null)).toBe(true);
      });
    });

    it("no code, token, secret, verifier or password ever reaches the logs", async () => {
      const { verifier, challenge } = pkce();
      const code = await codeFor("basic", { scope: "openid profile offline_access", codeChallenge: challenge });
      const issued = expectIssued(await exchange("basic", code, { code_verifier: verifier }));
      const refreshed = expectIssued(await refresh("basic", issued.refresh_token!));
      await getUserinfo(live(), refreshed.access_token);
      await token("post", { grant_type: "authorization_code", code: "not-a-code", redirect_uri: redirects.post });
      const logs = live().rawLogs();
      expect(logs).toContain("/api/oidc/v1/token");
      for (const value of [code, verifier, issued.access_token, issued.refresh_token!, issued.id_token!, refreshed.access_token, refreshed.refresh_token!, secrets.basic, secrets.post, user.password]) {
        expect(logs).not.toContain(value);
      }
    });
  });
}
