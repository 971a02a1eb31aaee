import { createHash } from "node:crypto";
import { createRemoteJWKSet, exportJWK, generateKeyPair, jwtVerify, type CryptoKey, type JWTPayload, type JWTVerifyGetKey } from "jose";
import { afterAll, beforeAll, expect } from "vitest";
import type { Selectable } from "kysely";
import { storedKeyOf } from "../../src/domain/oidc/flow/secrets.ts";
import type { OidcTokenTable } from "../../src/storage/schema.ts";
import { TokensRepository } from "../../src/storage/tokens-repository.ts";
import type { DatabaseTarget, ScratchDatabase } from "./databases.ts";
import {
  basicAuthorization,
  Browser,
  clientAssertion,
  createUser,
  findCode,
  jwtBearer,
  obtainCode,
  postToken,
  registerClient,
  type CodeRequest,
  type TestUser,
  type TokenReply,
} from "./oidc.ts";
import { startTestServer, type TestServer } from "./server.ts";

/**
 * The token endpoint's test bed, shared by the files that test it
 * (oidc-token-*.test.ts): a server on one database target with five clients,
 * one per way of authenticating, a signed-in user, and the helpers that get
 * codes through the real flow, post to the endpoint and check its answers.
 * Call it inside the target's describe: it registers that describe's
 * beforeAll and afterAll.
 */


export const clientIds = { basic: "tok-basic", post: "tok-post", jwt: "tok-jwt", public: "tok-public", codeOnly: "tok-code-only" };
export type ClientName = keyof typeof clientIds;
export const secrets = { basic: "tok-basic-secret-0123456789", post: "tok-post-secret-0123456789", codeOnly: "tok-code-only-secret-0123456789" };
export const redirects: Record<ClientName, string> = {
  basic: "https://basic.example/cb",
  post: "https://post.example/cb",
  jwt: "https://jwt.example/cb",
  public: "https://public.example/cb",
  codeOnly: "https://code-only.example/cb",
};
export const accessTokenLifetime = 3600;
export const idTokenLifetime = 3600;

/** The token response members (RFC 6749 §5.1, OIDC Core 3.1.3.3, Grant Management, RFC 9396 §7). */
export interface TokenJson {
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
export function expectedAtHash(accessToken: string): string {
  return createHash("sha256").update(accessToken, "ascii").digest().subarray(0, 16).toString("base64url");
}

export const base64urlJson = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

export function useTokenEndpoint(target: DatabaseTarget) {
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

  /**
   * A token's row, with the revocation the service reads for it
   * (TokensRepository.find: its own or its family's, migration 0037).
   */
  async function asRead(row: Selectable<OidcTokenTable>) {
    const read = await new TokensRepository(live().database).find(row.token_hash);
    return { ...row, revoked_at: read?.revokedAt ?? null };
  }

  async function tokenRow(value: string) {
    const row = await live().database.db.selectFrom("oidc_tokens").selectAll().where("token_hash", "=", storedKeyOf(value)).executeTakeFirst();
    return row && asRead(row);
  }

  /** Every token of a family (the tokens of one code and its refreshes), as a read sees them. */
  async function familyRows(family: string) {
    return Promise.all((await live().database.db.selectFrom("oidc_tokens").selectAll().where("family", "=", family).execute()).map(asRead));
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

  return {
    live,
    browserFor,
    codeFor,
    credentials,
    token,
    exchange,
    refresh,
    expectIssued,
    expectTokenError,
    expectInvalidClient,
    tokenCount,
    tokenRow,
    familyRows,
    verifiedIdToken,
    publishedKids,
    expectIdToken,
    /** What beforeAll set up; read it in a beforeAll of the caller's. */
    state: () => ({ issuer, tokenEndpoint, parEndpoint, privateKey, strangerKey, remoteJwks, user }),
  };
}
