import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { exportJWK, generateKeyPair } from "jose";
import * as client from "openid-client";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserSuiteTitle, browserUnavailable, launchBrowser } from "../support/browser.ts";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { createUser } from "../support/oidc.ts";
import { authorizeInBrowser, startRelyingParty, type RelyingParty } from "../support/relying-party.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/*
 * openid-client registers itself with dynamicClientRegistration (RFC 7591,
 * with an initial access token), then, as the client it registered,
 * completes a pushed authorization request and the code flow in Chromium:
 * the registration's answer is all the library needs. Its refusals reach the
 * library as the errors RFC 7591 names.
 */
const unavailable = browserUnavailable();
const targets = await databaseTargets();
const scope = "openid profile email offline_access";

for (const target of targets) {
  const title = browserSuiteTitle(`openid-client registers itself with shomei, ${target.name}`, unavailable ?? target.unavailable);
  describe.skipIf(unavailable !== undefined || target.unavailable !== undefined)(title, () => {
    let dataDir: string;
    let database: ScratchDatabase;
    let server: TestServer;
    let rp: RelyingParty;
    let browser: Browser;
    let issuer: URL;
    const contexts: BrowserContext[] = [];

    beforeAll(async () => {
      dataDir = mkdtempSync(path.join(tmpdir(), "shomei-registration-"));
      database = await target.create();
      server = await startTestServer(database.url, { dataDir, clientRegistration: "token" });
      issuer = new URL(server.domain.oidc.issuer);
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

    async function newPage(): Promise<Page> {
      const context = await browser.newContext();
      contexts.push(context);
      context.setDefaultTimeout(10_000);
      return context.newPage();
    }

    async function initialAccessToken(): Promise<string> {
      return (await server.domain.oidc.registrationTokens.create("interop")).token;
    }

    /** PAR with PKCE through the library, the person in Chromium, the code redeemed: the ID token's claims. */
    async function signInWith(config: client.Configuration) {
      const user = await createUser(server);
      const verifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const nonce = client.randomNonce();
      const url = await client.buildAuthorizationUrlWithPAR(config, {
        redirect_uri: rp.redirectUri,
        scope,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256",
        state,
        nonce,
      });
      expect([...url.searchParams.keys()].sort()).toEqual(["client_id", "request_uri"]);
      expect(await authorizeInBrowser(await newPage(), url, rp.redirectUri, user)).toEqual(["login", "consent"]);
      const tokens = await client.authorizationCodeGrant(config, rp.responseFor(state), { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
      const claims = tokens.claims()!;
      expect(claims.sub).toBe(user.row.id);
      expect(claims.aud).toBe(config.clientMetadata().client_id);
      expect(await client.fetchUserInfo(config, tokens.access_token, claims.sub)).toMatchObject({ sub: user.row.id, preferred_username: user.login });
      return { tokens, claims };
    }

    // client_secret_post: what the library uses with the client_secret it is given when told no other method.
    it("registers a client_secret_post client with an initial access token, which then completes PAR and the code flow", async () => {
      const config = await client.dynamicClientRegistration(
        issuer,
        {
          client_name: "Registered by openid-client",
          redirect_uris: [rp.redirectUri],
          scope,
          token_endpoint_auth_method: "client_secret_post",
          response_types: ["code"],
          grant_types: ["authorization_code", "refresh_token"],
        },
        undefined,
        { initialAccessToken: await initialAccessToken(), execute: [client.allowInsecureRequests] },
      );
      const registered = config.clientMetadata();
      expect(registered.client_id).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(registered.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(registered.token_endpoint_auth_method).toBe("client_secret_post");
      expect(config.serverMetadata().registration_endpoint).toBe(server.domain.oidc.endpoints.registration);
      const { tokens } = await signInWith(config);
      expect((await client.refreshTokenGrant(config, tokens.refresh_token!)).access_token).toMatch(/\S/);

      // RFC 7592 read, with the registration access token as the library sends any bearer token.
      const configuration = new URL(registered.registration_client_uri as string);
      const read = await client.fetchProtectedResource(config, registered.registration_access_token as string, configuration, "GET");
      expect(read.status).toBe(200);
      expect(await read.json()).toMatchObject({ client_id: registered.client_id, redirect_uris: [rp.redirectUri] });
    });

    it("registers a private_key_jwt client that signs its own assertions through PAR and the code flow", async () => {
      const { publicKey, privateKey } = await generateKeyPair("ES256");
      const jwk = { ...(await exportJWK(publicKey)), kid: "registered-key", alg: "ES256", use: "sig" };
      const config = await client.dynamicClientRegistration(
        issuer,
        { redirect_uris: [rp.redirectUri], scope, token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [jwk] } },
        client.PrivateKeyJwt({ key: privateKey, kid: "registered-key" }),
        { initialAccessToken: await initialAccessToken(), execute: [client.allowInsecureRequests] },
      );
      expect(config.clientMetadata().client_secret).toBeUndefined();
      await signInWith(config);
    });

    it("without the initial access token the library gets a 401 Bearer challenge, and nothing is registered", async () => {
      const before = (await server.domain.oidc.clients.list()).length;
      const refused = await client
        .dynamicClientRegistration(issuer, { redirect_uris: [rp.redirectUri] }, undefined, { execute: [client.allowInsecureRequests] })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(refused).toBeInstanceOf(client.WWWAuthenticateChallengeError);
      const challenge = refused as client.WWWAuthenticateChallengeError;
      expect(challenge.status).toBe(401);
      expect(challenge.cause.map((c) => [c.scheme, c.parameters.error])).toEqual([["bearer", "invalid_token"]]);
      expect((await server.domain.oidc.clients.list()).length).toBe(before);
    });

    it("bad metadata reaches the library as invalid_redirect_uri and invalid_client_metadata", async () => {
      const attempts: [Partial<client.ClientMetadata>, string][] = [
        [{ redirect_uris: ["http://rp.example/cb"] }, "invalid_redirect_uri"],
        [{ redirect_uris: [rp.redirectUri], token_endpoint_auth_method: "private_key_jwt" }, "invalid_client_metadata"],
      ];
      for (const [metadata, code] of attempts) {
        const refused = await client
          .dynamicClientRegistration(issuer, metadata, undefined, { initialAccessToken: await initialAccessToken(), execute: [client.allowInsecureRequests] })
          .then(
            () => undefined,
            (e: unknown) => e,
          );
        expect(refused).toBeInstanceOf(client.ResponseBodyError);
        expect((refused as client.ResponseBodyError).error).toBe(code);
        expect((refused as client.ResponseBodyError).status).toBe(400);
      }
    });
  });
}
