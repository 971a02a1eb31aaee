import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import * as oauth from "oauth4webapi";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { browserSuiteTitle, browserUnavailable, launchBrowser } from "../support/browser.ts";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { createUser, registerClient, type TestUser } from "../support/oidc.ts";
import { authorizeInBrowser, startRelyingParty, type RelyingParty } from "../support/relying-party.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/*
 * DPoP (RFC 9449) with a public client, driven by oauth4webapi unchanged, as
 * a mobile application would: discovery, a pushed authorization request
 * with a DPoP proof, sign-in and consent in real Chromium, the code
 * exchanged with a proof of the same key, refresh, and userinfo with the
 * DPoP scheme. The library makes every proof itself; the refusals are the
 * library's own reports of the server's answers.
 */
const unavailable = browserUnavailable();
const targets = await databaseTargets();
const scope = "openid profile offline_access";
const insecure = { [oauth.allowInsecureRequests]: true } as const;

/** What a failed call threw, for the assertions. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (e: unknown) => e,
  );
}

async function expectResponseError(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await failure(promise);
  expect(error, `expected ${code}`).toBeInstanceOf(oauth.ResponseBodyError);
  expect((error as oauth.ResponseBodyError).error).toBe(code);
  expect((error as oauth.ResponseBodyError).error_description).toMatch(/\S/);
}

async function expectChallenge(promise: Promise<unknown>, scheme: string, code: string): Promise<void> {
  const error = await failure(promise);
  expect(error, `expected a ${scheme} ${code} challenge`).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
  const challenge = error as oauth.WWWAuthenticateChallengeError;
  expect(challenge.status).toBe(401);
  expect(challenge.cause[0]!.scheme).toBe(scheme);
  expect(challenge.cause[0]!.parameters.error).toBe(code);
}

for (const target of targets) {
  const title = browserSuiteTitle(`oauth4webapi DPoP against shomei, ${target.name}`, unavailable ?? target.unavailable);
  describe.skipIf(unavailable !== undefined || target.unavailable !== undefined)(title, () => {
    let dataDir: string;
    let database: ScratchDatabase;
    let server: TestServer;
    let rp: RelyingParty;
    let browser: Browser;
    let as: oauth.AuthorizationServer;
    let user: TestUser;
    const client: oauth.Client = { client_id: `mobile-${randomBytes(4).toString("hex")}` };
    const contexts: BrowserContext[] = [];

    beforeAll(async () => {
      dataDir = mkdtempSync(path.join(tmpdir(), "shomei-oauth4webapi-"));
      database = await target.create();
      server = await startTestServer(database.url, { dataDir });
      rp = await startRelyingParty();
      browser = await launchBrowser();
      await registerClient(server, { client_id: client.client_id, token_endpoint_auth_method: "none", redirect_uris: [rp.redirectUri], scope });
      const issuer = new URL(server.domain.oidc.issuer);
      as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oidc", ...insecure }));
    });

    afterAll(async () => {
      for (const context of contexts) await context.close().catch(() => undefined);
      await browser?.close();
      await rp?.close();
      await server?.close();
      await database?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    // A person of each test's own: a grant another test's consent made would skip the consent page.
    beforeEach(async () => {
      user = await createUser(server);
    });

    async function newPage(): Promise<Page> {
      const context = await browser.newContext();
      contexts.push(context);
      context.setDefaultTimeout(10_000);
      return context.newPage();
    }

    /** PAR with PKCE and a DPoP proof of `keyPair`, then the browser; returns the callback parameters and the checks. */
    async function authorize(keyPair: oauth.CryptoKeyPair) {
      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const nonce = oauth.generateRandomNonce();
      const params = new URLSearchParams({
        client_id: client.client_id,
        redirect_uri: rp.redirectUri,
        response_type: "code",
        scope,
        state,
        nonce,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256",
      });
      const response = await oauth.pushedAuthorizationRequest(as, client, oauth.None(), params, { DPoP: oauth.DPoP(client, keyPair), ...insecure });
      const pushed = await oauth.processPushedAuthorizationResponse(as, client, response);
      const url = new URL(as.authorization_endpoint!);
      url.searchParams.set("client_id", client.client_id);
      url.searchParams.set("request_uri", pushed.request_uri);
      const pages = await authorizeInBrowser(await newPage(), url, rp.redirectUri, user);
      const callback = oauth.validateAuthResponse(as, client, rp.responseFor(state), state);
      return { callback, verifier, nonce, pages };
    }

    async function redeem(keyPair: oauth.CryptoKeyPair, a: Awaited<ReturnType<typeof authorize>>) {
      const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), a.callback, rp.redirectUri, a.verifier, {
        DPoP: oauth.DPoP(client, keyPair),
        ...insecure,
      });
      return oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: a.nonce, requireIdToken: true });
    }

    it("discovery advertises DPoP and public clients", () => {
      expect(as.dpop_signing_alg_values_supported).toEqual(["ES256", "PS256", "RS256", "EdDSA"]);
      expect(as.token_endpoint_auth_methods_supported).toContain("none");
    });

    it("PAR, authorize, token, userinfo and refresh, all DPoP-bound to the app's key", async () => {
      const keyPair = await oauth.generateKeyPair("ES256");
      const a = await authorize(keyPair);
      expect(a.pages).toEqual(["login", "consent"]);
      const tokens = await redeem(keyPair, a);
      expect(tokens.token_type).toBe("dpop");
      expect(tokens.refresh_token).toMatch(/\S/);
      const sub = oauth.getValidatedIdTokenClaims(tokens)!.sub;
      expect(sub).toBe(user.row.id);

      const DPoP = oauth.DPoP(client, keyPair);
      const info = await oauth.processUserInfoResponse(as, client, sub, await oauth.userInfoRequest(as, client, tokens.access_token, { DPoP, ...insecure }));
      expect(info).toMatchObject({ sub, preferred_username: user.login });

      const refreshed = await oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, { DPoP, ...insecure }),
      );
      expect(refreshed.token_type).toBe("dpop");
      expect(refreshed.access_token).not.toBe(tokens.access_token);
      const again = await oauth.processUserInfoResponse(as, client, sub, await oauth.userInfoRequest(as, client, refreshed.access_token, { DPoP, ...insecure }));
      expect(again.sub).toBe(sub);

      // The rotated refresh token, presented with a proof of another key, is refused (public clients' refresh tokens are bound).
      const stranger = oauth.DPoP(client, await oauth.generateKeyPair("ES256"));
      await expectResponseError(
        oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshed.refresh_token!, { DPoP: stranger, ...insecure })),
        "invalid_grant",
      );
    });

    it("a code bound by the PAR proof, redeemed with a proof of another key → invalid_grant", async () => {
      const keyPair = await oauth.generateKeyPair("ES256");
      const a = await authorize(keyPair);
      await expectResponseError(redeem(await oauth.generateKeyPair("ES256"), a), "invalid_grant");
      // The refusal did not use the code up: the right key still redeems it.
      expect((await redeem(keyPair, a)).token_type).toBe("dpop");
    });

    it("a replayed proof (same jti) is refused at userinfo; a DPoP-bound token sent as Bearer is refused", async () => {
      const keyPair = await oauth.generateKeyPair("ES256");
      const tokens = await redeem(keyPair, await authorize(keyPair));
      const sub = oauth.getValidatedIdTokenClaims(tokens)!.sub;
      let captured: string | undefined;
      const capture: typeof fetch = (url, init) => {
        captured = new Headers(init?.headers).get("dpop") ?? undefined;
        return fetch(url, init);
      };
      const DPoP = oauth.DPoP(client, keyPair);
      const first = await oauth.userInfoRequest(as, client, tokens.access_token, { DPoP, [oauth.customFetch]: capture, ...insecure });
      expect((await oauth.processUserInfoResponse(as, client, sub, first)).sub).toBe(sub);
      expect(captured).toMatch(/^ey/);

      const replay: typeof fetch = (url, init) => {
        const headers = new Headers(init?.headers);
        headers.set("dpop", captured!);
        return fetch(url, { ...init, headers });
      };
      const replayed = await oauth.userInfoRequest(as, client, tokens.access_token, { DPoP, [oauth.customFetch]: replay, ...insecure });
      await expectChallenge(oauth.processUserInfoResponse(as, client, sub, replayed), "dpop", "invalid_dpop_proof");

      const asBearer = await oauth.userInfoRequest(as, client, tokens.access_token, insecure);
      await expectChallenge(oauth.processUserInfoResponse(as, client, sub, asBearer), "dpop", "invalid_token");
    });
  });
}
