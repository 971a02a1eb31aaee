import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { SignJWT } from "jose";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { seedOidcDemo } from "../../src/app/mock/oidc-demo-seed.ts";
import { dpopSigningAlgorithms } from "../../src/domain/oidc/dpop/algorithms.ts";
import { storedKeyOf } from "../../src/domain/oidc/flow/secrets.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { dpopKey, dpopProof, hmacProof, postWithHeaderLines, unsignedProof, type DpopKey } from "../support/dpop.ts";
import {
  authorizeUrl,
  basicAuthorization,
  Browser,
  createUser,
  expectCodeRedirect,
  pkce,
  postForm,
  postPar,
  postToken,
  registerClient,
  signIn,
  submitPage,
  type ParReply,
  type TestUser,
} from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * DPoP (RFC 9449) at every endpoint that takes a proof: the proof checks and
 * their exact errors, key-bound codes and refresh tokens, DPoP-bound access
 * tokens at userinfo, grant management and introspection, per-client
 * enforcement, and server nonces; on every database target. Every refusal
 * also checks that nothing was stored or used up.
 */

const targets = await databaseTargets();

const redirects = { public: "https://dpop-public.example/cb", confidential: "https://dpop-conf.example/cb", required: "https://dpop-required.example/cb" };
const secrets = { confidential: "dpop-confidential-secret-0123456789", required: "dpop-required-secret-0123456789" };
type ClientName = keyof typeof redirects;

