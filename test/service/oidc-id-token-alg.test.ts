import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { calculateJwkThumbprint, createLocalJWKSet, decodeProtectedHeader, generateKeyPair, importJWK, jwtVerify, SignJWT, type JWK } from "jose";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.ts";
import { applyClientsFile } from "../../src/adapters/files/clients-file.ts";
import { atHash } from "../../src/domain/oidc/keys/id-token.ts";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { basicAuthorization, Browser, createUser, expectErrorPage, obtainCode, postToken, registerClient, type TestUser } from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Per-client ID token algorithms (id_token_signed_response_alg): RS256 and
 * ES256 clients side by side on one running server, with the JWKS, refresh,
 * logout hints and key rotation that go with them.
 */
const sqlite = (await databaseTargets()).find((t) => t.name === "sqlite")!;
const secret = "alg-client-secret-0123456789abcdef";
const redirectUri = "https://rp.example/cb";
const scope = "openid offline_access";
const refusal = "id_token_signed_response_alg: must be one of ES256, RS256, PS256, EdDSA (the algorithms this provider signs ID tokens with)";

type Jwks = { keys: (JWK & { kid: string; alg: string })[] };

describe("ID tokens signed as each client registered", () => {
  let scratch: ScratchDatabase;
  let server: TestServer;
  let user: TestUser;
  let issuer: string;
  let dir: string;

  // A provider of each test's own: rotating a key or re-registering a client changes what every later test would see.
  beforeEach(async () => {
    scratch = await sqlite.create();
    server = await startTestServer(scratch.url);
    issuer = server.domain.oidc.issuer;
    dir = mkdtempSync(path.join(tmpdir(), "shomei-alg-"));
    const common = { client_secret: secret, redirect_uris: [redirectUri], scope, post_logout_redirect_uris: ["https://rp.example/out"] };
    await registerClient(server, { ...common, client_id: "rs-rp", client_name: "RS RP", id_token_signed_response_alg: "RS256" });
    await registerClient(server, { ...common, client_id: "es-rp", client_name: "ES RP" });
    await registerClient(server, { ...common, client_id: "ps-rp", client_name: "PS RP", id_token_signed_response_alg: "PS256" });
    await registerClient(server, { ...common, client_id: "ed-rp", client_name: "Ed RP", id_token_signed_response_alg: "EdDSA" });
    await registerClient(server, { ...common, client_id: "switching-rp", client_name: "Switching RP", id_token_signed_response_alg: "ES256" });
    user = await createUser(server);
  });

  afterEach(async () => {
    await server?.close();
    await scratch?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const jwks = async (): Promise<Jwks> => (await (await fetch(`${server.url}/api/oidc/v1/jwks`)).json()) as Jwks;

  /** Code then tokens for the client, as its user; the browser keeps the session for logout. */
  async function tokensFor(clientId: string, browser = new Browser(server.url)) {
    const code = await obtainCode(server, browser, user, { clientId, redirectUri, scope, nonce: "n-1" });
    const reply = await postToken(server, { grant_type: "authorization_code", code, redirect_uri: redirectUri }, { authorization: basicAuthorization(clientId, secret) });
    expect(reply.status, reply.text).toBe(200);
    return { browser, idToken: reply.json!.id_token as string, accessToken: reply.json!.access_token as string, refreshToken: reply.json!.refresh_token as string };
  }

  async function refresh(clientId: string, refreshToken: string) {
    const reply = await postToken(server, { grant_type: "refresh_token", refresh_token: refreshToken }, { authorization: basicAuthorization(clientId, secret) });
    expect(reply.status, reply.text).toBe(200);
    return { idToken: reply.json!.id_token as string, refreshToken: reply.json!.refresh_token as string };
  }

  const verifyAs = async (token: string, clientId: string, alg: string) =>
    (await jwtVerify(token, createLocalJWKSet(await jwks()), { issuer, audience: clientId, algorithms: [alg], typ: "JWT" })).payload;

  it("discovery lists both algorithms; the JWKS holds an EC and an RSA key with their own members, kid the RFC 7638 thumbprint", async () => {
    const metadata = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(metadata.id_token_signing_alg_values_supported).toEqual(["ES256", "RS256", "PS256", "EdDSA"]);
    const { keys } = await jwks();
    expect(keys.map((k) => [k.kty, k.alg, k.use])).toEqual([
      ["EC", "ES256", "sig"],
      ["RSA", "RS256", "sig"],
      ["RSA", "PS256", "sig"],
      ["OKP", "EdDSA", "sig"],
    ]);
    expect(Object.keys(keys[0]!).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x", "y"]);
    expect(Object.keys(keys[1]!).sort()).toEqual(["alg", "e", "kid", "kty", "n", "use"]);
    expect(Object.keys(keys[2]!).sort()).toEqual(["alg", "e", "kid", "kty", "n", "use"]);
    expect(Object.keys(keys[3]!).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x"]);
    for (const key of keys) {
      expect(key.kid).toBe(await calculateJwkThumbprint(key, "sha256"));
      await expect(importJWK(key, key.alg)).resolves.toBeDefined();
    }
    // 2048 bits: 256 octets of modulus, for RS256 and PS256 alike, each its own key.
    expect(Buffer.from(keys[1]!.n!, "base64url")).toHaveLength(256);
    expect(Buffer.from(keys[2]!.n!, "base64url")).toHaveLength(256);
    expect(keys[2]!.n).not.toBe(keys[1]!.n);
  });

  it("an RS256 client gets RS256 ID tokens from the code and from refresh; an ES256 client gets ES256", async () => {
    const rs = await tokensFor("rs-rp");
    const rsKid = (await jwks()).keys.find((k) => k.alg === "RS256")!.kid;
    expect(decodeProtectedHeader(rs.idToken)).toEqual({ alg: "RS256", kid: rsKid, typ: "JWT" });
    const payload = await verifyAs(rs.idToken, "rs-rp", "RS256");
    expect(payload).toMatchObject({ sub: user.row.id, nonce: "n-1", at_hash: atHash(rs.accessToken, "RS256") });
    await expect(verifyAs(rs.idToken, "rs-rp", "ES256")).rejects.toThrow(/"alg"/);
    const refreshed = await refresh("rs-rp", rs.refreshToken);
    expect(decodeProtectedHeader(refreshed.idToken)).toEqual({ alg: "RS256", kid: rsKid, typ: "JWT" });
    expect(await verifyAs(refreshed.idToken, "rs-rp", "RS256")).toMatchObject({ sub: user.row.id });

    const es = await tokensFor("es-rp");
    expect(decodeProtectedHeader(es.idToken).alg).toBe("ES256");
    expect(await verifyAs(es.idToken, "es-rp", "ES256")).toMatchObject({ sub: user.row.id });
    expect(decodeProtectedHeader((await refresh("es-rp", es.refreshToken)).idToken).alg).toBe("ES256");
  });

  it("a PS256 client gets PS256 ID tokens and an EdDSA client EdDSA ones, from the code and from refresh, at_hash hashed as each alg says", async () => {
    for (const [clientId, alg, hash] of [["ps-rp", "PS256", "sha256"], ["ed-rp", "EdDSA", "sha512"]] as const) {
      const tokens = await tokensFor(clientId);
      const kid = (await jwks()).keys.find((k) => k.alg === alg)!.kid;
      expect(decodeProtectedHeader(tokens.idToken)).toEqual({ alg, kid, typ: "JWT" });
      const digest = createHash(hash).update(tokens.accessToken, "ascii").digest();
      expect(await verifyAs(tokens.idToken, clientId, alg)).toMatchObject({ sub: user.row.id, nonce: "n-1", at_hash: digest.subarray(0, digest.length / 2).toString("base64url") });
      for (const other of ["ES256", "RS256", "PS256", "EdDSA"].filter((a) => a !== alg)) await expect(verifyAs(tokens.idToken, clientId, other)).rejects.toThrow(/"alg"/);
      const refreshed = await refresh(clientId, tokens.refreshToken);
      expect(decodeProtectedHeader(refreshed.idToken)).toEqual({ alg, kid, typ: "JWT" });
      expect(await verifyAs(refreshed.idToken, clientId, alg)).toMatchObject({ sub: user.row.id });
    }
  });

  it("refresh follows the client's registration as it is now: re-registered for RS256, the next refreshed ID token is RS256", async () => {
    const first = await tokensFor("switching-rp");
    expect(decodeProtectedHeader(first.idToken).alg).toBe("ES256");
    await registerClient(server, {
      client_id: "switching-rp",
      client_name: "Switching RP",
      client_secret: secret,
      redirect_uris: [redirectUri],
      scope,
      id_token_signed_response_alg: "RS256",
    });
    const refreshed = await refresh("switching-rp", first.refreshToken);
    expect(decodeProtectedHeader(refreshed.idToken).alg).toBe("RS256");
    expect(await verifyAs(refreshed.idToken, "switching-rp", "RS256")).toMatchObject({ sub: user.row.id });
  });

  it("logout accepts an id_token_hint signed with any of the algorithms, and refuses an RS256 one signed by another key", async () => {
    for (const [clientId, name] of [["rs-rp", "RS RP"], ["es-rp", "ES RP"], ["ps-rp", "PS RP"], ["ed-rp", "Ed RP"]]) {
      const { browser, idToken } = await tokensFor(clientId!);
      const page = await browser.get(`/auth/logout?${new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: "https://rp.example/out" })}`);
      expect(page.status, page.body).toBe(200);
      expect(page.body).toContain(`<strong>${name}</strong> asks you to sign out.`);
    }
    const { browser } = await tokensFor("rs-rp");
    const kid = (await jwks()).keys.find((k) => k.alg === "RS256")!.kid;
    const { privateKey } = await generateKeyPair("RS256");
    const forged = await new SignJWT({ iss: issuer, aud: "rs-rp", sub: user.row.id }).setProtectedHeader({ alg: "RS256", kid }).sign(privateKey);
    expectErrorPage(await browser.get(`/auth/logout?${new URLSearchParams({ id_token_hint: forged })}`), "invalid_request");
  });

  it("rotating the RSA key: a new kid in the JWKS, the old one still published, new ID tokens signed with the new key; ES256 untouched", async () => {
    const before = await tokensFor("rs-rp");
    const oldKid = decodeProtectedHeader(before.idToken).kid!;
    const esKid = (await jwks()).keys.find((k) => k.alg === "ES256")!.kid;

    const rotated = await server.domain.oidc.signingKeys.rotate("RS256");
    expect(rotated).toEqual({ alg: "RS256", newKid: expect.any(String), retiredKid: oldKid });
    const published = await jwks();
    expect(published.keys.map((k) => [k.alg, k.kid]).slice(0, 3)).toEqual([
      ["ES256", esKid],
      ["RS256", rotated.newKid],
      ["RS256", oldKid],
    ]);
    expect(published.keys.slice(3).map((k) => k.alg)).toEqual(["PS256", "EdDSA"]);

    const after = await tokensFor("rs-rp");
    expect(decodeProtectedHeader(after.idToken)).toEqual({ alg: "RS256", kid: rotated.newKid, typ: "JWT" });
    await verifyAs(after.idToken, "rs-rp", "RS256");
    await verifyAs(before.idToken, "rs-rp", "RS256");
    expect(decodeProtectedHeader((await tokensFor("es-rp")).idToken).kid).toBe(esKid);
  });

  it("a registration with an algorithm the provider does not sign with is refused, and nothing is saved", async () => {
    for (const alg of ["HS256", "none", "PS384", "Ed25519", "rs256", 256, null]) {
      const refused = await registerClient(server, { client_id: "bad-alg-rp", client_secret: secret, redirect_uris: [redirectUri], id_token_signed_response_alg: alg }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(DomainError);
      expect(refused).toMatchObject({ code: "invalid_field", field: "id_token_signed_response_alg", message: refusal });
    }
    expect(await server.domain.oidc.clients.find("bad-alg-rp")).toBeUndefined();
  });

  it("the clients file sets the algorithm, and refuses an unsupported one: the entry is not saved and the file stops there", async () => {
    const entry = (clientId: string, alg: string) => ({ client_id: clientId, client_secret: secret, redirect_uris: [redirectUri], id_token_signed_response_alg: alg });
    const good = path.join(dir, "good.json");
    writeFileSync(good, JSON.stringify({ clients: [entry("file-rs-rp", "RS256"), entry("file-es-rp", "ES256")] }));
    expect(await applyClientsFile(good, server.domain.oidc.clients, Date.now())).toEqual(["file-rs-rp", "file-es-rp"]);
    expect((await server.domain.oidc.clients.find("file-rs-rp"))?.idTokenSignedResponseAlg).toBe("RS256");
    expect((await server.domain.oidc.clients.find("file-es-rp"))?.idTokenSignedResponseAlg).toBe("ES256");

    const bad = path.join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ clients: [entry("file-bad-rp", "HS256"), entry("file-after-rp", "RS256")] }));
    await expect(applyClientsFile(bad, server.domain.oidc.clients, Date.now())).rejects.toMatchObject({
      code: "invalid_field",
      message: `clients file ${bad}, clients[0]: ${refusal}`,
    });
    expect(await server.domain.oidc.clients.find("file-bad-rp")).toBeUndefined();
    expect(await server.domain.oidc.clients.find("file-after-rp")).toBeUndefined();
  });
});
