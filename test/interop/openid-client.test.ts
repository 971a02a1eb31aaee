import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { decodeProtectedHeader, exportJWK, generateKeyPair } from "jose";
import * as client from "openid-client";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { storedKeyOf } from "../../src/domain/oidc/flow/secrets.ts";
import { browserSuiteTitle, browserUnavailable, launchBrowser } from "../support/browser.ts";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { createUser, registerClient, type TestUser } from "../support/oidc.ts";
import { authorizeInBrowser, startRelyingParty, type InteractionPage, type RelyingParty } from "../support/relying-party.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/*
 * Interoperability with an independent, certified relying-party library:
 * openid-client drives discovery, pushed authorization requests, the token,
 * userinfo, introspection and revocation endpoints and the grant management
 * API, unchanged, against the real server. The person in the middle is real
 * Chromium, and the authorization response lands on a relying party's own
 * HTTP server. The library validates everything it receives (ID token
 * signature via the JWKS, iss, aud, nonce, the RFC 9207 iss parameter, state),
 * so a passing flow means the provider's answers satisfy it.
 */
const unavailable = browserUnavailable();
const targets = await databaseTargets();

const scope = "openid profile email offline_access";

type Method = "client_secret_basic" | "client_secret_post" | "private_key_jwt";
const methods: Method[] = ["client_secret_basic", "client_secret_post", "private_key_jwt"];

/** A registered client and the library's view of it after discovery. */
interface RelyingPartyClient {
  clientId: string;
  config: client.Configuration;
}

/** One authorization request as the library made it, and the response the relying party received. */
interface Authorization {
  state: string;
  nonce: string;
  verifier: string;
  /** The interaction pages the browser went through. */
  pages: InteractionPage[];
  /** The request to the relying party's callback, as it arrived there. */
  response: URL;
}

/** Asserts that the promise rejects with an OAuth error response whose `error` is `code`; returns it. */
async function expectOAuthError(promise: Promise<unknown>, code: string, status = 400): Promise<client.ResponseBodyError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected the library to throw ${code}`).toBeInstanceOf(client.ResponseBodyError);
  const body = error as client.ResponseBodyError;
  expect(body.error, body.error_description).toBe(code);
  expect(body.status).toBe(status);
  expect(body.error_description).toMatch(/\S/);
  return body;
}

/** Asserts a 401 with a WWW-Authenticate challenge carrying `error` (or none), as the library reports it. */
async function expectChallenge(promise: Promise<unknown>, scheme: string, code?: string): Promise<client.WWWAuthenticateChallengeError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected a ${scheme} challenge`).toBeInstanceOf(client.WWWAuthenticateChallengeError);
  const challenge = error as client.WWWAuthenticateChallengeError;
  expect(challenge.status).toBe(401);
  expect(challenge.cause.map((c) => c.scheme)).toEqual([scheme.toLowerCase()]);
  expect(challenge.cause[0]!.parameters.error).toBe(code);
  return challenge;
}

