import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { UnsecuredJWT } from "jose";
import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { authorizeInBrowser, discover, expectOAuthError, fapiParameters, push, redeem, registerFapiClient, type FapiClient } from "../support/fapi2-client.ts";
import { authorizeUrl, Browser, clientRedirect, createUser, expectErrorPage, expectPage, signIn, submitPage } from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/*
 * Signed request objects (JAR, RFC 9101) at PAR and at the authorization
 * endpoint, made by oauth4webapi (issueRequestObject, with its
 * modifyAssertion hook to break one claim) and by jose where the library
 * will not make one (unsigned). Accepted: PS256 and ES256 objects signed with
 * a key of the client's jwks; refused with invalid_request_object: unsigned,
 * expired, too far ahead, for another audience, signed with another key, for
 * another client.
 */
const targets = await databaseTargets();

type Modify = (header: Record<string, unknown>, claims: Record<string, unknown>) => void;

for (const target of targets) {
  describe.skipIf(target.unavailable !== undefined)(`signed request objects with oauth4webapi, ${targetTitle(target)}`, () => {
    let dataDir: string;
    let database: ScratchDatabase;
    let server: TestServer;
    let as: oauth.AuthorizationServer;

    beforeAll(async () => {
      dataDir = mkdtempSync(path.join(tmpdir(), "shomei-jar-"));
      database = await target.create();
      server = await startTestServer(database.url, { dataDir });
      as = await discover(server);
    });

    afterAll(async () => {
      await server?.close();
      await database?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    /** A client whose request objects are signed with a PS256 key beside its ES256 assertion key. */
    async function jarClient(metadata: Record<string, unknown> = {}): Promise<FapiClient & { ps256: oauth.CryptoKeyPair }> {
      const ps256 = await oauth.generateKeyPair("PS256", { extractable: true });
      return { ...(await registerFapiClient(server, { extraKeys: [ps256], metadata })), ps256 };
    }

    async function requestObject(fc: FapiClient, params: URLSearchParams, key: oauth.CryptoKey = fc.key, modify?: Modify): Promise<string> {
      return oauth.issueRequestObject(as, fc.client, params, key, modify ? { [oauth.modifyAssertion]: modify as never } : {});
    }

    const breakers: [string, Modify | "unsigned" | "other key"][] = [
      ["unsigned", "unsigned"],
      ["expired", (_h, c) => void ((c.exp = Math.floor(Date.now() / 1000) - 120), (c.iat = (c.exp as number) - 60), (c.nbf = c.iat))],
      ["exp more than 60 minutes ahead", (_h, c) => void (c.exp = Math.floor(Date.now() / 1000) + 3700)],
      ["for another audience", (_h, c) => void (c.aud = "https://other-provider.example")],
      ["signed with a key not registered", "other key"],
      ["for another client", (_h, c) => void (c.client_id = "someone-else")],
      ["nbf in the future", (_h, c) => void (c.nbf = Math.floor(Date.now() / 1000) + 120)],
    ];

    async function brokenObject(fc: FapiClient, params: URLSearchParams, how: Modify | "unsigned" | "other key"): Promise<string> {
      if (how === "unsigned") {
        const claims = { ...Object.fromEntries(params), client_id: fc.client.client_id, iss: fc.client.client_id, aud: as.issuer };
        return new UnsecuredJWT(claims).setIssuedAt().setExpirationTime("60s").encode();
      }
      if (how === "other key") return requestObject(fc, params, (await oauth.generateKeyPair("ES256")).privateKey);
      return requestObject(fc, params, fc.key, how);
    }

    it("discovery advertises request objects signed PS256 or ES256", () => {
      expect(as.request_parameter_supported).toBe(true);
      expect(as.request_object_signing_alg_values_supported).toEqual(["PS256", "ES256"]);
    });

    it("PAR with an ES256 object: its parameters count, the ones beside it are ignored, the flow ends in tokens", async () => {
      const fc = await jarClient({ require_signed_request_object: true });
      const { params, state, verifier, nonce } = await fapiParameters(fc);
      const outer = new URLSearchParams({ request: await requestObject(fc, params), state: "outer-state", scope: "openid email" });
      const pushed = await push(as, fc, outer);
      const raw = await authorizeInBrowser(server, as, fc, pushed.request_uri, await createUser(server));
      expect(raw.get("state")).toBe(state);
      const callback = oauth.validateAuthResponse(as, fc.client, raw, state);
      const tokens = await redeem(as, fc, { callback, verifier, nonce });
      expect(tokens.scope).toBe(params.get("scope"));
    });

    it("PAR with a PS256 object → 201; one expiring in 50 minutes is accepted too", async () => {
      const fc = await jarClient();
      const { params } = await fapiParameters(fc);
      const pushed = await push(as, fc, new URLSearchParams({ request: await requestObject(fc, params, fc.ps256.privateKey) }));
      expect(pushed.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:/);
      const later = await requestObject(fc, params, fc.key, (_h, c) => void (c.exp = Math.floor(Date.now() / 1000) + 3000));
      expect((await push(as, fc, new URLSearchParams({ request: later }))).request_uri).toMatch(/^urn:/);
    });

    it.each(breakers)("PAR with an object %s → invalid_request_object", async (_name, how) => {
      const fc = await jarClient();
      const { params } = await fapiParameters(fc);
      await expectOAuthError(push(as, fc, new URLSearchParams({ request: await brokenObject(fc, params, how) })), "invalid_request_object");
    });

    it("require_signed_request_object: PAR without a request object → invalid_request", async () => {
      const fc = await jarClient({ require_signed_request_object: true });
      const { params } = await fapiParameters(fc);
      expect(await expectOAuthError(push(as, fc, params), "invalid_request")).toMatch(/signed request object/);
      // Without the metadata, the same plain request is accepted.
      const plain = await jarClient();
      expect((await push(as, plain, (await fapiParameters(plain)).params)).request_uri).toMatch(/^urn:/);
    });

    it("the authorization endpoint with an ES256 object: its redirect_uri and state count, the query's are ignored", async () => {
      const fc = await jarClient({ require_signed_request_object: true });
      const { params, state } = await fapiParameters(fc);
      const request = await requestObject(fc, params);
      const browser = new Browser(server.url);
      const user = await createUser(server);
      const outer = { client_id: fc.client.client_id, request, state: "outer", response_type: "token", redirect_uri: "https://elsewhere.example/cb" };
      const consent = await signIn(browser, await browser.get(authorizeUrl(outer)), user.login, user.password);
      const callback = clientRedirect(await submitPage(browser, consent, "consent", { decision: "allow" }), fc.redirectUri);
      expect(callback.get("state")).toBe(state);
      expect(callback.get("code")).toMatch(/\S/);
    });

    it("the authorization endpoint with a PS256 object → the login page", async () => {
      const fc = await jarClient();
      const { params } = await fapiParameters(fc);
      const request = await requestObject(fc, params, fc.ps256.privateKey);
      expectPage(await new Browser(server.url).get(authorizeUrl({ client_id: fc.client.client_id, request })), "login");
    });

    it.each(breakers)("the authorization endpoint with an object %s → invalid_request_object, not redirected", async (_name, how) => {
      const fc = await jarClient();
      const { params } = await fapiParameters(fc);
      const request = await brokenObject(fc, params, how);
      expectErrorPage(await new Browser(server.url).get(authorizeUrl({ client_id: fc.client.client_id, request })), "invalid_request_object");
    });

    it("require_signed_request_object: the authorization endpoint without an object → invalid_request", async () => {
      const fc = await jarClient({ require_signed_request_object: true });
      const { params } = await fapiParameters(fc);
      params.set("client_id", fc.client.client_id);
      const reply = await new Browser(server.url).get(authorizeUrl(params));
      expect(new URL(reply.location!).searchParams.get("error")).toBe("invalid_request");
    });

    it("a fapi2 client may push a signed object, and the profile's rules apply to its claims", async () => {
      const fc = await registerFapiClient(server, { profile: "fapi2" });
      const DPoP = oauth.DPoP(fc.client, await oauth.generateKeyPair("ES256"));
      const { params } = await fapiParameters(fc);
      expect((await push(as, fc, new URLSearchParams({ request: await requestObject(fc, params) }), { DPoP })).expires_in).toBeGreaterThan(0);
      params.delete("code_challenge");
      params.delete("code_challenge_method");
      const withoutPkce = new URLSearchParams({ request: await requestObject(fc, params), code_challenge: "x".repeat(43), code_challenge_method: "S256" });
      expect(await expectOAuthError(push(as, fc, withoutPkce, { DPoP }), "invalid_request")).toMatch(/requires PKCE/);
    });
  });
}
