import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/domain/oidc/flow/secrets.ts";
import { expectInvalidToken, expectRegistrationError, manage, postRegistration, reachable, type RegistrationReply } from "../support/client-registration.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { basicAuthorization, Browser, createUser, getUserinfo, obtainCode, pkce, postPar, postToken, registerClient } from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Dynamic client registration (RFC 7591) and the configuration endpoint
 * (RFC 7592) with registration open: what is registered, what is stored
 * (hashes only), and that a registration access token reads, replaces and
 * removes its own client, once each, and nothing else.
 */
const targets = await databaseTargets();

const redirectUri = "https://rp.example/cb";

/** Metadata of a new client; each test registers its own. */
function metadata(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { client_name: `Registered ${randomBytes(3).toString("hex")}`, redirect_uris: [redirectUri], scope: "openid profile", ...extra };
}

for (const target of targets) {
  describe.skipIf(target.unavailable !== undefined)(`client registration, open: ${targetTitle(target)}`, () => {
    let scratch: ScratchDatabase;
    let server: TestServer;

    beforeAll(async () => {
      scratch = await target.create();
      // A limit no test here reaches: the limit has tests of its own (oidc-client-registration-access.test.ts).
      server = await startTestServer(scratch.url, { clientRegistration: "open", clientRegistrationMaxPerAddress: 1000 });
    });

    afterAll(async () => {
      await server?.close();
      await scratch?.drop();
    });

    /** Registers a client and checks the answer's shape; returns the answer and its configuration endpoint. */
    async function registered(extra: Record<string, unknown> = {}): Promise<{ answer: Record<string, unknown>; uri: string; token: string }> {
      const reply = await postRegistration(server, metadata(extra));
      expect(reply.status, reply.text).toBe(201);
      const answer = reply.json!;
      return { answer, uri: reachable(server, answer.registration_client_uri), token: answer.registration_access_token as string };
    }

    const storedRegistration = (clientId: string) =>
      server.database.db.selectFrom("oidc_client_registrations").selectAll().where("client_id", "=", clientId).executeTakeFirst();

    it("registers a confidential client: 201 with its metadata, a secret and a registration access token shown once", async () => {
      const before = Math.floor(Date.now() / 1000);
      const reply = await postRegistration(server, metadata({ logo_uri: "https://rp.example/logo.png" }));
      expect(reply.status, reply.text).toBe(201);
      expect(reply.headers.get("cache-control")).toBe("no-store");
      const answer = reply.json!;
      expect(answer).toMatchObject({
        client_id: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
        client_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        client_secret_expires_at: 0,
        registration_access_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        token_endpoint_auth_method: "client_secret_basic",
        redirect_uris: [redirectUri],
        response_types: ["code"],
        grant_types: ["authorization_code", "refresh_token"],
        scope: "openid profile",
        id_token_signed_response_alg: "ES256",
      });
      expect(answer.client_id_issued_at).toBeGreaterThanOrEqual(before - 1);
      // A member the server does not know is ignored, and not claimed as registered.
      expect(answer).not.toHaveProperty("logo_uri");
      const clientId = answer.client_id as string;
      expect(answer.registration_client_uri).toBe(`${server.domain.oidc.issuer}/api/oidc/v1/register/${clientId}`);
      expect(reply.headers.get("location")).toBe(answer.registration_client_uri);

      // Stored as hashes only.
      const client = await server.domain.oidc.clients.find(clientId);
      expect(client?.secretHash).toBe(sha256Hex(answer.client_secret as string));
      expect((await storedRegistration(clientId))?.access_token_hash).toBe(sha256Hex(answer.registration_access_token as string));
      // The secret works at once: a pushed authorization request with it is accepted.
      const par = await postPar(
        server,
        { response_type: "code", redirect_uri: redirectUri, scope: "openid", code_challenge: pkce().challenge, code_challenge_method: "S256" },
        { authorization: basicAuthorization(clientId, answer.client_secret as string) },
      );
      expect(par.status, par.text).toBe(201);
      // Neither secret reaches the logs.
      expect(server.rawLogs()).not.toContain(answer.client_secret as string);
      expect(server.rawLogs()).not.toContain(answer.registration_access_token as string);
    });

    it("registers a public client and a private_key_jwt client with what they asked for, without a secret", async () => {
      const pub = await registered({ token_endpoint_auth_method: "none", dpop_bound_access_tokens: true, require_pushed_authorization_requests: true });
      expect(pub.answer).toMatchObject({ token_endpoint_auth_method: "none", dpop_bound_access_tokens: true, require_pushed_authorization_requests: true });
      expect(pub.answer).not.toHaveProperty("client_secret");
      expect(pub.answer).not.toHaveProperty("client_secret_expires_at");
      const jwks = { keys: [{ kty: "EC", crv: "P-256", x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0", kid: "k1" }] };
      const jwt = await registered({ token_endpoint_auth_method: "private_key_jwt", jwks, id_token_signed_response_alg: "RS256" });
      expect(jwt.answer).toMatchObject({ token_endpoint_auth_method: "private_key_jwt", jwks, id_token_signed_response_alg: "RS256" });
      expect(jwt.answer).not.toHaveProperty("client_secret");
      expect((await server.domain.oidc.clients.find(jwt.answer.client_id as string))?.secretHash).toBeNull();
    });

    it("read: the registration with a new token, which replaces the old; without a token or with a wrong one, 401", async () => {
      const { answer, uri, token } = await registered();
      expectInvalidToken(await manage(uri, "GET", undefined));
      expectInvalidToken(await manage(uri, "GET", "not-the-token"));

      const read = await manage(uri, "GET", token);
      expect(read.status, read.text).toBe(200);
      expect(read.headers.get("cache-control")).toBe("no-store");
      const { client_secret: _secret, registration_access_token: first, ...registeredMetadata } = answer;
      const { registration_access_token: next, ...readMetadata } = read.json!;
      expect(readMetadata).toEqual(registeredMetadata);
      expect(read.json).not.toHaveProperty("client_secret");
      expect(next).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(next).not.toBe(first);
      expect((await storedRegistration(answer.client_id as string))?.access_token_hash).toBe(sha256Hex(next as string));

      expectInvalidToken(await manage(uri, "GET", token));
      expect((await manage(uri, "GET", next as string)).status).toBe(200);
    });

    it("a registration access token manages only its own client: another's, one added by the CLI, an unknown or impossible one all answer 401", async () => {
      const mine = await registered();
      const theirs = await registered();
      const cliClientId = `cli-${randomBytes(4).toString("hex")}`;
      await registerClient(server, { client_id: cliClientId, client_secret: "a-secret-of-sixteen-or-more", redirect_uris: [redirectUri] });
      const paths = [theirs.uri, reachable(server, `${server.domain.oidc.endpoints.registration}/${cliClientId}`), reachable(server, `${server.domain.oidc.endpoints.registration}/unknown-client`), reachable(server, `${server.domain.oidc.endpoints.registration}/nul%00byte`)];
      for (const uri of paths) {
        expectInvalidToken(await manage(uri, "GET", mine.token));
        expectInvalidToken(await manage(uri, "PUT", mine.token, { ...metadata(), client_id: uri.split("/").pop() }));
        expectInvalidToken(await manage(uri, "DELETE", mine.token));
      }
      expect(await server.domain.oidc.clients.find(theirs.answer.client_id as string)).toBeDefined();
      expect(await server.domain.oidc.clients.find(cliClientId)).toBeDefined();
      // Nothing was used up: both tokens still work for their own clients.
      expect((await manage(mine.uri, "GET", mine.token)).status).toBe(200);
      expect((await manage(theirs.uri, "GET", theirs.token)).status).toBe(200);
    });

    it("update: replaces the metadata (what is left out returns to its default), keeps the secret, rotates the token", async () => {
      const { answer, uri, token } = await registered({ post_logout_redirect_uris: ["https://rp.example/bye"], require_pushed_authorization_requests: true });
      const clientId = answer.client_id as string;
      const secret = answer.client_secret as string;
      const put = await manage(uri, "PUT", token, {
        ...answer,
        client_name: "Renamed",
        redirect_uris: ["https://rp.example/cb2"],
        post_logout_redirect_uris: undefined,
        require_pushed_authorization_requests: undefined,
      });
      expect(put.status, put.text).toBe(200);
      expect(put.json).toMatchObject({ client_id: clientId, client_name: "Renamed", redirect_uris: ["https://rp.example/cb2"], post_logout_redirect_uris: [], require_pushed_authorization_requests: false });
      expect(put.json!.client_id_issued_at).toBe(answer.client_id_issued_at);
      expect(put.json).not.toHaveProperty("client_secret");
      const stored = await server.domain.oidc.clients.find(clientId);
      expect(stored).toMatchObject({ name: "Renamed", redirectUris: ["https://rp.example/cb2"], postLogoutRedirectUris: [], secretHash: sha256Hex(secret) });
      expectInvalidToken(await manage(uri, "GET", token));
      expect((await manage(uri, "GET", put.json!.registration_access_token as string)).status).toBe(200);
    });

    it("update: a method that starts to use a secret gets a new one, shown once; a client_secret sent must be the current one", async () => {
      const { answer, uri, token } = await registered({ token_endpoint_auth_method: "none" });
      const clientId = answer.client_id as string;
      const wrong = await manage(uri, "PUT", token, { ...metadata(), client_id: clientId, client_secret: "chosen-by-the-client-itself" });
      expect(expectRegistrationError(wrong, 400, "invalid_client_metadata")).toBe("client_secret: is not the client's current secret");
      const put = await manage(uri, "PUT", token, { ...metadata(), client_id: clientId, token_endpoint_auth_method: "client_secret_post" });
      expect(put.status, put.text).toBe(200);
      const secret = put.json!.client_secret as string;
      expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(put.json!.client_secret_expires_at).toBe(0);
      expect((await server.domain.oidc.clients.find(clientId))?.secretHash).toBe(sha256Hex(secret));
      // Sending the current secret back is allowed, and changes nothing about it.
      const again = await manage(uri, "PUT", put.json!.registration_access_token as string, { ...put.json, client_secret: secret });
      expect(again.status, again.text).toBe(200);
      expect((await server.domain.oidc.clients.find(clientId))?.secretHash).toBe(sha256Hex(secret));
    });

    it("update refused: without the token (401), another client_id, bad metadata; nothing changes and the token stays", async () => {
      const { answer, uri, token } = await registered();
      const clientId = answer.client_id as string;
      const before = await server.domain.oidc.clients.find(clientId);
      expectInvalidToken(await manage(uri, "PUT", undefined, { ...metadata(), client_id: clientId, client_name: "Taken over" }));
      expectRegistrationError(await manage(uri, "PUT", token, { ...metadata(), client_name: "No id" }), 400, "invalid_client_metadata");
      expectRegistrationError(await manage(uri, "PUT", token, { ...metadata(), client_id: "someone-else" }), 400, "invalid_client_metadata");
      expectRegistrationError(await manage(uri, "PUT", token, { ...metadata(), client_id: clientId, redirect_uris: ["http://rp.example/cb"] }), 400, "invalid_redirect_uri");
      expectRegistrationError(await manage(uri, "PUT", token, "{not json"), 400, "invalid_client_metadata");
      expect(await server.domain.oidc.clients.find(clientId)).toEqual(before);
      expect((await manage(uri, "GET", token)).status).toBe(200);
    });

    it("delete: 204; the client, its registration, grants and tokens are gone; without the token nothing happens", async () => {
      const { answer, uri, token } = await registered({ scope: "openid profile" });
      const clientId = answer.client_id as string;
      const user = await createUser(server);
      const { verifier, challenge } = pkce();
      const code = await obtainCode(server, new Browser(server.url), user, { clientId, redirectUri, scope: "openid profile", codeChallenge: challenge });
      const tokens = await postToken(server, { grant_type: "authorization_code", code, redirect_uri: redirectUri, code_verifier: verifier }, {
        authorization: basicAuthorization(clientId, answer.client_secret as string),
      });
      expect(tokens.status, tokens.text).toBe(200);
      const accessToken = tokens.json!.access_token as string;
      expect((await getUserinfo(server, accessToken)).status).toBe(200);

      expectInvalidToken(await manage(uri, "DELETE", undefined));
      expectInvalidToken(await manage(uri, "DELETE", "not-the-token"));
      expect(await server.domain.oidc.clients.find(clientId)).toBeDefined();

      const deleted = await manage(uri, "DELETE", token);
      expect(deleted.status, deleted.text).toBe(204);
      expect(await server.domain.oidc.clients.find(clientId)).toBeUndefined();
      expect(await storedRegistration(clientId)).toBeUndefined();
      expect((await getUserinfo(server, accessToken)).status).toBe(401);
      const refresh = await postToken(server, { grant_type: "refresh_token", refresh_token: tokens.json!.refresh_token as string }, {
        authorization: basicAuthorization(clientId, answer.client_secret as string),
      });
      expect(refresh.json?.error).toBe("invalid_client");
      expectInvalidToken(await manage(uri, "GET", token));
      expectInvalidToken(await manage(uri, "DELETE", token));
    });

    it("a client removed by the CLI takes its registration with it: its token manages nothing", async () => {
      const { answer, uri, token } = await registered();
      const clientId = answer.client_id as string;
      expect(await server.domain.oidc.clients.delete(clientId, Date.now())).toBe(true);
      expect(await storedRegistration(clientId)).toBeUndefined();
      expectInvalidToken(await manage(uri, "GET", token));
    });

    it("lists and URIs are bounded: 101 redirect URIs, 11 keys or a 3,000-character URI are refused and store nothing", async () => {
      const before = await server.database.db.selectFrom("oidc_clients").select(({ fn }) => fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
      const many = Array.from({ length: 101 }, (_, i) => `https://rp.example/cb/${i}`);
      expect(expectRegistrationError(await postRegistration(server, metadata({ redirect_uris: many })), 400, "invalid_redirect_uri")).toContain("at most 100");
      const long = `https://rp.example/${"a".repeat(3000)}`;
      expect(expectRegistrationError(await postRegistration(server, metadata({ redirect_uris: [long] })), 400, "invalid_redirect_uri")).toContain("at most 2048");
      const key = { kty: "EC", crv: "P-256", x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0" };
      const keys = Array.from({ length: 11 }, (_, i) => ({ ...key, kid: `k${i}` }));
      const elevenKeys = metadata({ token_endpoint_auth_method: "private_key_jwt", jwks: { keys } });
      expect(expectRegistrationError(await postRegistration(server, elevenKeys), 400, "invalid_client_metadata")).toContain("at most 10 keys");
      const after = await server.database.db.selectFrom("oidc_clients").select(({ fn }) => fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
      expect(Number(after.n)).toBe(Number(before.n));
      // At the bound: accepted.
      await registered({ redirect_uris: many.slice(0, 100) });
    });

    it("two reads with one token: one gets the new token, the other 401", async () => {
      const { uri, token } = await registered();
      const answers: RegistrationReply[] = await Promise.all([manage(uri, "GET", token), manage(uri, "GET", token)]);
      expect(answers.map((a) => a.status).sort()).toEqual([200, 401]);
    });
  });
}
