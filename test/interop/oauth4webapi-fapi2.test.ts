import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { decodeProtectedHeader } from "jose";
import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import {
  authorize,
  authorizeInBrowser,
  discover,
  expectOAuthError,
  fapiParameters,
  insecure,
  push,
  redeem,
  refresh,
  registerFapiClient,
  withNonceRetry,
} from "../support/fapi2-client.ts";
import { authorizeUrl, Browser, createUser, expectErrorRedirect, findCode } from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/*
 * The fapi2 client profile (docs/fapi2.md) driven by oauth4webapi, a
 * certified FAPI 2.0 relying-party library: the whole flow (PAR,
 * private_key_jwt, PKCE, DPoP with the server's nonce, refresh, userinfo),
 * then one request per rule, each breaking that rule alone and refused with
 * the rule's error. The same client without the profile works as before.
 * The server requires DPoP nonces of fapi2 clients only
 * (SHOMEI_FAPI2_DPOP_REQUIRE_NONCE) and gives request_uris 600 seconds.
 */
const targets = await databaseTargets();

for (const target of targets) {
  describe.skipIf(target.unavailable !== undefined)(`the fapi2 profile with oauth4webapi, ${targetTitle(target)}`, () => {
    let dataDir: string;
    let database: ScratchDatabase;
    let server: TestServer;
    let as: oauth.AuthorizationServer;

    beforeAll(async () => {
      dataDir = mkdtempSync(path.join(tmpdir(), "shomei-fapi2-"));
      database = await target.create();
      server = await startTestServer(database.url, { dataDir, fapi2DpopRequireNonce: true, parLifetimeSeconds: 600 });
      as = await discover(server);
    });

    afterAll(async () => {
      await server?.close();
      await database?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    it("PAR, authorize, token, userinfo and refresh: DPoP-bound, ES256 ID token, iss checked, refresh token kept", async () => {
      const fc = await registerFapiClient(server, { profile: "fapi2" });
      const user = await createUser(server);
      const DPoP = oauth.DPoP(fc.client, await oauth.generateKeyPair("ES256"));
      const a = await authorize(server, as, fc, user, DPoP);
      expect(a.raw.get("iss")).toBe(as.issuer);
      expect(a.expiresIn).toBe(599);
      const tokens = await redeem(as, fc, a, DPoP);
      expect(tokens.token_type).toBe("dpop");
      expect(decodeProtectedHeader(tokens.id_token!).alg).toBe("ES256");
      const code = await findCode(server, a.raw.get("code")!);
      expect(code!.expiresAt - code!.createdAt).toBeLessThanOrEqual(60_000);

      const sub = oauth.getValidatedIdTokenClaims(tokens)!.sub;
      const info = await oauth.processUserInfoResponse(as, fc.client, sub, await oauth.userInfoRequest(as, fc.client, tokens.access_token, { DPoP, ...insecure }));
      expect(info.preferred_username).toBe(user.login);

      // Not rotated: the answer carries no new refresh token, and the same one refreshes again.
      const first = await refresh(as, fc, tokens.refresh_token!, DPoP);
      expect(first.token_type).toBe("dpop");
      expect(first.refresh_token).toBeUndefined();
      const second = await refresh(as, fc, tokens.refresh_token!, DPoP);
      expect(second.access_token).not.toBe(first.access_token);
    });

    it("the same client without the profile: Bearer tokens, no nonce, refresh tokens rotated", async () => {
      const fc = await registerFapiClient(server);
      const user = await createUser(server);
      const a = await authorize(server, as, fc, user);
      expect(a.expiresIn).toBe(600);
      const tokens = await redeem(as, fc, a);
      expect(tokens.token_type).toBe("bearer");
      const rotated = await refresh(as, fc, tokens.refresh_token!);
      expect(rotated.refresh_token).toMatch(/\S/);
      await expectOAuthError(refresh(as, fc, tokens.refresh_token!), "invalid_grant");
    });

    it("confidential-client, private-key-jwt: a fapi2 client cannot be public or use a client secret", async () => {
      for (const metadata of [{ token_endpoint_auth_method: "none", jwks: undefined }, { token_endpoint_auth_method: "client_secret_basic", jwks: undefined }]) {
        await expect(registerFapiClient(server, { profile: "fapi2", metadata })).rejects.toThrow(/^token_endpoint_auth_method: the fapi2 profile/);
      }
    });

    it("assertion-audience: a client assertion whose aud is an array holding the issuer → invalid_client", async () => {
      const fc = await registerFapiClient(server, { profile: "fapi2" });
      const auth = oauth.PrivateKeyJwt(fc.key, { [oauth.modifyAssertion]: (_h, payload) => void (payload.aud = [as.issuer]) });
      const { params } = await fapiParameters(fc);
      expect(await expectOAuthError(push(as, fc, params, { auth }), "invalid_client")).toMatch(/aud is the issuer identifier, as a string/);
      // The same array is accepted from a client without the profile.
      const plain = await registerFapiClient(server);
      const plainAuth = oauth.PrivateKeyJwt(plain.key, { [oauth.modifyAssertion]: (_h, payload) => void (payload.aud = [as.issuer]) });
      expect((await push(as, plain, (await fapiParameters(plain)).params, { auth: plainAuth })).request_uri).toMatch(/^urn:/);
    });

    it("assertion-algorithm: a client assertion signed with RS256 → invalid_client", async () => {
      const rsa = await oauth.generateKeyPair("RS256", { extractable: true });
      const fc = await registerFapiClient(server, { profile: "fapi2", extraKeys: [rsa] });
      const { params } = await fapiParameters(fc);
      expect(await expectOAuthError(push(as, fc, params, { auth: oauth.PrivateKeyJwt(rsa.privateKey) }), "invalid_client")).toMatch(/PS256, ES256, EdDSA/);
      // PS256 with an RSA key of 2048 bits is accepted.
      const ps = await oauth.generateKeyPair("PS256", { extractable: true });
      const withPs = await registerFapiClient(server, { profile: "fapi2", extraKeys: [ps] });
      expect((await push(as, withPs, (await fapiParameters(withPs)).params, { auth: oauth.PrivateKeyJwt(ps.privateKey) })).request_uri).toMatch(/^urn:/);
    });

    it("par-required: the authorization endpoint without request_uri → invalid_request, redirected with iss", async () => {
      const fc = await registerFapiClient(server, { profile: "fapi2" });
      const { params, state } = await fapiParameters(fc);
      params.set("client_id", fc.client.client_id);
      const reply = await new Browser(server.url).get(authorizeUrl(params));
      const error = expectErrorRedirect(reply, { redirectUri: fc.redirectUri, error: "invalid_request", issuer: as.issuer, state });
      expect(error.get("error_description")).toMatch(/pushed authorization requests/);
    });

    it("redirect-uri-in-par: a pushed request without redirect_uri → invalid_request", async () => {
      const fc = await registerFapiClient(server, { profile: "fapi2" });
      const { params } = await fapiParameters(fc);
      params.delete("redirect_uri");
      expect(await expectOAuthError(push(as, fc, params), "invalid_request")).toMatch(/redirect_uri in the pushed authorization request/);
    });

    it("pkce-s256: a pushed request without code_challenge → invalid_request", async () => {
      const fc = await registerFapiClient(server, { profile: "fapi2" });
      const { params } = await fapiParameters(fc);
      params.delete("code_challenge");
      params.delete("code_challenge_method");
      expect(await expectOAuthError(push(as, fc, params), "invalid_request")).toMatch(/requires PKCE/);
    });

    it("sender-constrained-tokens: a token request without a DPoP proof → invalid_dpop_proof", async () => {
      const fc = await registerFapiClient(server, { profile: "fapi2" });
      const DPoP = oauth.DPoP(fc.client, await oauth.generateKeyPair("ES256"));
      const a = await authorize(server, as, fc, await createUser(server), DPoP);
      await expectOAuthError(redeem(as, fc, a), "invalid_dpop_proof");
    });

    it("dpop-proof: a proof without the server's nonce → use_dpop_nonce with DPoP-Nonce; one signed RS256 → invalid_dpop_proof", async () => {
      const fc = await registerFapiClient(server, { profile: "fapi2" });
      const { params } = await fapiParameters(fc);
      const DPoP = oauth.DPoP(fc.client, await oauth.generateKeyPair("ES256"));
      const response = await oauth.pushedAuthorizationRequest(as, fc.client, fc.auth, params, { DPoP, ...insecure });
      expect(response.headers.get("dpop-nonce")).toMatch(/\S/);
      await expectOAuthError(oauth.processPushedAuthorizationResponse(as, fc.client, response), "use_dpop_nonce");

      const rs256 = oauth.DPoP(fc.client, await oauth.generateKeyPair("RS256"));
      expect(await expectOAuthError(push(as, fc, params, { DPoP: rs256 }), "invalid_dpop_proof")).toMatch(/PS256, ES256, EdDSA/);
    });

    it("dpop-proof at userinfo: a handle without the nonce gets 401 use_dpop_nonce with DPoP-Nonce, and its retry passes", async () => {
      const fc = await registerFapiClient(server, { profile: "fapi2" });
      const user = await createUser(server);
      const keyPair = await oauth.generateKeyPair("ES256");
      const tokens = await redeem(as, fc, await authorize(server, as, fc, user, oauth.DPoP(fc.client, keyPair)), oauth.DPoP(fc.client, keyPair));
      const sub = oauth.getValidatedIdTokenClaims(tokens)!.sub;
      // A new handle of the same key has no nonce cached: as a resource server would first meet it.
      const DPoP = oauth.DPoP(fc.client, keyPair);
      const refusals: unknown[] = [];
      const info = await withNonceRetry(async () => {
        try {
          return await oauth.processUserInfoResponse(as, fc.client, sub, await oauth.userInfoRequest(as, fc.client, tokens.access_token, { DPoP, ...insecure }));
        } catch (error) {
          refusals.push(error);
          throw error;
        }
      });
      expect(info.preferred_username).toBe(user.login);
      expect(refusals).toHaveLength(1);
      const refused = refusals[0] as oauth.WWWAuthenticateChallengeError;
      expect(oauth.isDPoPNonceError(refused)).toBe(true);
      expect(refused.response.status).toBe(401);
      expect(refused.response.headers.get("dpop-nonce")).toMatch(/^[0-9a-z]+\.[A-Za-z0-9_-]{43}$/);
    });

    it("dpop-jkt-agrees: dpop_jkt naming another key than the PAR proof's → invalid_request", async () => {
      const fc = await registerFapiClient(server, { profile: "fapi2" });
      const { params } = await fapiParameters(fc);
      const DPoP = oauth.DPoP(fc.client, await oauth.generateKeyPair("ES256"));
      params.set("dpop_jkt", await oauth.DPoP(fc.client, await oauth.generateKeyPair("ES256")).calculateThumbprint());
      expect(await expectOAuthError(push(as, fc, params, { DPoP }), "invalid_request")).toMatch(/dpop_jkt/);
    });

    it("jwt-clock-skew: a client assertion or DPoP proof dated 10 seconds ahead is accepted, 61 seconds ahead refused", async () => {
      const fc = await registerFapiClient(server, { profile: "fapi2" });
      const ahead = (seconds: number) =>
        oauth.PrivateKeyJwt(fc.key, {
          [oauth.modifyAssertion]: (_h, payload) => {
            for (const claim of ["iat", "nbf", "exp"]) payload[claim] = (payload[claim] as number) + seconds;
          },
        });
      const { params } = await fapiParameters(fc);
      expect((await push(as, fc, params, { auth: ahead(10) })).request_uri).toMatch(/^urn:/);
      await expectOAuthError(push(as, fc, (await fapiParameters(fc)).params, { auth: ahead(61) }), "invalid_client");
      // DPoP proofs the same way (their iat).
      const keyPair = await oauth.generateKeyPair("ES256");
      const proofAhead = (seconds: number) => oauth.DPoP(fc.client, keyPair, { [oauth.modifyAssertion]: (_h, payload) => void (payload.iat = (payload.iat as number) + seconds) });
      expect((await push(as, fc, (await fapiParameters(fc)).params, { DPoP: proofAhead(10) })).request_uri).toMatch(/^urn:/);
      expect(await expectOAuthError(push(as, fc, (await fapiParameters(fc)).params, { DPoP: proofAhead(61) }), "invalid_dpop_proof")).toMatch(/future/);
    });

    it("refresh-token-not-rotated: a refresh token stays valid after use, and a revoked one is refused", async () => {
      const fc = await registerFapiClient(server, { profile: "fapi2" });
      const DPoP = oauth.DPoP(fc.client, await oauth.generateKeyPair("ES256"));
      const tokens = await redeem(as, fc, await authorize(server, as, fc, await createUser(server), DPoP), DPoP);
      for (let i = 0; i < 3; i++) expect((await refresh(as, fc, tokens.refresh_token!, DPoP)).refresh_token).toBeUndefined();
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, fc.client, fc.auth, tokens.refresh_token!, insecure));
      await expectOAuthError(refresh(as, fc, tokens.refresh_token!, DPoP), "invalid_grant");
    });

    it("no-cors-at-authorization-endpoint: neither a preflight nor a cross-origin GET gets CORS headers", async () => {
      const fc = await registerFapiClient(server, { profile: "fapi2" });
      const pushed = await push(as, fc, (await fapiParameters(fc)).params);
      const url = new URL(as.authorization_endpoint!);
      url.searchParams.set("client_id", fc.client.client_id);
      url.searchParams.set("request_uri", pushed.request_uri);
      const origin = "https://app.example";
      const preflight = await fetch(url, { method: "OPTIONS", headers: { origin, "access-control-request-method": "GET" } });
      const get = await fetch(url, { redirect: "manual", headers: { origin } });
      expect(get.status).toBe(303);
      for (const response of [preflight, get]) expect(response.headers.get("access-control-allow-origin")).toBeNull();
      // The token endpoint, which browsers' apps call, does answer cross-origin requests.
      const token = await fetch(as.token_endpoint!, { method: "OPTIONS", headers: { origin, "access-control-request-method": "POST" } });
      expect(token.headers.get("access-control-allow-origin")).not.toBeNull();
    });

    it("iss-in-authorization-response: the code answer carries iss (the error answer: par-required)", async () => {
      const fc = await registerFapiClient(server, { profile: "fapi2" });
      const { params } = await fapiParameters(fc);
      const pushed = await push(as, fc, params);
      const raw = await authorizeInBrowser(server, as, fc, pushed.request_uri, await createUser(server));
      expect(raw.getAll("iss")).toEqual([as.issuer]);
      expect(raw.get("code")).toMatch(/\S/);
    });
  });
}