for (const target of targets) {
  const title = browserSuiteTitle(`openid-client against shomei, ${target.name}`, unavailable ?? target.unavailable);
  describe.skipIf(unavailable !== undefined || target.unavailable !== undefined)(title, () => {
    let dataDir: string;
    let database: ScratchDatabase;
    let server: TestServer;
    let rp: RelyingParty;
    let browser: Browser;
    let issuer: string;
    const contexts: BrowserContext[] = [];

    beforeAll(async () => {
      dataDir = mkdtempSync(path.join(tmpdir(), "shomei-interop-"));
      database = await target.create();
      // Levels named by URNs too, as deployments do; the built-in names stay.
      const acrPolicyFile = path.join(dataDir, "acr.json");
      writeFileSync(
        acrPolicyFile,
        JSON.stringify({
          levels: [
            { name: "low", aliases: ["urn:example:acr:low"], methods: [["pwd"]] },
            { name: "high", aliases: ["urn:example:acr:high"], methods: [["pwd", "otp"]] },
            { name: "very_high" },
          ],
        }),
      );
      server = await startTestServer(database.url, { dataDir, acrPolicyFile });
      issuer = server.domain.oidc.issuer;
      rp = await startRelyingParty();
      browser = await launchBrowser();
    });

    afterAll(async () => {
      for (const context of contexts) await context.close().catch(() => undefined);
      await browser?.close();
      await rp?.close();
      await server?.close();
      await database?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    /** A fresh browser profile with one tab: no session at the provider yet. */
    async function newPage(): Promise<Page> {
      const context = await browser.newContext();
      contexts.push(context);
      context.setDefaultTimeout(10_000);
      return context.newPage();
    }

    /**
     * Registers a client for `method` and lets the library discover the
     * provider for it. `alg.registered` is the client's
     * id_token_signed_response_alg at the provider (left out: the default);
     * `alg.expected` is what the library is told, and then enforces.
     */
    async function newClient(method: Method, name: string, alg: { registered?: string; expected?: string } = {}): Promise<RelyingPartyClient> {
      const clientId = `interop-${name}-${randomBytes(4).toString("hex")}`;
      const common = {
        client_id: clientId,
        client_name: `Interop ${name}`,
        redirect_uris: [rp.redirectUri],
        scope,
        token_endpoint_auth_method: method,
        ...(alg.registered ? { id_token_signed_response_alg: alg.registered } : {}),
      };
      let auth: client.ClientAuth;
      if (method === "private_key_jwt") {
        const { publicKey, privateKey } = await generateKeyPair("ES256");
        const kid = `${clientId}-key`;
        await registerClient(server, { ...common, jwks: { keys: [{ ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig" }] } });
        auth = client.PrivateKeyJwt({ key: privateKey, kid });
      } else {
        const secret = randomBytes(24).toString("base64url");
        await registerClient(server, { ...common, client_secret: secret });
        auth = method === "client_secret_basic" ? client.ClientSecretBasic(secret) : client.ClientSecretPost(secret);
      }
      const metadata = alg.expected ? { id_token_signed_response_alg: alg.expected } : undefined;
      const config = await client.discovery(new URL(issuer), clientId, metadata, auth, { execute: [client.allowInsecureRequests] });
      return { clientId, config };
    }

    /**
     * PAR with PKCE S256, state and nonce through the library, then the
     * browser from the returned URL to the relying party's callback.
     */
    async function authorize(
      rpClient: RelyingPartyClient,
      page: Page,
      user: TestUser & { otp?: () => string },
      extra: Record<string, string> = {},
    ): Promise<Authorization> {
      const verifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const nonce = client.randomNonce();
      const url = await client.buildAuthorizationUrlWithPAR(rpClient.config, {
        redirect_uri: rp.redirectUri,
        scope,
        ...extra,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256",
        state,
        nonce,
      });
      // What the library built: the authorization endpoint with client_id and request_uri only.
      expect(`${url.origin}${url.pathname}`).toBe(server.domain.oidc.endpoints.authorization);
      expect([...url.searchParams.keys()].sort()).toEqual(["client_id", "request_uri"]);
      expect(url.searchParams.get("request_uri")).toMatch(/^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{51}$/);
      const pages = await authorizeInBrowser(page, url, rp.redirectUri, user);
      const response = rp.responseFor(state);
      expect(page.url()).toBe(response.href);
      return { state, nonce, verifier, pages, response };
    }

    function redeem(rpClient: RelyingPartyClient, a: Authorization, verifier = a.verifier) {
      return client.authorizationCodeGrant(rpClient.config, a.response, {
        pkceCodeVerifier: verifier,
        expectedState: a.state,
        expectedNonce: a.nonce,
        idTokenExpected: true,
      });
    }

    function grantUrl(rpClient: RelyingPartyClient, grantId: string): URL {
      const endpoint = rpClient.config.serverMetadata().grant_management_endpoint;
      expect(typeof endpoint).toBe("string");
      return new URL(`${endpoint as string}/${encodeURIComponent(grantId)}`);
    }

    it("discovery: the library accepts the issuer and reads the endpoints it needs", async () => {
      const rpClient = await newClient("client_secret_basic", "discovery");
      const metadata = rpClient.config.serverMetadata();
      expect(metadata.issuer).toBe(issuer);
      expect(metadata.supportsPKCE()).toBe(true);
      expect(metadata.supportsPKCE("plain")).toBe(false);
      expect(metadata.token_endpoint).toBe(server.domain.oidc.endpoints.token);
      expect(metadata.pushed_authorization_request_endpoint).toBe(server.domain.oidc.endpoints.par);
      expect(metadata.jwks_uri).toBe(server.domain.oidc.endpoints.jwks);
      expect(metadata.grant_management_endpoint).toBe(server.domain.oidc.endpoints.grants);
      expect(metadata.authorization_response_iss_parameter_supported).toBe(true);
      expect(rpClient.config.clientMetadata().client_id).toBe(rpClient.clientId);
    });

    it("discovery: the issuer is http://localhost:<port> (derived, not the bound 127.0.0.1), and only that URL passes the library's issuer check", async () => {
      expect(issuer).toBe(`http://localhost:${server.port}`);
      expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
      // The same document fetched through the bound address names a different issuer; the library refuses it (OIDC Discovery §4.3).
      const refused = await client
        .discovery(new URL(server.url), "any-client", undefined, client.None(), { execute: [client.allowInsecureRequests] })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(refused).toBeInstanceOf(client.ClientError);
      expect((refused as client.ClientError).message).toBe("discovered metadata issuer does not match the expected issuer");
    });

    for (const method of methods) {
      describe(`${method}: PAR, code, tokens, userinfo, refresh, introspection, revocation, grant management`, () => {
        let rpClient: RelyingPartyClient;
        let user: TestUser;
        let page: Page;

        beforeAll(async () => {
          rpClient = await newClient(method, method.replace(/_/g, "-"));
        });

        // A person of each test's own, in a browser of their own: no test starts from another's session, grant or tokens.
        beforeEach(async () => {
          user = await createUser(server);
          page = await newPage();
        });

        afterEach(async () => {
          await page.context().close();
        });

        /** The person's first authorization (login and consent), redeemed: where every later step starts. */
        async function signedIn() {
          const a = await authorize(rpClient, page, user);
          expect(a.pages).toEqual(["login", "consent"]);
          const tokens = await redeem(rpClient, a);
          const idClaims = tokens.claims()!;
          return { idClaims, sub: idClaims.sub, grantId: tokens.grant_id as string, accessToken: tokens.access_token, refreshToken: tokens.refresh_token! };
        }

        it("PAR with PKCE → login and consent in Chromium → code exchanged; the library validates the ID token", async () => {
          const started = Math.floor(Date.now() / 1000);
          const a = await authorize(rpClient, page, user);
          expect(a.pages).toEqual(["login", "consent"]);
          expect([...a.response.searchParams.keys()].sort()).toEqual(["code", "iss", "state"]);
          expect(a.response.searchParams.get("iss")).toBe(issuer);

          const tokens = await redeem(rpClient, a);
          expect(tokens.token_type).toBe("bearer");
          expect(tokens.scope?.split(" ").sort()).toEqual(scope.split(" ").sort());
          expect(tokens.expiresIn()).toBeGreaterThan(3500);
          expect(tokens.refresh_token).toMatch(/\S/);
          expect(typeof tokens.grant_id).toBe("string");
          const claims = tokens.claims()!;
          expect(claims).toBeDefined();
          expect(claims.sub).toBe(user.row.id);
          expect(claims.iss).toBe(issuer);
          expect(claims.aud).toBe(rpClient.clientId);
          expect(claims.nonce).toBe(a.nonce);
          expect(claims.acr).toBe("low");
          expect(claims.amr).toEqual(["pwd"]);
          expect(claims.auth_time).toBeGreaterThanOrEqual(started - 1);
          expect(claims.auth_time).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 1);
          expect(claims.sid).toMatch(/^[A-Za-z0-9_-]{43}$/);
        });

        it("userinfo: the claims of the granted scopes and the authentication's, for the expected subject", async () => {
          const { sub, idClaims, accessToken } = await signedIn();
          const info = await client.fetchUserInfo(rpClient.config, accessToken, sub);
          expect(info).toEqual({
            sub,
            auth_time: idClaims.auth_time,
            acr: "low",
            amr: ["pwd"],
            sid: idClaims.sid,
            jpki_verified: false,
            name: "Test User",
            preferred_username: user.login,
            email: `${user.login}@example.com`,
            email_verified: false,
          });
        });

        it("refresh: new access and refresh tokens, and a refreshed ID token for the same subject", async () => {
          const { sub, grantId, accessToken, refreshToken } = await signedIn();
          const refreshed = await client.refreshTokenGrant(rpClient.config, refreshToken);
          expect(refreshed.access_token).not.toBe(accessToken);
          expect(refreshed.refresh_token).toMatch(/\S/);
          expect(refreshed.refresh_token).not.toBe(refreshToken);
          expect(refreshed.grant_id).toBe(grantId);
          const claims = refreshed.claims()!;
          expect(claims.sub).toBe(sub);
          expect(claims.aud).toBe(rpClient.clientId);
          expect(claims.nonce).toBeUndefined();
          expect(await client.fetchUserInfo(rpClient.config, refreshed.access_token, sub)).toMatchObject({ sub });
        });

        it("introspection: the client's live access and refresh tokens are active, an unknown value is not", async () => {
          const { sub, grantId, accessToken, refreshToken } = await signedIn();
          const access = await client.tokenIntrospection(rpClient.config, accessToken);
          expect(access).toMatchObject({ active: true, token_type: "Bearer", client_id: rpClient.clientId, sub, iss: issuer, grant_id: grantId });
          expect(access.scope?.split(" ").sort()).toEqual(scope.split(" ").sort());
          expect(access.exp).toBeGreaterThan(Math.floor(Date.now() / 1000));
          const refresh = await client.tokenIntrospection(rpClient.config, refreshToken, { token_type_hint: "refresh_token" });
          expect(refresh).toMatchObject({ active: true, client_id: rpClient.clientId, sub });
          // RFC 7662 token_type is the RFC 6749 type: access tokens have one, refresh tokens none.
          expect(refresh).not.toHaveProperty("token_type");
          expect(await client.tokenIntrospection(rpClient.config, randomBytes(32).toString("base64url"))).toEqual({ active: false });
        });

        it("revocation: a revoked access token is inactive and refused by userinfo; the refresh token still works", async () => {
          const { sub, accessToken, refreshToken } = await signedIn();
          await client.tokenRevocation(rpClient.config, accessToken, { token_type_hint: "access_token" });
          expect(await client.tokenIntrospection(rpClient.config, accessToken)).toEqual({ active: false });
          await expectChallenge(client.fetchUserInfo(rpClient.config, accessToken, sub), "Bearer", "invalid_token");
          // Revoking something unknown is not an error (RFC 7009 §2.2).
          await client.tokenRevocation(rpClient.config, randomBytes(32).toString("base64url"));

          const refreshed = await client.refreshTokenGrant(rpClient.config, refreshToken);
          expect(refreshed.claims()?.sub).toBe(sub);
          expect((await client.tokenIntrospection(rpClient.config, refreshed.access_token)).active).toBe(true);
        });

        it("grant management: the grant is queried, then revoked with DELETE, after which refresh and the tokens fail", async () => {
          const { grantId, accessToken, refreshToken } = await signedIn();
          const query = await client.fetchProtectedResource(rpClient.config, accessToken, grantUrl(rpClient, grantId), "GET");
          expect(query.status).toBe(200);
          const grant = (await query.json()) as { scopes: { scope: string }[] };
          expect(grant.scopes).toHaveLength(1);
          expect(grant.scopes[0]!.scope.split(" ").sort()).toEqual(scope.split(" ").sort());

          const revoke = await client.fetchProtectedResource(rpClient.config, accessToken, grantUrl(rpClient, grantId), "DELETE");
          expect(revoke.status).toBe(204);

          await expectOAuthError(client.refreshTokenGrant(rpClient.config, refreshToken), "invalid_grant");
          expect(await client.tokenIntrospection(rpClient.config, accessToken)).toEqual({ active: false });
          expect(await client.tokenIntrospection(rpClient.config, refreshToken)).toEqual({ active: false });
          await expectChallenge(
            client.fetchProtectedResource(rpClient.config, accessToken, grantUrl(rpClient, grantId), "GET"),
            "Bearer",
            "invalid_token",
          );
        });

        it("after the grant is revoked, a new authorization asks for consent again (the session is kept)", async () => {
          const { sub, grantId, accessToken } = await signedIn();
          const revoke = await client.fetchProtectedResource(rpClient.config, accessToken, grantUrl(rpClient, grantId), "DELETE");
          expect(revoke.status).toBe(204);
          const a = await authorize(rpClient, page, user);
          expect(a.pages).toEqual(["consent"]);
          const tokens = await redeem(rpClient, a);
          expect(tokens.claims()?.sub).toBe(sub);
          expect(tokens.grant_id).not.toBe(grantId);
        });
      });
    }

    describe("grant_management_action without grant_id acts on the user's current grant", () => {
      it("replace without grant_id replaces the grant the user already gave; merge without grant_id adds to it", async () => {
        const rpClient = await newClient("client_secret_basic", "replace");
        const user = await createUser(server);
        const page = await newPage();
        const first = await authorize(rpClient, page, user);
        expect(first.pages).toEqual(["login", "consent"]);
        const firstTokens = await redeem(rpClient, first);
        const grantId = firstTokens.grant_id as string;
        const grantScopes = async (accessToken: string) => {
          const reply = await client.fetchProtectedResource(rpClient.config, accessToken, grantUrl(rpClient, grantId), "GET");
          expect(reply.status).toBe(200);
          const grant = (await reply.json()) as { scopes: { scope: string }[] };
          return grant.scopes.map((s) => s.scope.split(" ").sort());
        };

        // Narrower than the grant: no page; the same grant now holds only the request.
        const replace = await authorize(rpClient, page, user, { scope: "openid email", grant_management_action: "replace" });
        expect(replace.pages).toEqual([]);
        const replaced = await redeem(rpClient, replace);
        expect(replaced.grant_id).toBe(grantId);
        expect(await grantScopes(replaced.access_token)).toEqual([["email", "openid"]]);

        // Wider than the grant: consent, then the same grant holds both.
        const merge = await authorize(rpClient, page, user, { scope: "openid profile", grant_management_action: "merge" });
        expect(merge.pages).toEqual(["consent"]);
        const merged = await redeem(rpClient, merge);
        expect(merged.grant_id).toBe(grantId);
        expect(await grantScopes(merged.access_token)).toEqual([["email", "openid", "profile"]]);
      });
    });

    describe("ACR levels named by URNs", () => {
      it("acr_values=urn:example:acr:high → the step-up page; the library validates an ID token whose acr is the URN", async () => {
        const rpClient = await newClient("client_secret_basic", "acr-urn");
        const user = await createUser(server, { totp: true });
        const page = await newPage();
        const otp = () => server.domain.oidc.users.currentOtp(user.row)!;
        const a = await authorize(rpClient, page, { ...user, otp }, { acr_values: "urn:example:acr:high" });
        expect(a.pages).toEqual(["login", "reauth", "consent"]);
        const tokens = await redeem(rpClient, a);
        expect(tokens.claims()!.acr).toBe("urn:example:acr:high");
        expect(tokens.claims()!.amr).toEqual(["pwd", "otp"]);
        expect(rpClient.config.serverMetadata().acr_values_supported).toEqual(["low", "urn:example:acr:low", "high", "urn:example:acr:high", "very_high"]);
      });

      it("acr_values of only unknown values: the library receives unmet_authentication_requirements", async () => {
        const rpClient = await newClient("client_secret_basic", "acr-unknown");
        const user = await createUser(server);
        const page = await newPage();
        const state = client.randomState();
        const verifier = client.randomPKCECodeVerifier();
        const url = await client.buildAuthorizationUrlWithPAR(rpClient.config, {
          redirect_uri: rp.redirectUri,
          scope: "openid",
          code_challenge: await client.calculatePKCECodeChallenge(verifier),
          code_challenge_method: "S256",
          state,
          acr_values: "urn:example:acr:unknown",
        });
        expect(await authorizeInBrowser(page, url, rp.redirectUri, user)).toEqual([]);
        const refused = await client
          .authorizationCodeGrant(rpClient.config, rp.responseFor(state), { pkceCodeVerifier: verifier, expectedState: state })
          .then(
            () => undefined,
            (e: unknown) => e,
          );
        expect(refused).toBeInstanceOf(client.AuthorizationResponseError);
        expect((refused as client.AuthorizationResponseError).error).toBe("unmet_authentication_requirements");
      });
    });

    describe("id_token_signed_response_alg: RS256 and ES256 ID tokens", () => {
      async function publishedKey(kid: string | undefined): Promise<Record<string, unknown> | undefined> {
        const jwks = (await (await fetch(server.domain.oidc.endpoints.jwks)).json()) as { keys: Record<string, unknown>[] };
        return jwks.keys.find((k) => k.kid === kid);
      }

      it("a client registered for RS256: the library, told RS256, validates the ID tokens from the code and from refresh", async () => {
        const rpClient = await newClient("client_secret_basic", "rs256", { registered: "RS256", expected: "RS256" });
        expect(rpClient.config.clientMetadata().id_token_signed_response_alg).toBe("RS256");
        expect(rpClient.config.serverMetadata().id_token_signing_alg_values_supported).toEqual(["ES256", "RS256", "PS256", "EdDSA"]);
        const user = await createUser(server);
        const a = await authorize(rpClient, await newPage(), user);

        const tokens = await redeem(rpClient, a);
        const header = decodeProtectedHeader(tokens.id_token!);
        expect(header).toEqual({ alg: "RS256", kid: expect.any(String), typ: "JWT" });
        expect(await publishedKey(header.kid)).toMatchObject({ kty: "RSA", alg: "RS256", use: "sig" });
        expect(tokens.claims()).toMatchObject({ sub: user.row.id, aud: rpClient.clientId, nonce: a.nonce, iss: issuer });

        const refreshed = await client.refreshTokenGrant(rpClient.config, tokens.refresh_token!);
        expect(decodeProtectedHeader(refreshed.id_token!)).toEqual(header);
        expect(refreshed.claims()).toMatchObject({ sub: user.row.id, aud: rpClient.clientId });
      });

      it("a client left at the default gets ES256, which the library told ES256 accepts and the library told RS256 refuses", async () => {
        const user = await createUser(server);
        const page = await newPage();
        const rpClient = await newClient("client_secret_basic", "es256", { expected: "ES256" });
        const tokens = await redeem(rpClient, await authorize(rpClient, page, user));
        const header = decodeProtectedHeader(tokens.id_token!);
        expect(header.alg).toBe("ES256");
        expect(await publishedKey(header.kid)).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig" });

        // The library does check alg against the client's metadata: an ES256 token is refused when it expects RS256.
        const mismatched = await newClient("client_secret_basic", "es256-told-rs256", { expected: "RS256" });
        const refused = await redeem(mismatched, await authorize(mismatched, page, user)).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(refused).toBeInstanceOf(client.ClientError);
        expect((refused as client.ClientError).message).toBe("invalid response encountered");
        expect((refused as client.ClientError).cause).toMatchObject({
          message: 'unexpected JWT "alg" header parameter',
          cause: { header: { alg: "ES256" }, expected: "RS256", reason: "client configuration" },
        });
      });
    });

    describe("the server's refusals reach the library as OAuth errors", () => {
      let owner: RelyingPartyClient;
      let other: RelyingPartyClient;
      let user: TestUser;
      let page: Page;

      beforeAll(async () => {
        owner = await newClient("client_secret_basic", "owner");
        other = await newClient("private_key_jwt", "other");
        user = await createUser(server);
        page = await newPage();
        // Sign in and consent once; later authorizations in this browser go straight back with a code.
        const first = await authorize(owner, page, user);
        expect(first.pages).toEqual(["login", "consent"]);
      });

      it("a wrong PKCE verifier: invalid_grant, and the code is spent (the right verifier fails afterwards)", async () => {
        const a = await authorize(owner, page, user);
        expect(a.pages).toEqual([]);
        const refused = await expectOAuthError(redeem(owner, a, client.randomPKCECodeVerifier()), "invalid_grant");
        expect(refused.error_description).toBe("code_verifier does not match the code_challenge");
        await expectOAuthError(redeem(owner, a), "invalid_grant");
      });

      it("a reused code: invalid_grant, and the tokens issued for its first use are revoked", async () => {
        const a = await authorize(owner, page, user);
        const tokens = await redeem(owner, a);
        expect((await client.tokenIntrospection(owner.config, tokens.access_token)).active).toBe(true);
        const refused = await expectOAuthError(redeem(owner, a), "invalid_grant");
        expect(refused.error_description).toBe("the authorization code was already used; the tokens issued for it are revoked");
        expect(await client.tokenIntrospection(owner.config, tokens.access_token)).toEqual({ active: false });
        await expectOAuthError(client.refreshTokenGrant(owner.config, tokens.refresh_token!), "invalid_grant");
      });

      it("an expired code: invalid_grant", async () => {
        const a = await authorize(owner, page, user);
        const code = a.response.searchParams.get("code")!;
        const expired = await server.database.db
          .updateTable("one_time_records")
          .set({ expires_at: Date.now() - 1000 })
          .where("kind", "=", "authorization_code")
          .where("key_hash", "=", storedKeyOf(code))
          .executeTakeFirst();
        expect(Number(expired.numUpdatedRows)).toBe(1);
        const refused = await expectOAuthError(redeem(owner, a), "invalid_grant");
        expect(refused.error_description).toBe("the authorization code has expired");
      });

      it("a code presented by another client: invalid_grant, and the code stays usable by its own client", async () => {
        const a = await authorize(owner, page, user);
        const refused = await expectOAuthError(redeem(other, a), "invalid_grant");
        expect(refused.error_description).toBe("the authorization code is not valid");
        const tokens = await redeem(owner, a);
        expect(tokens.claims()?.sub).toBe(user.row.id);
        expect(tokens.claims()?.aud).toBe(owner.clientId);

        // Nor can the other client see or touch the owner's grant or tokens.
        const foreign = await client.refreshTokenGrant(other.config, tokens.refresh_token!).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(foreign).toBeInstanceOf(client.ResponseBodyError);
        expect((foreign as client.ResponseBodyError).error).toBe("invalid_grant");
        expect(await client.tokenIntrospection(other.config, tokens.access_token)).toEqual({ active: false });
        const otherTokens = await redeem(other, await authorize(other, page, user));
        const foreignGrant = await client.fetchProtectedResource(other.config, otherTokens.access_token, grantUrl(other, tokens.grant_id as string), "GET");
        expect(foreignGrant.status).toBe(404);
        expect(await foreignGrant.json()).toMatchObject({ error: "invalid_grant_id" });
        // The owner's refresh token was left untouched by the other client's attempt.
        expect((await client.refreshTokenGrant(owner.config, tokens.refresh_token!)).claims()?.sub).toBe(user.row.id);
      });

      it("wrong client credentials at the PAR endpoint: invalid_client with a Basic challenge", async () => {
        const wrong = new client.Configuration(owner.config.serverMetadata(), owner.clientId, undefined, client.ClientSecretBasic("not-the-secret-of-this-client"));
        client.allowInsecureRequests(wrong);
        const challenge = await expectChallenge(
          client.buildAuthorizationUrlWithPAR(wrong, { redirect_uri: rp.redirectUri, scope: "openid", state: client.randomState() }),
          "Basic",
        );
        expect(await challenge.response.json()).toMatchObject({ error: "invalid_client" });
      });
    });

    describe("DPoP with a public client: PAR, code, tokens, refresh, userinfo bound to the client's key", () => {
      let rpClient: RelyingPartyClient;
      let user: TestUser;
      let page: Page;

      beforeAll(async () => {
        const clientId = `interop-dpop-${randomBytes(4).toString("hex")}`;
        await registerClient(server, { client_id: clientId, token_endpoint_auth_method: "none", redirect_uris: [rp.redirectUri], scope });
        const config = await client.discovery(new URL(issuer), clientId, undefined, client.None(), { execute: [client.allowInsecureRequests] });
        rpClient = { clientId, config };
      });

      // A person of each test's own: the first test's login and consent would otherwise skip the other's pages.
      beforeEach(async () => {
        user = await createUser(server);
        page = await newPage();
      });

      /** PAR with PKCE and a DPoP proof through the library, then the browser; the code is bound to the key. */
      async function authorizeWithDpop(DPoP: client.DPoPHandle): Promise<Authorization> {
        const verifier = client.randomPKCECodeVerifier();
        const state = client.randomState();
        const nonce = client.randomNonce();
        const url = await client.buildAuthorizationUrlWithPAR(
          rpClient.config,
          { redirect_uri: rp.redirectUri, scope, code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256", state, nonce },
          { DPoP },
        );
        const pages = await authorizeInBrowser(page, url, rp.redirectUri, user);
        return { state, nonce, verifier, pages, response: rp.responseFor(state) };
      }

      const redeemWithDpop = (a: Authorization, DPoP: client.DPoPHandle) =>
        client.authorizationCodeGrant(rpClient.config, a.response, { pkceCodeVerifier: a.verifier, expectedState: a.state, expectedNonce: a.nonce, idTokenExpected: true }, undefined, { DPoP });

      it("the whole flow; the stored access token carries the key thumbprint, and sent as Bearer it is refused", async () => {
        const DPoP = client.getDPoPHandle(rpClient.config, await client.randomDPoPKeyPair());
        const a = await authorizeWithDpop(DPoP);
        expect(a.pages).toEqual(["login", "consent"]);
        const tokens = await redeemWithDpop(a, DPoP);
        expect(tokens.token_type).toBe("dpop");
        const sub = tokens.claims()!.sub;
        expect(await client.fetchUserInfo(rpClient.config, tokens.access_token, sub, { DPoP })).toMatchObject({ sub, preferred_username: user.login });
        const refreshed = await client.refreshTokenGrant(rpClient.config, tokens.refresh_token!, undefined, { DPoP });
        expect(refreshed.token_type).toBe("dpop");
        expect(await client.fetchUserInfo(rpClient.config, refreshed.access_token, sub, { DPoP })).toMatchObject({ sub });
        const stored = await server.database.db.selectFrom("oidc_tokens").select("dpop_jkt").where("token_hash", "=", storedKeyOf(refreshed.access_token)).executeTakeFirst();
        expect(stored?.dpop_jkt).toMatch(/^[A-Za-z0-9_-]{43}$/);

        // Presented as a Bearer token, the DPoP-bound access token is refused.
        await expectChallenge(client.fetchUserInfo(rpClient.config, refreshed.access_token, sub), "DPoP", "invalid_token");
      });

      it("the code redeemed with another key: invalid_grant; the refresh token with another key: invalid_grant", async () => {
        const DPoP = client.getDPoPHandle(rpClient.config, await client.randomDPoPKeyPair());
        const stranger = client.getDPoPHandle(rpClient.config, await client.randomDPoPKeyPair());
        const a = await authorizeWithDpop(DPoP);
        const refused = await expectOAuthError(redeemWithDpop(a, stranger), "invalid_grant");
        expect(refused.error_description).toBe("the authorization code is bound to another DPoP key; send a proof signed with that key");
        const tokens = await redeemWithDpop(a, DPoP);
        await expectOAuthError(client.refreshTokenGrant(rpClient.config, tokens.refresh_token!, undefined, { DPoP: stranger }), "invalid_grant");
        expect((await client.refreshTokenGrant(rpClient.config, tokens.refresh_token!, undefined, { DPoP })).token_type).toBe("dpop");
      });
    });
  });
}