interface Tokens {
  access_token: string;
  token_type: string;
  refresh_token?: string;
  grant_id: string;
}

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let database: ScratchDatabase | undefined;
    let server: TestServer | undefined;
    let user: TestUser;
    let key: DpopKey;
    let otherKey: DpopKey;
    const suffix = randomBytes(4).toString("hex");
    const clientIds = { public: `dpop-public-${suffix}`, confidential: `dpop-conf-${suffix}`, required: `dpop-required-${suffix}` };

    const live = (): TestServer => {
      if (!server) throw new Error("server not started");
      return server;
    };
    const endpoints = () => live().domain.oidc.endpoints;

    beforeAll(async () => {
      database = await target.create();
      // Every public PAR request here comes from one address: a limit the rate-limit test in oidc-par checks on its own.
      server = await startTestServer(database.url, { publicParMaxPerAddress: 10_000 });
      key = await dpopKey("ES256");
      otherKey = await dpopKey("ES256");
      const common = { scope: "openid profile offline_access" };
      await registerClient(server, { ...common, client_id: clientIds.public, token_endpoint_auth_method: "none", redirect_uris: [redirects.public] });
      await registerClient(server, { ...common, client_id: clientIds.confidential, client_secret: secrets.confidential, redirect_uris: [redirects.confidential] });
      await registerClient(server, {
        ...common,
        client_id: clientIds.required,
        client_secret: secrets.required,
        redirect_uris: [redirects.required],
        dpop_bound_access_tokens: true,
      });
    });

    afterAll(async () => {
      await server?.close();
      await database?.drop();
    });

    // A user of each test's own: the user's grant to a client collects every token issued under it, in any test.
    beforeEach(async () => {
      user = await createUser(live());
    });

    /** The form members and headers that authenticate the client. */
    const credentials = (name: ClientName): { form: Record<string, string>; headers: Record<string, string> } =>
      name === "public"
        ? { form: { client_id: clientIds.public }, headers: {} }
        : { form: {}, headers: { authorization: basicAuthorization(clientIds[name], secrets[name]) } };

    /** POSTs to PAR for the client with an optional DPoP proof. */
    async function par(name: ClientName, form: Record<string, string | undefined>, proof?: string): Promise<ParReply> {
      const c = credentials(name);
      return postPar(live(), { ...c.form, ...form }, { ...c.headers, ...(proof ? { dpop: proof } : {}) });
    }

    /** A valid authorization request for the client, and its PKCE verifier. */
    function authorizationRequest(name: ClientName, extra: Record<string, string> = {}) {
      const { verifier, challenge } = pkce();
      const state = `state-${randomBytes(4).toString("hex")}`;
      const form = { redirect_uri: redirects[name], response_type: "code", scope: "openid offline_access", state, code_challenge: challenge, code_challenge_method: "S256", ...extra };
      return { form, verifier, state };
    }

    /** Pushes a request (with a proof of `proofKey`, if given), then goes through the pages; returns the code and verifier. */
    async function codeViaPar(name: ClientName, proofKey: DpopKey | undefined, extra: Record<string, string> = {}) {
      const { form, verifier, state } = authorizationRequest(name, extra);
      const proof = proofKey ? await dpopProof(proofKey, { htu: endpoints().par }) : undefined;
      const pushed = await par(name, form, proof);
      expect(pushed.status, pushed.text).toBe(201);
      const code = await codeThroughPages(name, { client_id: clientIds[name], request_uri: pushed.json!.request_uri as string }, state);
      return { code, verifier };
    }

    /** Follows an authorization request through sign-in and consent in a fresh browser, up to the code. */
    async function codeThroughPages(name: ClientName, query: Record<string, string>, state: string): Promise<string> {
      const browser = new Browser(live().url);
      let reply = await browser.get(authorizeUrl(query));
      if (reply.location?.startsWith("/auth/login?")) reply = await signIn(browser, reply, user.login, user.password);
      if (reply.location?.startsWith("/auth/consent?")) reply = await submitPage(browser, reply, "consent", { decision: "allow" });
      return expectCodeRedirect(reply, { redirectUri: redirects[name], issuer: live().domain.oidc.issuer, state });
    }

    /** POSTs a token request for the client, with a proof if given. */
    function token(name: ClientName, form: Record<string, string>, proof?: string) {
      const c = credentials(name);
      return postToken(live(), { ...c.form, ...form }, { ...c.headers, ...(proof ? { dpop: proof } : {}) });
    }

    async function redeem(name: ClientName, code: string, verifier: string, proofKey?: DpopKey) {
      const proof = proofKey ? await dpopProof(proofKey, { htu: endpoints().token }) : undefined;
      return token(name, { grant_type: "authorization_code", code, redirect_uri: redirects[name], code_verifier: verifier }, proof);
    }

    async function refresh(name: ClientName, refreshToken: string, proofKey?: DpopKey) {
      const proof = proofKey ? await dpopProof(proofKey, { htu: endpoints().token }) : undefined;
      return token(name, { grant_type: "refresh_token", refresh_token: refreshToken }, proof);
    }

    function expectTokens(reply: ParReply, tokenType: "DPoP" | "Bearer"): Tokens {
      expect(reply.status, reply.text).toBe(200);
      expect(reply.json!.token_type).toBe(tokenType);
      return reply.json as unknown as Tokens;
    }

    function expectError(reply: ParReply, status: number, error: string, description?: RegExp): void {
      expect(reply.status, reply.text).toBe(status);
      expect(reply.json?.error, reply.text).toBe(error);
      expect(reply.json?.error_description).toMatch(description ?? /\S/);
      expect(reply.json).not.toHaveProperty("access_token");
      expect(reply.json).not.toHaveProperty("request_uri");
    }

    const tokenCount = async () => (await live().database.db.selectFrom("oidc_tokens").select("token_hash").execute()).length;
    const requestUriCount = async () =>
      (await live().database.db.selectFrom("one_time_records").select("key_hash").where("kind", "=", "request_uri").execute()).length;
    const usedProofCount = async () => (await live().database.db.selectFrom("oidc_dpop_proof_jtis").select("jti_hash").execute()).length;

    /** A resource request with `Authorization: <scheme> <token>` and optional proof lines. */
    async function resource(method: string, url: string, scheme: string, accessToken: string, proofs: string[] = []) {
      const headers = new Headers({ authorization: `${scheme} ${accessToken}`, accept: "application/json" });
      if (proofs.length > 0) headers.set("dpop", proofs[0]!);
      const response = await fetch(url, { method, headers });
      const text = await response.text();
      return { status: response.status, headers: response.headers, json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
    }

    /** DPoP-bound tokens for the public client, bound to `key`. */
    async function publicDpopTokens(): Promise<Tokens> {
      const { code, verifier } = await codeViaPar("public", key);
      return expectTokens(await redeem("public", code, verifier, key), "DPoP");
    }

    it("the mock demo seed registers a public client that must use DPoP", async () => {
      const dataDir = mkdtempSync(path.join(tmpdir(), "shomei-dpop-seed-"));
      try {
        const demo = await seedOidcDemo(live().domain.oidc, dataDir, Date.now());
        expect(await live().domain.oidc.clients.find(demo.publicClientId)).toMatchObject({
          type: "public",
          tokenEndpointAuthMethod: "none",
          secretHash: null,
          dpopBoundAccessTokens: true,
          redirectUris: [demo.redirectUri],
        });
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });

    it("discovery lists the proof algorithms", async () => {
      const metadata = (await (await fetch(new URL("/.well-known/openid-configuration", live().url))).json()) as Record<string, unknown>;
      expect(metadata.dpop_signing_alg_values_supported).toEqual([...dpopSigningAlgorithms]);
    });

    describe("a public client through PAR, token, refresh and userinfo", () => {
      it("gets DPoP-bound tokens; the code, refresh token and access token work only with the key", async () => {
        const tokens = await publicDpopTokens();
        expect(tokens.refresh_token).toBeDefined();
        const stored = await live().database.db.selectFrom("oidc_tokens").select(["kind", "dpop_jkt"]).where("grant_id", "=", tokens.grant_id).execute();
        expect(stored.map((row) => row.dpop_jkt)).toEqual([key.jkt, key.jkt]);

        const info = await resource("GET", endpoints().userinfo, "DPoP", tokens.access_token, [
          await dpopProof(key, { htm: "GET", htu: endpoints().userinfo, accessToken: tokens.access_token }),
        ]);
        expect(info.status, JSON.stringify(info.json)).toBe(200);
        expect(info.json!.sub).toBe(user.row.id);

        const refreshed = expectTokens(await refresh("public", tokens.refresh_token!, key), "DPoP");
        const info2 = await resource("POST", endpoints().userinfo, "DPoP", refreshed.access_token, [
          await dpopProof(key, { htm: "POST", htu: `${endpoints().userinfo}?ignored=1#fragment`, accessToken: refreshed.access_token }),
        ]);
        expect(info2.status, JSON.stringify(info2.json)).toBe(200);
      });

      it("a refresh with another key, or without a proof, fails invalid_grant and leaves the refresh token usable", async () => {
        const tokens = await publicDpopTokens();
        const before = await tokenCount();
        expectError(await refresh("public", tokens.refresh_token!, otherKey), 400, "invalid_grant", /bound to another DPoP key/);
        expectError(await refresh("public", tokens.refresh_token!), 400, "invalid_grant", /bound to another DPoP key/);
        expect(await tokenCount()).toBe(before);
        expectTokens(await refresh("public", tokens.refresh_token!, key), "DPoP");
      });

      it("a public client's tokens without DPoP are Bearer tokens, and its refresh token is not bound", async () => {
        const { code, verifier } = await codeViaPar("public", undefined);
        const tokens = expectTokens(await redeem("public", code, verifier), "Bearer");
        expectTokens(await refresh("public", tokens.refresh_token!), "Bearer");
      });
    });

    describe("codes bound to a key", () => {
      it("a code bound by the PAR proof, redeemed with another key or without a proof → invalid_grant, and not used up", async () => {
        const { code, verifier } = await codeViaPar("public", key);
        const before = await tokenCount();
        expectError(await redeem("public", code, verifier, otherKey), 400, "invalid_grant", /authorization code is bound to another DPoP key/);
        expectError(await redeem("public", code, verifier), 400, "invalid_grant", /authorization code is bound to another DPoP key/);
        expect(await tokenCount()).toBe(before);
        expectTokens(await redeem("public", code, verifier, key), "DPoP");
      });

      it("dpop_jkt at PAR binds a confidential client's code without a proof there", async () => {
        const { code, verifier } = await codeViaPar("confidential", undefined, { dpop_jkt: key.jkt });
        expectError(await redeem("confidential", code, verifier, otherKey), 400, "invalid_grant");
        expectTokens(await redeem("confidential", code, verifier, key), "DPoP");
      });

      it("dpop_jkt at the authorization endpoint binds the code", async () => {
        const { form, verifier, state } = authorizationRequest("public", { dpop_jkt: key.jkt });
        const code = await codeThroughPages("public", { client_id: clientIds.public, ...form }, state);
        expectError(await redeem("public", code, verifier, otherKey), 400, "invalid_grant");
        expectTokens(await redeem("public", code, verifier, key), "DPoP");
      });

      it("dpop_jkt that does not match the PAR proof's key → invalid_request, nothing stored", async () => {
        const before = { uris: await requestUriCount(), proofs: await usedProofCount() };
        const { form } = authorizationRequest("public", { dpop_jkt: otherKey.jkt });
        expectError(await par("public", form, await dpopProof(key, { htu: endpoints().par })), 400, "invalid_request", /dpop_jkt does not match/);
        expect(await requestUriCount()).toBe(before.uris);
      });

      it("a malformed dpop_jkt → invalid_request", async () => {
        const { form } = authorizationRequest("public", { dpop_jkt: "not-a-thumbprint" });
        expectError(await par("public", form), 400, "invalid_request", /dpop_jkt/);
      });
    });

    describe("proof checks (token endpoint)", () => {
      /** Sends a proof with a fresh code's exchange and expects invalid_dpop_proof; the code stays redeemable. */
      async function expectRefused(proof: string | ((htu: string) => Promise<string> | string), description: RegExp): Promise<void> {
        const { code, verifier } = await codeViaPar("confidential", undefined);
        const before = { tokens: await tokenCount(), proofs: await usedProofCount() };
        const value = typeof proof === "string" ? proof : await proof(endpoints().token);
        const reply = await token("confidential", { grant_type: "authorization_code", code, redirect_uri: redirects.confidential, code_verifier: verifier }, value);
        expectError(reply, 400, "invalid_dpop_proof", description);
        expect(await tokenCount()).toBe(before.tokens);
        expect(await usedProofCount()).toBe(before.proofs);
        expectTokens(await redeem("confidential", code, verifier), "Bearer");
      }

      const now = () => Math.floor(Date.now() / 1000);

      it("typ other than dpop+jwt", () => expectRefused((htu) => dpopProof(key, { htu, typ: "JWT" }), /typ must be dpop\+jwt/));
      it("alg none", () => expectRefused((htu) => unsignedProof(key, htu), /alg must be one of ES256, PS256, RS256, EdDSA/));
      it("alg HS256", () => expectRefused((htu) => hmacProof(key, htu), /alg must be one of/));
      it("a private key in the jwk", () => expectRefused((htu) => dpopProof(key, { htu, jwk: key.privateJwk }), /public key without private members/));
      it("no jwk", () => expectRefused((htu) => dpopProofWithoutJwk(htu), /must carry the public key/));
      it("a signature by another key than the jwk's", () => expectRefused((htu) => dpopProof(otherKey, { htu, jwk: key.publicJwk }), /signature does not verify/));
      it("wrong htm", () => expectRefused((htu) => dpopProof(key, { htu, htm: "GET" }), /htm must be POST/));
      it("wrong htu", () => expectRefused(() => dpopProof(key, { htu: endpoints().par }), /htu must be/));
      it("htu with another scheme", () => expectRefused((htu) => dpopProof(key, { htu: htu.replace(/^http:/, "https:") }), /htu must be/));
      it("htu on another host", () => expectRefused((htu) => dpopProof(key, { htu: htu.replace("//localhost:", "//127.0.0.1:") }), /htu must be/));
      it("iat too old", () => expectRefused((htu) => dpopProof(key, { htu, iat: now() - 120 }), /too old/));
      it("iat in the future", () => expectRefused((htu) => dpopProof(key, { htu, iat: now() + 120 }), /in the future/));
      it("no jti", () => expectRefused((htu) => dpopProof(key, { htu, omit: ["jti"] }), /jti/));
      it("not a JWT", () => expectRefused("not-a-jwt", /not a JWT/));

      /** A proof whose header has no jwk, signed with the key. */
      async function dpopProofWithoutJwk(htu: string): Promise<string> {
        return new SignJWT({ jti: randomBytes(8).toString("hex"), htm: "POST", htu, iat: now() }).setProtectedHeader({ typ: "dpop+jwt", alg: "ES256" }).sign(key.privateKey);
      }

      it("a replayed proof (same jti) fails the second time, even on another endpoint's check", async () => {
        const proof = await dpopProof(key, { htu: endpoints().token });
        const first = await codeViaPar("confidential", undefined);
        expectTokens(await token("confidential", { grant_type: "authorization_code", code: first.code, redirect_uri: redirects.confidential, code_verifier: first.verifier }, proof), "DPoP");
        await expectRefused(proof, /already used \(jti replayed\)/);
      });

      it("two DPoP headers", async () => {
        const { code, verifier } = await codeViaPar("confidential", undefined);
        const proofs = [await dpopProof(key, { htu: endpoints().token }), await dpopProof(key, { htu: endpoints().token })];
        const before = await usedProofCount();
        const reply = await postWithHeaderLines(endpoints().token, { grant_type: "authorization_code", code, redirect_uri: redirects.confidential, code_verifier: verifier }, {
          authorization: basicAuthorization(clientIds.confidential, secrets.confidential),
          dpop: proofs,
        });
        expect(reply.status).toBe(400);
        expect(reply.json).toEqual({ error: "invalid_dpop_proof", error_description: "send exactly one DPoP header" });
        expect(await usedProofCount()).toBe(before);
        expectTokens(await redeem("confidential", code, verifier, key), "DPoP");
      });

      it("a proof with RS256, PS256 and EdDSA keys is accepted", async () => {
        for (const alg of ["RS256", "PS256", "EdDSA"]) {
          const algKey = await dpopKey(alg);
          const { code, verifier } = await codeViaPar("confidential", undefined);
          const tokens = expectTokens(await redeem("confidential", code, verifier, algKey), "DPoP");
          const stored = await live().database.db.selectFrom("oidc_tokens").select("dpop_jkt").where("token_hash", "=", storedKeyOf(tokens.access_token)).executeTakeFirst();
          expect(stored?.dpop_jkt, alg).toBe(algKey.jkt);
        }
      });

      it("a bad proof at PAR → invalid_dpop_proof, nothing stored", async () => {
        const before = await requestUriCount();
        const { form } = authorizationRequest("public");
        expectError(await par("public", form, await dpopProof(key, { htu: endpoints().token })), 400, "invalid_dpop_proof", /htu must be/);
        expect(await requestUriCount()).toBe(before);
      });
    });

    describe("dpop_bound_access_tokens", () => {
      it("a token request of such a client without a proof → invalid_dpop_proof, the code not used up", async () => {
        const { code, verifier } = await codeViaPar("required", undefined);
        const before = await tokenCount();
        expectError(await redeem("required", code, verifier), 400, "invalid_dpop_proof", /must send a DPoP proof/);
        expect(await tokenCount()).toBe(before);
        const tokens = expectTokens(await redeem("required", code, verifier, key), "DPoP");
        expectError(await refresh("required", tokens.refresh_token!), 400, "invalid_dpop_proof", /must send a DPoP proof/);
        // A confidential client's refresh token is not bound: another key binds the new access token to it.
        const refreshed = expectTokens(await refresh("required", tokens.refresh_token!, otherKey), "DPoP");
        const stored = await live().database.db.selectFrom("oidc_tokens").select("dpop_jkt").where("token_hash", "=", storedKeyOf(refreshed.access_token)).executeTakeFirst();
        expect(stored?.dpop_jkt).toBe(otherKey.jkt);
      });
    });

    describe("resource endpoints", () => {
      it("a DPoP-bound token presented as Bearer → 401 invalid_token with a DPoP challenge", async () => {
        const tokens = await publicDpopTokens();
        const reply = await resource("GET", endpoints().userinfo, "Bearer", tokens.access_token);
        expect(reply.status).toBe(401);
        expect(reply.json).toEqual({ error: "invalid_token", error_description: "the access token is DPoP-bound: send it with the DPoP scheme and a proof" });
        expect(reply.headers.get("www-authenticate")).toBe(
          `DPoP realm="shomei", error="invalid_token", error_description="the access token is DPoP-bound: send it with the DPoP scheme and a proof", algs="${dpopSigningAlgorithms.join(" ")}"`,
        );
      });

      it("proof problems at userinfo → 401 invalid_dpop_proof with a DPoP challenge", async () => {
        const tokens = await publicDpopTokens();
        const url = endpoints().userinfo;
        const cases: Array<[string, string[], RegExp]> = [
          ["no proof", [], /a DPoP proof is required/],
          ["no ath", [await dpopProof(key, { htm: "GET", htu: url })], /must carry ath/],
          ["wrong ath", [await dpopProof(key, { htm: "GET", htu: url, accessToken: "another token" })], /ath does not match/],
          ["another key", [await dpopProof(otherKey, { htm: "GET", htu: url, accessToken: tokens.access_token })], /not signed by the key the access token is bound to/],
          ["wrong htm", [await dpopProof(key, { htm: "POST", htu: url, accessToken: tokens.access_token })], /htm must be GET/],
        ];
        for (const [name, proofs, description] of cases) {
          const reply = await resource("GET", url, "DPoP", tokens.access_token, proofs);
          expect(reply.status, name).toBe(401);
          expect(reply.json?.error, name).toBe("invalid_dpop_proof");
          expect(reply.json?.error_description, name).toMatch(description);
          expect(reply.headers.get("www-authenticate"), name).toMatch(/^DPoP realm="shomei", error="invalid_dpop_proof", error_description="[^"]+", algs="ES256 PS256 RS256 EdDSA"$/);
        }
        // A proof used once cannot be used again.
        const proof = await dpopProof(key, { htm: "GET", htu: url, accessToken: tokens.access_token });
        expect((await resource("GET", url, "DPoP", tokens.access_token, [proof])).status).toBe(200);
        const replay = await resource("GET", url, "DPoP", tokens.access_token, [proof]);
        expect(replay.status).toBe(401);
        expect(replay.json?.error_description).toMatch(/jti replayed/);
      });

      it("a Bearer token presented with the DPoP scheme, and an unknown token → 401 invalid_token", async () => {
        const { code, verifier } = await codeViaPar("confidential", undefined);
        const bearer = expectTokens(await redeem("confidential", code, verifier), "Bearer");
        const url = endpoints().userinfo;
        const reply = await resource("GET", url, "DPoP", bearer.access_token, [await dpopProof(key, { htm: "GET", htu: url, accessToken: bearer.access_token })]);
        expect(reply.status).toBe(401);
        expect(reply.json?.error).toBe("invalid_token");
        expect(reply.headers.get("www-authenticate")).toMatch(/^Bearer realm="shomei", error="invalid_token"/);
        const unknown = randomBytes(32).toString("base64url");
        const reply2 = await resource("GET", url, "DPoP", unknown, [await dpopProof(key, { htm: "GET", htu: url, accessToken: unknown })]);
        expect(reply2.status).toBe(401);
        expect(reply2.json?.error).toBe("invalid_token");
        expect(reply2.headers.get("www-authenticate")).toMatch(/^DPoP realm="shomei", error="invalid_token"/);
      });

      it("grant management with a DPoP-bound token and its proof (htu with the grant id)", async () => {
        const tokens = await publicDpopTokens();
        const url = `${endpoints().grants}/${tokens.grant_id}`;
        const get = await resource("GET", url, "DPoP", tokens.access_token, [await dpopProof(key, { htm: "GET", htu: url, accessToken: tokens.access_token })]);
        expect(get.status, JSON.stringify(get.json)).toBe(200);
        const bearer = await resource("GET", url, "Bearer", tokens.access_token);
        expect(bearer.status).toBe(401);
        expect(bearer.json?.error).toBe("invalid_token");
        const wrongHtu = await resource("DELETE", url, "DPoP", tokens.access_token, [await dpopProof(key, { htm: "DELETE", htu: endpoints().grants, accessToken: tokens.access_token })]);
        expect(wrongHtu.status).toBe(401);
        expect(wrongHtu.json?.error).toBe("invalid_dpop_proof");
        // The grant survived the refused DELETE.
        expect((await live().database.db.selectFrom("oidc_grants").select("revoked_at").where("id", "=", tokens.grant_id).executeTakeFirst())?.revoked_at).toBeNull();
        const del = await resource("DELETE", url, "DPoP", tokens.access_token, [await dpopProof(key, { htm: "DELETE", htu: url, accessToken: tokens.access_token })]);
        expect(del.status).toBe(204);
      });

      it("introspection shows token_type DPoP and cnf.jkt; a bad proof at introspection or revocation → invalid_dpop_proof", async () => {
        const { code, verifier } = await codeViaPar("confidential", undefined);
        const tokens = expectTokens(await redeem("confidential", code, verifier, key), "DPoP");
        const auth = { authorization: basicAuthorization(clientIds.confidential, secrets.confidential) };
        const introspected = await postForm(live(), "/api/oidc/v1/introspect", { token: tokens.access_token }, auth);
        expect(introspected.status).toBe(200);
        expect(introspected.json).toMatchObject({ active: true, token_type: "DPoP", cnf: { jkt: key.jkt } });
        const withProof = await postForm(live(), "/api/oidc/v1/introspect", { token: tokens.access_token }, { ...auth, dpop: await dpopProof(key, { htu: endpoints().introspection }) });
        expect(withProof.json).toMatchObject({ active: true });

        const badIntrospection = await postForm(live(), "/api/oidc/v1/introspect", { token: tokens.access_token }, { ...auth, dpop: await dpopProof(key, { htu: endpoints().token }) });
        expectError(badIntrospection, 400, "invalid_dpop_proof", /htu must be/);
        const badRevocation = await postForm(live(), "/api/oidc/v1/revoke", { token: tokens.access_token }, { ...auth, dpop: await dpopProof(key, { htu: endpoints().revocation, htm: "GET" }) });
        expectError(badRevocation, 400, "invalid_dpop_proof", /htm must be POST/);
        // The refused revocation revoked nothing.
        const still = await postForm(live(), "/api/oidc/v1/introspect", { token: tokens.access_token }, auth);
        expect(still.json).toMatchObject({ active: true });
        const revoked = await postForm(live(), "/api/oidc/v1/revoke", { token: tokens.access_token }, { ...auth, dpop: await dpopProof(key, { htu: endpoints().revocation }) });
        expect(revoked.status).toBe(200);
        expect((await postForm(live(), "/api/oidc/v1/introspect", { token: tokens.access_token }, auth)).json).toEqual({ active: false });
      });
    });

    describe("server nonces (SHOMEI_DPOP_REQUIRE_NONCE)", () => {
      let nonceServer: TestServer | undefined;
      beforeAll(async () => {
        nonceServer = await startTestServer(database!.url, { dpopRequireNonce: true, publicParMaxPerAddress: 10_000 });
      });
      afterAll(async () => {
        await nonceServer?.close();
      });

      it("a proof without the nonce → use_dpop_nonce with a DPoP-Nonce header; with it, the request passes", async () => {
        const s = nonceServer!;
        const { form } = authorizationRequest("public");
        const parUrl = s.domain.oidc.endpoints.par;
        const first = await postPar(s, { client_id: clientIds.public, ...form }, { dpop: await dpopProof(key, { htu: parUrl }) });
        expectError(first, 400, "use_dpop_nonce");
        const nonce = first.headers.get("dpop-nonce");
        expect(nonce).toMatch(/^[0-9a-z]+\.[A-Za-z0-9_-]{43}$/);
        const stale = await postPar(s, { client_id: clientIds.public, ...form }, { dpop: await dpopProof(key, { htu: parUrl, nonce: "0.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" }) });
        expectError(stale, 400, "use_dpop_nonce");
        const pushed = await postPar(s, { client_id: clientIds.public, ...form }, { dpop: await dpopProof(key, { htu: parUrl, nonce: nonce! }) });
        expect(pushed.status, pushed.text).toBe(201);
        expect(pushed.headers.get("dpop-nonce")).toBe(nonce);
      });

      it("at userinfo the nonce error is a 401 DPoP challenge", async () => {
        const tokens = await publicDpopTokens();
        const url = nonceServer!.domain.oidc.endpoints.userinfo;
        const reply = await resource("GET", url, "DPoP", tokens.access_token, [await dpopProof(key, { htm: "GET", htu: url, accessToken: tokens.access_token })]);
        expect(reply.status).toBe(401);
        expect(reply.json?.error).toBe("use_dpop_nonce");
        expect(reply.headers.get("www-authenticate")).toMatch(/^DPoP realm="shomei", error="use_dpop_nonce"/);
        const nonce = reply.headers.get("dpop-nonce")!;
        const ok = await resource("GET", url, "DPoP", tokens.access_token, [await dpopProof(key, { htm: "GET", htu: url, accessToken: tokens.access_token, nonce })]);
        expect(ok.status, JSON.stringify(ok.json)).toBe(200);
      });
    });
  });
}
