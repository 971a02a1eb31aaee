import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { JWK } from "jose";
import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { authorizeInBrowser, discover, expectOAuthError, fapiParameters, fapiScope, push, redeem, type FapiClient } from "../support/fapi2-client.ts";
import { JwksServer } from "../support/jwks-server.ts";
import { authorizeUrl, Browser, createUser, expectErrorPage } from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/*
 * Clients that register a jwks_uri (dynamic registration) instead of jwks:
 * oauth4webapi makes their private_key_jwt assertions and signed request
 * objects, and shomei verifies them with the keys a loopback server serves,
 * through PAR, the browser and the token endpoint. Refused: a kid the set
 * does not hold (and the set is not fetched again within the cool-down), a
 * URI nobody answers at, a body over 64 KiB, a redirect, a body that is not
 * JSON, and jwks beside jwks_uri. The registration is stored and read back
 * on both databases.
 */
const targets = await databaseTargets();

for (const target of targets) {
  describe.skipIf(target.unavailable !== undefined)(`jwks_uri clients with oauth4webapi, ${targetTitle(target)}`, () => {
    let dataDir: string;
    let database: ScratchDatabase;
    let server: TestServer;
    let jwks: JwksServer;
    let as: oauth.AuthorizationServer;

    beforeAll(async () => {
      dataDir = mkdtempSync(path.join(tmpdir(), "shomei-jwks-uri-"));
      database = await target.create();
      server = await startTestServer(database.url, { dataDir, clientRegistration: "open", clientRegistrationMaxPerAddress: 1000 });
      jwks = await new JwksServer().start();
      as = await discover(server);
    });

    afterAll(async () => {
      await server?.close();
      await jwks?.close();
      await database?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    function register(metadata: Record<string, unknown>): Promise<Response> {
      return fetch(`${server.url}/api/oidc/v1/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(metadata) });
    }

    /** A client registered with a jwks_uri of its own on the key server, which serves its ES256 key under kid "k1". */
    async function jwksUriClient(metadata: Record<string, unknown> = {}): Promise<FapiClient & { path: string; kid: string; publicJwk: JWK }> {
      const keyPath = `/${randomBytes(6).toString("hex")}/jwks.json`;
      const pair = await oauth.generateKeyPair("ES256", { extractable: true });
      const { key_ops: _ops, ext: _ext, ...publicJwk } = await crypto.subtle.exportKey("jwk", pair.publicKey);
      jwks.set(keyPath, { keys: [{ ...publicJwk, kid: "k1" }] });
      const redirectUri = `https://rp-${randomBytes(4).toString("hex")}.example/cb`;
      const reply = await register({
        token_endpoint_auth_method: "private_key_jwt",
        jwks_uri: jwks.url(keyPath),
        redirect_uris: [redirectUri],
        scope: fapiScope,
        ...metadata,
      });
      const answer = (await reply.json()) as Record<string, unknown>;
      expect(reply.status, JSON.stringify(answer)).toBe(201);
      const signing = { key: pair.privateKey, kid: "k1" };
      return { client: { client_id: answer.client_id as string }, redirectUri, key: pair.privateKey, auth: oauth.PrivateKeyJwt(signing), path: keyPath, kid: "k1", publicJwk };
    }

    it("registration stores jwks_uri and answers it; a read gives it back", async () => {
      const keyPath = "/registered/jwks.json";
      const reply = await register({ token_endpoint_auth_method: "private_key_jwt", jwks_uri: jwks.url(keyPath), redirect_uris: ["https://rp.example/cb"] });
      const answer = (await reply.json()) as Record<string, unknown>;
      expect(reply.status).toBe(201);
      expect(answer).toMatchObject({ jwks_uri: jwks.url(keyPath), token_endpoint_auth_method: "private_key_jwt" });
      expect(answer).not.toHaveProperty("jwks");
      expect(await server.domain.oidc.clients.find(answer.client_id as string)).toMatchObject({ jwks: null, jwksUri: jwks.url(keyPath) });
      const read = await fetch(answer.registration_client_uri as string, { headers: { authorization: `Bearer ${answer.registration_access_token as string}` } });
      expect(await read.json()).toMatchObject({ jwks_uri: jwks.url(keyPath) });
      // Registering reads nothing from the URI: keys are fetched when a JWT is to be verified.
      expect(jwks.requests(keyPath)).toBe(0);
    });

    it("jwks beside jwks_uri → invalid_client_metadata naming jwks_uri", async () => {
      const reply = await register({
        token_endpoint_auth_method: "private_key_jwt",
        jwks_uri: jwks.url("/both"),
        jwks: { keys: [{ kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" }] },
        redirect_uris: ["https://rp.example/cb"],
      });
      expect(reply.status).toBe(400);
      expect(await reply.json()).toEqual({ error: "invalid_client_metadata", error_description: "jwks_uri: must not be sent with jwks (register one or the other)" });
    });

    it("PAR with an assertion and a signed request object, the browser, the token endpoint: one fetch serves them all", async () => {
      const fc = await jwksUriClient({ require_signed_request_object: true });
      const { params, state, verifier, nonce } = await fapiParameters(fc);
      const request = await oauth.issueRequestObject(as, fc.client, params, { key: fc.key, kid: fc.kid });
      const pushed = await push(as, fc, new URLSearchParams({ request }));
      const raw = await authorizeInBrowser(server, as, fc, pushed.request_uri, await createUser(server));
      const callback = oauth.validateAuthResponse(as, fc.client, raw, state);
      const tokens = await redeem(as, fc, { callback, verifier, nonce });
      expect(tokens.access_token).toMatch(/\S/);
      expect(oauth.getValidatedIdTokenClaims(tokens)?.aud).toBe(fc.client.client_id);
      expect(jwks.requests(fc.path)).toBe(1);
    });

    it("the authorization endpoint verifies a request object with the fetched keys", async () => {
      const fc = await jwksUriClient();
      const { params } = await fapiParameters(fc);
      const request = await oauth.issueRequestObject(as, fc.client, params, { key: fc.key, kid: fc.kid });
      const reply = await new Browser(server.url).get(authorizeUrl({ client_id: fc.client.client_id, request }));
      expect(reply.location).toMatch(/^\/auth\/login\?/);
    });

    it("a kid the served set does not hold → invalid_client; asking again within the cool-down fetches nothing more", async () => {
      const fc = await jwksUriClient();
      const stranger = await oauth.generateKeyPair("ES256");
      const auth = oauth.PrivateKeyJwt({ key: stranger.privateKey, kid: "k2" });
      const { params } = await fapiParameters(fc);
      expect(await expectOAuthError(push(as, fc, params, { auth }), "invalid_client")).toBe("client authentication failed");
      expect(await expectOAuthError(push(as, fc, params, { auth }), "invalid_client")).toBe("client authentication failed");
      expect(jwks.requests(fc.path)).toBe(1);
      // The client's own key still works from the kept set.
      expect((await push(as, fc, params)).request_uri).toMatch(/^urn:/);
      expect(jwks.requests(fc.path)).toBe(1);
    });

    const brokenServers: [string, (fc: { path: string }) => void, RegExp][] = [
      ["a server answering 503", (fc) => jwks.set(fc.path, { status: 503, body: "down" }), /answered 503, not 200/],
      ["a body over 64 KiB", (fc) => jwks.set(fc.path, { bytes: 64 * 1024 + 10 }), /larger than 65536 bytes/],
      ["a redirect", (fc) => jwks.set(fc.path, { status: 301, body: "", headers: { location: "https://elsewhere.example/jwks" } }), /answered 301; redirects are not followed/],
      ["a body that is not JSON", (fc) => jwks.set(fc.path, { status: 200, body: "<html></html>" }), /the answer is not JSON/],
      ["a JSON body that is not a key set", (fc) => jwks.set(fc.path, { status: 200, body: '{"keys":"none"}' }), /not a JWK Set/],
    ];

    it.each(brokenServers)("%s: the assertion → invalid_client, the request object → invalid_request_object, each naming the URI", async (_name, breakServer, reason) => {
      const fc = await jwksUriClient();
      breakServer(fc);
      const { params } = await fapiParameters(fc);
      const described = await expectOAuthError(push(as, fc, params), "invalid_client");
      expect(described).toMatch(reason);
      expect(described).toContain(`the client's jwks_uri could not be used: ${jwks.url(fc.path)}`);
      const request = await oauth.issueRequestObject(as, fc.client, params, { key: fc.key, kid: fc.kid });
      expectErrorPage(await new Browser(server.url).get(authorizeUrl({ client_id: fc.client.client_id, request })), "invalid_request_object");
    });

    it("a refused connection → invalid_client naming ECONNREFUSED", async () => {
      const reply = await register({ token_endpoint_auth_method: "private_key_jwt", jwks_uri: "http://127.0.0.1:9/jwks.json", redirect_uris: ["https://rp.example/cb"] });
      const clientId = ((await reply.json()) as { client_id: string }).client_id;
      const pair = await oauth.generateKeyPair("ES256");
      const fc: FapiClient = { client: { client_id: clientId }, redirectUri: "https://rp.example/cb", key: pair.privateKey, auth: oauth.PrivateKeyJwt(pair.privateKey) };
      expect(await expectOAuthError(push(as, fc, (await fapiParameters(fc)).params), "invalid_client")).toMatch(/http:\/\/127\.0\.0\.1:9\/jwks\.json: ECONNREFUSED/);
    });

    it("key-sizes: a fapi2 client whose served set gains a small RSA key is refused at use", async () => {
      const fc = await jwksUriClient({ profile: "fapi2" });
      const small = await crypto.subtle.generateKey({ name: "RSA-PSS", modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["sign", "verify"]);
      const { key_ops: _o, ext: _e, ...smallJwk } = await crypto.subtle.exportKey("jwk", small.publicKey);
      jwks.set(fc.path, { keys: [{ ...fc.publicJwk, kid: fc.kid }, { ...smallJwk, kid: "small" }] });
      const DPoP = oauth.DPoP(fc.client, await oauth.generateKeyPair("ES256"));
      const described = await expectOAuthError(push(as, fc, (await fapiParameters(fc)).params, { DPoP }), "invalid_client");
      expect(described).toMatch(/^the key set at jwks_uri: the fapi2 profile needs RSA keys of at least 2048 bits/);
    });
  });
}

describe.skipIf(targets[0]!.unavailable !== undefined)("jwks_uri in production mode", () => {
  let database: ScratchDatabase;
  let server: TestServer;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "shomei-jwks-uri-prod-"));
    database = await targets[0]!.create();
    server = await startTestServer(database.url, { mode: "production", dataDir, clientRegistration: "open" });
  });

  afterAll(async () => {
    await server?.close();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("dynamic registration refuses an http:// or private jwks_uri as invalid_client_metadata, and takes a public https one", async () => {
    const register = (jwksUri: string) =>
      fetch(`${server.url}/api/oidc/v1/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ token_endpoint_auth_method: "private_key_jwt", jwks_uri: jwksUri, redirect_uris: ["https://rp.example/cb"] }),
      });
    for (const [uri, reason] of [
      ["http://rp.example/jwks.json", "jwks_uri: must be an https:// URL"],
      ["https://127.0.0.1/jwks.json", "jwks_uri: must not point at a loopback, private or link-local address"],
      ["https://10.1.2.3/jwks.json", "jwks_uri: must not point at a loopback, private or link-local address"],
    ] as const) {
      const reply = await register(uri);
      expect(reply.status, uri).toBe(400);
      expect(await reply.json()).toEqual({ error: "invalid_client_metadata", error_description: reason });
    }
    expect((await register("https://rp.example/jwks.json")).status).toBe(201);
  });
});
