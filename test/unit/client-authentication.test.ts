import { createHash, randomUUID } from "node:crypto";
import { SignJWT, base64url, exportJWK, generateKeyPair, type CryptoKey, type JSONWebKeySet, type JWK, type JWTPayload } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ClientAuthError,
  ClientAuthenticator,
  clientAssertionJtiKind,
  clientAuthFailedDescription,
  jwtBearerAssertionType,
  parseBasicAuthorization,
  type ClientAuthErrorCode,
  type ClientAuthFailureReason,
  type ClientCredentialsInput,
  type ClientLookup,
} from "../../src/domain/oidc/client-authentication.ts";
import type { ClientAuthMethod, OidcClient } from "../../src/domain/oidc/client.ts";
import { sha256Hex } from "../../src/domain/oidc/flow/secrets.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { OneTimeRecords } from "../../src/storage/one-time-records.ts";
import { databaseTargets, targetTitle, type DatabaseTarget, type ScratchDatabase } from "../support/databases.ts";
import { inlineClientKeys } from "../support/client-keys.ts";

const targets = await databaseTargets();

const issuer = "https://op.example.test";
const parEndpoint = `${issuer}/api/oidc/v1/par`;
const audiences = [issuer];
/** Epoch milliseconds; assertions are built around this instant, not the wall clock. */
const now = Date.UTC(2030, 0, 1, 12, 0, 0);
const nowSeconds = Math.floor(now / 1000);

const basicSecret = "basic-secret-4f1c9a7e2b";
const postSecret = "post-secret-9d2e7c1a5f";
const specialId = "app:1 ü+%";
const specialSecret = "p:a%ss+w rd€ü:é/?&=#";

// ---------------------------------------------------------------- fixtures

interface KeyPair {
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function keyPair(alg: string, kid?: string): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  const publicJwk = { ...(await exportJWK(publicKey)), use: "sig", ...(kid ? { kid } : {}) };
  return { privateKey, publicJwk };
}

function client(clientId: string, method: ClientAuthMethod, extra: Partial<OidcClient> = {}): OidcClient {
  return {
    clientId,
    name: clientId,
    type: method === "none" ? "public" : "confidential",
    tokenEndpointAuthMethod: method,
    secretHash: null,
    jwks: null,
    redirectUris: [`https://${encodeURIComponent(clientId)}.example.test/cb`],
    allowedScopes: ["openid"],
    allowedAuthorizationDetailsTypes: [],
    requirePushedAuthorizationRequests: false,
    grantTypes: ["authorization_code", "refresh_token"],
    postLogoutRedirectUris: [],
    idTokenSignedResponseAlg: "ES256",
    dpopBoundAccessTokens: false,
    createdAt: now,
    ...extra,
  };
}

class MemoryClients implements ClientLookup {
  private readonly byId = new Map<string, OidcClient>();
  constructor(clients: OidcClient[]) {
    for (const c of clients) this.byId.set(c.clientId, c);
  }
  async find(clientId: string): Promise<OidcClient | undefined> {
    return this.byId.get(clientId);
  }
}

let rsa: KeyPair;
let ec: KeyPair;
let ed: KeyPair;
let stranger: KeyPair;
let rotatingOld: KeyPair;
let rotatingNew: KeyPair;
let other: KeyPair;

function jwks(...pairs: KeyPair[]): JSONWebKeySet {
  return { keys: pairs.map((p) => p.publicJwk) };
}

function buildClients(): MemoryClients {
  return new MemoryClients([
    client("basic-client", "client_secret_basic", { secretHash: sha256Hex(basicSecret) }),
    client("post-client", "client_secret_post", { secretHash: sha256Hex(postSecret) }),
    client(specialId, "client_secret_basic", { secretHash: sha256Hex(specialSecret) }),
    client("jwt-client", "private_key_jwt", { jwks: jwks(rsa, ec, ed) }),
    client("jwt-client-2", "private_key_jwt", { jwks: jwks(other) }),
    client("rotating-client", "private_key_jwt", { jwks: jwks(rotatingOld, rotatingNew) }),
    client("keyless-client", "private_key_jwt", { jwks: { keys: [] } }),
    client("public-client", "none"),
  ]);
}

// ---------------------------------------------------------------- helpers

/** application/x-www-form-urlencoded, as URLSearchParams writes it (space as "+"). */
const formEncode = (value: string) => new URLSearchParams({ v: value }).toString().slice(2);

function basic(clientId: string, secret: string, encode: (value: string) => string = formEncode): string {
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`, "utf8").toString("base64")}`;
}

const basicInput = (clientId: string, secret: string, form: Record<string, unknown> = {}): ClientCredentialsInput => ({
  authorization: basic(clientId, secret),
  form,
});

const postInput = (clientId: string | undefined, secret: string): ClientCredentialsInput => ({
  form: { client_id: clientId, client_secret: secret },
});

const jwtInput = (assertion: string, form: Record<string, unknown> = {}): ClientCredentialsInput => ({
  form: { client_assertion_type: jwtBearerAssertionType, client_assertion: assertion, ...form },
});

interface AssertionOptions {
  clientId?: string;
  key?: CryptoKey | Uint8Array;
  alg?: string;
  /** Header kid; `null` leaves it out. Defaults to the kid of the key pair used. */
  kid?: string | null;
  /** Claims to set; a claim set to undefined is left out. */
  claims?: Partial<Record<keyof JWTPayload, unknown>>;
}

async function assertion(options: AssertionOptions = {}): Promise<string> {
  const clientId = options.clientId ?? "jwt-client";
  const payload: Record<string, unknown> = {
    iss: clientId,
    sub: clientId,
    aud: issuer,
    jti: randomUUID(),
    iat: nowSeconds,
    exp: nowSeconds + 60,
    ...options.claims,
  };
  for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name];
  const alg = options.alg ?? "RS256";
  const kid = options.kid === null ? undefined : (options.kid ?? (options.key ? undefined : "rsa-1"));
  return new SignJWT(payload as JWTPayload).setProtectedHeader({ alg, ...(kid ? { kid } : {}) }).sign(options.key ?? rsa.privateKey);
}

/** An unsecured JWT (alg "none"), which jose refuses to produce. */
function unsecuredJwt(payload: Record<string, unknown>): string {
  const encode = (value: unknown) => base64url.encode(JSON.stringify(value));
  return `${encode({ alg: "none", typ: "JWT" })}.${encode(payload)}.`;
}

async function failure(promise: Promise<unknown>): Promise<ClientAuthError> {
  const outcome = await promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  if (outcome.ok) throw new Error(`expected a ClientAuthError, but authentication succeeded`);
  expect(outcome.error).toBeInstanceOf(ClientAuthError);
  return outcome.error as ClientAuthError;
}

async function expectFailure(
  promise: Promise<unknown>,
  error: ClientAuthErrorCode,
  reason: ClientAuthFailureReason,
  challenge?: boolean,
): Promise<ClientAuthError> {
  const e = await failure(promise);
  expect({ error: e.error, reason: e.reason }).toEqual({ error, reason });
  if (challenge !== undefined) expect(e.challenge).toBe(challenge);
  return e;
}

async function openScratch(target: DatabaseTarget): Promise<{ scratch: ScratchDatabase; database: Database; records: OneTimeRecords }> {
  const scratch = await target.create();
  const database = await openDatabase(scratch.url);
  await migrateToLatest(database);
  return { scratch, database, records: new OneTimeRecords(database) };
}

beforeAll(async () => {
  [rsa, ec, ed, stranger, rotatingOld, rotatingNew, other] = await Promise.all([
    keyPair("RS256", "rsa-1"),
    keyPair("ES256", "ec-1"),
    keyPair("EdDSA", "ed-1"),
    keyPair("RS256", "rsa-1"),
    keyPair("RS256"),
    keyPair("RS256"),
    keyPair("ES256", "other-1"),
  ]);
});

// ---------------------------------------------------------------- tests

const sqlite = targets[0]!;

describe("client authentication", () => {
  let scratch: ScratchDatabase;
  let database: Database;
  let records: OneTimeRecords;
  let auth: ClientAuthenticator;

  beforeAll(async () => {
    ({ scratch, database, records } = await openScratch(sqlite));
    auth = new ClientAuthenticator(buildClients(), records, inlineClientKeys(() => now), () => now);
  });

  afterAll(async () => {
    await database?.close();
    await scratch?.drop();
  });

  describe("client_secret_basic", () => {
    it("authenticates with the registered secret", async () => {
      const c = await auth.authenticate(basicInput("basic-client", basicSecret), audiences);
      expect(c.clientId).toBe("basic-client");
    });

    it("accepts a lower-case scheme, extra spaces and a matching client_id in the body", async () => {
      const header = basic("basic-client", basicSecret).replace(/^Basic /, "basic   ");
      const c = await auth.authenticate({ authorization: header, form: { client_id: "basic-client" } }, audiences);
      expect(c.clientId).toBe("basic-client");
    });

    it("rejects a wrong secret with invalid_client and a Basic challenge", async () => {
      const e = await expectFailure(auth.authenticate(basicInput("basic-client", `${basicSecret}x`), audiences), "invalid_client", "secret_mismatch", true);
      expect(e.description).toBe(clientAuthFailedDescription);
    });

    it("answers an unknown client exactly as a wrong secret", async () => {
      const wrong = await expectFailure(auth.authenticate(basicInput("basic-client", "nope"), audiences), "invalid_client", "secret_mismatch");
      const unknown = await expectFailure(auth.authenticate(basicInput("no-such-client", "nope"), audiences), "invalid_client", "unknown_client");
      expect([unknown.error, unknown.description, unknown.message, unknown.challenge]).toEqual([wrong.error, wrong.description, wrong.message, wrong.challenge]);
    });

    it("decodes a client_id and secret holding ':', '%', '+', space and non-ASCII characters", async () => {
      // Both spellings of form-urlencoding: space as "+" and as "%20".
      for (const encode of [formEncode, encodeURIComponent]) {
        const c = await auth.authenticate({ authorization: basic(specialId, specialSecret, encode), form: {} }, audiences);
        expect(c.clientId).toBe(specialId);
      }
      expect(parseBasicAuthorization(basic(specialId, specialSecret))).toEqual({ clientId: specialId, secret: specialSecret });
    });

    it("does not accept a secret sent without form-urlencoding when encoding changes it", async () => {
      // "+" decodes to a space, so the raw secret is not the registered one.
      const raw = `Basic ${Buffer.from(`basic-client:${basicSecret}+`).toString("base64")}`;
      const rawClients = new MemoryClients([client("basic-client", "client_secret_basic", { secretHash: sha256Hex(`${basicSecret}+`) })]);
      const rawAuth = new ClientAuthenticator(rawClients, records, inlineClientKeys(() => now), () => now);
      await expectFailure(rawAuth.authenticate({ authorization: raw, form: {} }, audiences), "invalid_client", "secret_mismatch");
      const encoded = await rawAuth.authenticate(basicInput("basic-client", `${basicSecret}+`), audiences);
      expect(encoded.clientId).toBe("basic-client");
    });

    it.each([
      ["no credentials after the scheme", "Basic"],
      ["not base64", "Basic !!!!"],
      ["base64 of the wrong length", "Basic YWJj="],
      ["two tokens", `${basic("basic-client", basicSecret)} extra`],
      ["no colon", `Basic ${Buffer.from("basic-client").toString("base64")}`],
      ["an empty client_id", `Basic ${Buffer.from(`:${basicSecret}`).toString("base64")}`],
      ["a bad %-escape", `Basic ${Buffer.from("basic-client:abc%zz").toString("base64")}`],
      ["an escape that is not UTF-8", `Basic ${Buffer.from("basic-client:%C3%28").toString("base64")}`],
      ["bytes that are not UTF-8", `Basic ${Buffer.from([0x62, 0x3a, 0xff, 0xfe]).toString("base64")}`],
    ])("rejects a malformed Basic header (%s) with invalid_client", async (_label, header) => {
      await expectFailure(auth.authenticate({ authorization: header, form: {} }, audiences), "invalid_client", "malformed_basic_credentials", true);
    });

    it("rejects another authorization scheme with invalid_client", async () => {
      await expectFailure(
        auth.authenticate({ authorization: "Bearer abc.def.ghi", form: {} }, audiences),
        "invalid_client",
        "unsupported_authorization_scheme",
        true,
      );
    });
  });

  describe("client_secret_post", () => {
    it("authenticates with client_id and client_secret in the body", async () => {
      const c = await auth.authenticate(postInput("post-client", postSecret), audiences);
      expect(c.clientId).toBe("post-client");
    });

    it("rejects a wrong secret with invalid_client, without a challenge", async () => {
      const e = await expectFailure(auth.authenticate(postInput("post-client", basicSecret), audiences), "invalid_client", "secret_mismatch", false);
      expect(e.description).toBe(clientAuthFailedDescription);
    });

    it("answers an unknown client exactly as a wrong secret", async () => {
      const wrong = await failure(auth.authenticate(postInput("post-client", "nope"), audiences));
      const unknown = await failure(auth.authenticate(postInput("no-such-client", "nope"), audiences));
      expect(unknown.reason).toBe("unknown_client");
      expect([unknown.error, unknown.description, unknown.challenge]).toEqual([wrong.error, wrong.description, wrong.challenge]);
    });

    it("requires client_id with client_secret", async () => {
      await expectFailure(auth.authenticate(postInput(undefined, postSecret), audiences), "invalid_request", "client_id_missing");
    });

    it("rejects a repeated parameter with invalid_request", async () => {
      await expectFailure(
        auth.authenticate({ form: { client_id: "post-client", client_secret: [postSecret, postSecret] } }, audiences),
        "invalid_request",
        "parameter_repeated",
      );
    });

    it("never repeats a presented secret in the error", async () => {
      const e = await failure(auth.authenticate(postInput("post-client", specialSecret), audiences));
      expect(`${e.message} ${e.description} ${JSON.stringify(e)}`).not.toContain(specialSecret);
    });
  });

  describe("one method, the registered one", () => {
    it("rejects a method other than the registered one with invalid_client", async () => {
      await expectFailure(auth.authenticate(postInput("basic-client", basicSecret), audiences), "invalid_client", "method_mismatch", false);
      await expectFailure(auth.authenticate(basicInput("post-client", postSecret), audiences), "invalid_client", "method_mismatch", true);
      await expectFailure(auth.authenticate(basicInput("jwt-client", "anything"), audiences), "invalid_client", "method_mismatch");
      const signedForBasicClient = await assertion({ clientId: "basic-client" });
      await expectFailure(auth.authenticate(jwtInput(signedForBasicClient), audiences), "invalid_client", "method_mismatch");
    });

    it("answers a method mismatch like a wrong secret", async () => {
      const mismatch = await failure(auth.authenticate(postInput("basic-client", basicSecret), audiences));
      const wrong = await failure(auth.authenticate(postInput("post-client", "nope"), audiences));
      expect([mismatch.error, mismatch.description]).toEqual([wrong.error, wrong.description]);
    });

    it("rejects a confidential client that presents no credentials", async () => {
      await expectFailure(auth.authenticate({ form: { client_id: "basic-client" } }, audiences), "invalid_client", "credentials_missing", true);
    });

    it("rejects a request with no client at all", async () => {
      await expectFailure(auth.authenticate({ form: {} }, audiences), "invalid_client", "credentials_missing", true);
      await expectFailure(auth.authenticate({ authorization: "  ", form: { client_secret: "" } }, audiences), "invalid_client", "credentials_missing");
    });

    it("rejects two methods at once with invalid_request", async () => {
      const jwt = await assertion();
      const cases: ClientCredentialsInput[] = [
        basicInput("basic-client", basicSecret, { client_secret: basicSecret }),
        basicInput("basic-client", basicSecret, { client_assertion_type: jwtBearerAssertionType, client_assertion: jwt }),
        { form: { client_id: "jwt-client", client_secret: "x", client_assertion_type: jwtBearerAssertionType, client_assertion: jwt } },
        { authorization: "Bearer abc", form: { client_id: "post-client", client_secret: postSecret } },
      ];
      for (const input of cases) {
        await expectFailure(auth.authenticate(input, audiences), "invalid_request", "multiple_methods");
      }
    });

    it("rejects a body client_id that differs from the authenticated client with invalid_request", async () => {
      await expectFailure(
        auth.authenticate(basicInput("basic-client", basicSecret, { client_id: "post-client" }), audiences),
        "invalid_request",
        "client_id_mismatch",
      );
      await expectFailure(auth.authenticate(jwtInput(await assertion(), { client_id: "jwt-client-2" }), audiences), "invalid_request", "client_id_mismatch");
    });
  });

  describe("public clients", () => {
    it("are refused unless the endpoint allows them (PAR does not)", async () => {
      await expectFailure(auth.authenticate({ form: { client_id: "public-client" } }, audiences), "invalid_client", "public_client_not_allowed", true);
      const c = await auth.authenticate({ form: { client_id: "public-client" } }, audiences, { allowPublicClients: true });
      expect(c.clientId).toBe("public-client");
    });

    it("cannot present a secret", async () => {
      await expectFailure(auth.authenticate(postInput("public-client", "anything"), audiences), "invalid_client", "method_mismatch");
    });

    it("an unknown client_id without credentials is not a public client", async () => {
      await expectFailure(
        auth.authenticate({ form: { client_id: "no-such-client" } }, audiences, { allowPublicClients: true }),
        "invalid_client",
        "unknown_client",
      );
    });
  });

  describe("private_key_jwt", () => {
    it("accepts an RS256 assertion addressed to the issuer", async () => {
      const c = await auth.authenticate(jwtInput(await assertion()), audiences);
      expect(c.clientId).toBe("jwt-client");
    });

    it("accepts an ES256 assertion whose aud is an array holding only the issuer, with client_id in the body", async () => {
      const jwt = await assertion({ key: ec.privateKey, alg: "ES256", kid: "ec-1", claims: { aud: [issuer] } });
      const c = await auth.authenticate(jwtInput(jwt, { client_id: "jwt-client" }), audiences);
      expect(c.clientId).toBe("jwt-client");
    });

    it("refuses an assertion addressed to an endpoint URL, or to the issuer and another server at once", async () => {
      for (const aud of [parEndpoint, [parEndpoint], [issuer, "https://other-as.example"], ["https://other-as.example", issuer]]) {
        const jwt = await assertion({ key: ec.privateKey, alg: "ES256", kid: "ec-1", claims: { aud } });
        await expectFailure(auth.authenticate(jwtInput(jwt, { client_id: "jwt-client" }), audiences), "invalid_client", "assertion_audience_invalid");
      }
    });

    it("accepts an EdDSA assertion without a kid", async () => {
      const c = await auth.authenticate(jwtInput(await assertion({ key: ed.privateKey, alg: "EdDSA" })), audiences);
      expect(c.clientId).toBe("jwt-client");
    });

    it("tries every registered key when several match (no kid)", async () => {
      for (const pair of [rotatingOld, rotatingNew]) {
        const jwt = await assertion({ clientId: "rotating-client", key: pair.privateKey, kid: null });
        expect((await auth.authenticate(jwtInput(jwt), audiences)).clientId).toBe("rotating-client");
      }
      const foreign = await assertion({ clientId: "rotating-client", key: stranger.privateKey, kid: null });
      await expectFailure(auth.authenticate(jwtInput(foreign), audiences), "invalid_client", "assertion_signature_invalid");
    });

    it("records the jti until the assertion can no longer be accepted", async () => {
      const jti = randomUUID();
      await auth.authenticate(jwtInput(await assertion({ claims: { jti, exp: nowSeconds + 120 } })), audiences);
      const keyHash = createHash("sha256").update(JSON.stringify(["jwt-client", jti])).digest("hex");
      const record = await records.find(clientAssertionJtiKind, keyHash);
      expect(record).toMatchObject({ owner: "jwt-client", consumedAt: now, expiresAt: (nowSeconds + 120 + 30) * 1000 });
    });

    it("rejects a wrong audience", async () => {
      const jwt = await assertion({ claims: { aud: "https://elsewhere.example.test" } });
      await expectFailure(auth.authenticate(jwtInput(jwt), audiences), "invalid_client", "assertion_audience_invalid");
      const onlyTokenEndpoint = await assertion({ claims: { aud: `${issuer}/api/oidc/v1/token` } });
      await expectFailure(auth.authenticate(jwtInput(onlyTokenEndpoint), audiences), "invalid_client", "assertion_audience_invalid");
    });

    it("rejects an expired assertion, allowing 30 seconds of clock skew", async () => {
      const expired = await assertion({ claims: { iat: nowSeconds - 120, exp: nowSeconds - 31 } });
      await expectFailure(auth.authenticate(jwtInput(expired), audiences), "invalid_client", "assertion_expired");
      const withinSkew = await assertion({ claims: { iat: nowSeconds - 120, exp: nowSeconds - 20 } });
      expect((await auth.authenticate(jwtInput(withinSkew), audiences)).clientId).toBe("jwt-client");
    });

    it("requires exp and jti", async () => {
      await expectFailure(auth.authenticate(jwtInput(await assertion({ claims: { jti: undefined } })), audiences), "invalid_client", "assertion_claim_missing");
      await expectFailure(auth.authenticate(jwtInput(await assertion({ claims: { jti: "" } })), audiences), "invalid_client", "assertion_claim_missing");
      await expectFailure(auth.authenticate(jwtInput(await assertion({ claims: { exp: undefined } })), audiences), "invalid_client", "assertion_claim_missing");
    });

    it("rejects a replayed jti", async () => {
      const jwt = await assertion();
      expect((await auth.authenticate(jwtInput(jwt), audiences)).clientId).toBe("jwt-client");
      await expectFailure(auth.authenticate(jwtInput(jwt), audiences), "invalid_client", "assertion_replayed");
      // A fresh assertion that reuses the jti is a replay too.
      const [, payload] = jwt.split(".");
      const { jti } = JSON.parse(Buffer.from(payload!, "base64url").toString()) as { jti: string };
      const reused = await assertion({ key: ec.privateKey, alg: "ES256", kid: "ec-1", claims: { jti, exp: nowSeconds + 90 } });
      await expectFailure(auth.authenticate(jwtInput(reused), audiences), "invalid_client", "assertion_replayed");
    });

    it("keys jti per client", async () => {
      const jti = randomUUID();
      await auth.authenticate(jwtInput(await assertion({ claims: { jti } })), audiences);
      const second = await assertion({ clientId: "jwt-client-2", key: other.privateKey, alg: "ES256", kid: "other-1", claims: { jti } });
      expect((await auth.authenticate(jwtInput(second), audiences)).clientId).toBe("jwt-client-2");
    });

    it("does not spend the jti of an assertion that fails verification", async () => {
      const jti = randomUUID();
      const forged = await assertion({ key: stranger.privateKey, claims: { jti } });
      await expectFailure(auth.authenticate(jwtInput(forged), audiences), "invalid_client", "assertion_signature_invalid");
      expect((await auth.authenticate(jwtInput(await assertion({ claims: { jti } })), audiences)).clientId).toBe("jwt-client");
    });

    it("rejects an assertion signed by a key not in the client's JWKS", async () => {
      // Same kid as the registered key, and no kid at all.
      for (const kid of ["rsa-1", null]) {
        const jwt = await assertion({ key: stranger.privateKey, kid });
        await expectFailure(auth.authenticate(jwtInput(jwt), audiences), "invalid_client", "assertion_signature_invalid");
      }
      const otherClientsKey = await assertion({ key: other.privateKey, alg: "ES256", kid: "other-1" });
      await expectFailure(auth.authenticate(jwtInput(otherClientsKey), audiences), "invalid_client", "assertion_signature_invalid");
    });

    it("rejects alg none", async () => {
      const jwt = unsecuredJwt({ iss: "jwt-client", sub: "jwt-client", aud: issuer, jti: randomUUID(), iat: nowSeconds, exp: nowSeconds + 60 });
      await expectFailure(auth.authenticate(jwtInput(jwt), audiences), "invalid_client", "assertion_algorithm_not_allowed");
    });

    it("rejects HS256 signed with the client secret", async () => {
      const secretKey = new TextEncoder().encode(basicSecret);
      for (const clientId of ["basic-client", "jwt-client"]) {
        const jwt = await assertion({ clientId, key: secretKey, alg: "HS256" });
        await expectFailure(auth.authenticate(jwtInput(jwt), audiences), "invalid_client", "assertion_algorithm_not_allowed");
      }
    });

    it("requires iss and sub to be the client_id", async () => {
      const wrongIss = await assertion({ claims: { iss: "jwt-client-2" } });
      await expectFailure(auth.authenticate(jwtInput(wrongIss), audiences), "invalid_client", "assertion_issuer_invalid");
      const noIss = await assertion({ claims: { iss: undefined } });
      await expectFailure(auth.authenticate(jwtInput(noIss), audiences), "invalid_client", "assertion_claim_missing");
      const noSub = await assertion({ claims: { sub: undefined } });
      await expectFailure(auth.authenticate(jwtInput(noSub), audiences), "invalid_client", "assertion_claim_missing");
      await expectFailure(auth.authenticate(jwtInput(noSub, { client_id: "jwt-client" }), audiences), "invalid_client", "assertion_claim_missing");
    });

    it("rejects assertions that are not valid yet or live too long", async () => {
      const futureIat = await assertion({ claims: { iat: nowSeconds + 120, exp: nowSeconds + 180 } });
      await expectFailure(auth.authenticate(jwtInput(futureIat), audiences), "invalid_client", "assertion_not_yet_valid");
      const futureNbf = await assertion({ claims: { nbf: nowSeconds + 120 } });
      await expectFailure(auth.authenticate(jwtInput(futureNbf), audiences), "invalid_client", "assertion_not_yet_valid");
      const longLived = await assertion({ claims: { exp: nowSeconds + 3600 } });
      await expectFailure(auth.authenticate(jwtInput(longLived), audiences), "invalid_client", "assertion_lifetime_too_long");
      const longLivedNoIat = await assertion({ claims: { iat: undefined, exp: nowSeconds + 600 } });
      await expectFailure(auth.authenticate(jwtInput(longLivedNoIat), audiences), "invalid_client", "assertion_lifetime_too_long");
      const fiveMinutes = await assertion({ claims: { exp: nowSeconds + 300 } });
      expect((await auth.authenticate(jwtInput(fiveMinutes), audiences)).clientId).toBe("jwt-client");
    });

    it("rejects malformed assertion parameters", async () => {
      await expectFailure(auth.authenticate(jwtInput("not-a-jwt"), audiences), "invalid_client", "assertion_malformed");
      await expectFailure(
        auth.authenticate({ form: { client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:saml2-bearer", client_assertion: await assertion() } }, audiences),
        "invalid_client",
        "unsupported_assertion_type",
      );
      await expectFailure(auth.authenticate({ form: { client_assertion: await assertion() } }, audiences), "invalid_request", "assertion_incomplete");
      await expectFailure(auth.authenticate({ form: { client_assertion_type: jwtBearerAssertionType } }, audiences), "invalid_request", "assertion_incomplete");
    });

    it("rejects a client registered without keys", async () => {
      const jwt = await assertion({ clientId: "keyless-client" });
      await expectFailure(auth.authenticate(jwtInput(jwt), audiences), "invalid_client", "client_not_configured");
    });

    it("answers an unknown client like any other failure", async () => {
      const unknown = await failure(auth.authenticate(jwtInput(await assertion({ clientId: "no-such-client" })), audiences));
      const forged = await failure(auth.authenticate(jwtInput(await assertion({ key: stranger.privateKey })), audiences));
      expect(unknown.reason).toBe("unknown_client");
      expect([unknown.error, unknown.description]).toEqual([forged.error, forged.description]);
      expect(unknown.description).toBe(clientAuthFailedDescription);
    });

    it("never puts the assertion in an error", async () => {
      const jwt = await assertion({ claims: { aud: "https://elsewhere.example.test" } });
      const e = await failure(auth.authenticate(jwtInput(jwt), audiences));
      const [header] = jwt.split(".");
      expect(`${e.message} ${e.description} ${JSON.stringify(e)}`).not.toContain(header);
    });
  });
});

for (const t of targets) {
  describe.skipIf(!!t.unavailable)(`${targetTitle(t)}: single use of client assertions`, () => {
    let scratch: ScratchDatabase;
    let database: Database;
    let records: OneTimeRecords;
    let auth: ClientAuthenticator;

    beforeAll(async () => {
      ({ scratch, database, records } = await openScratch(t));
      auth = new ClientAuthenticator(buildClients(), records, inlineClientKeys(() => now), () => now);
    });

    afterAll(async () => {
      await database?.close();
      await scratch?.drop();
    });

    it("lets exactly one of 10 concurrent uses of one assertion succeed", async () => {
      for (const options of [{}, { key: ec.privateKey, alg: "ES256", kid: "ec-1" }] satisfies AssertionOptions[]) {
        const jwt = await assertion(options);
        const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => auth.authenticate(jwtInput(jwt), audiences)));
        const won = outcomes.filter((o) => o.status === "fulfilled");
        const lost = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason as unknown] : []));
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(9);
        for (const e of lost) {
          expect(e).toBeInstanceOf(ClientAuthError);
          expect([(e as ClientAuthError).error, (e as ClientAuthError).reason]).toEqual(["invalid_client", "assertion_replayed"]);
        }
      }
    });

    it("reports a storage failure as such, not as a replay", async () => {
      class FailingRecords extends OneTimeRecords {
        override async issue(): Promise<never> {
          throw new Error("storage unavailable");
        }
      }
      const failing = new ClientAuthenticator(buildClients(), new FailingRecords(database), inlineClientKeys(() => now), () => now);
      const outcome = await failing.authenticate(jwtInput(await assertion()), audiences).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(outcome).not.toBeInstanceOf(ClientAuthError);
      expect((outcome as Error).message).toBe("storage unavailable");
    });

    it("still rejects the replay after other records are swept", async () => {
      const jwt = await assertion({ claims: { exp: nowSeconds + 60 } });
      await auth.authenticate(jwtInput(jwt), audiences);
      // A sweep at any instant the assertion is still acceptable leaves its record.
      await records.deleteExpired(now + 90_000);
      const later = new ClientAuthenticator(buildClients(), records, inlineClientKeys(() => now + 89_000), () => now + 89_000);
      await expectFailure(later.authenticate(jwtInput(jwt), audiences), "invalid_client", "assertion_replayed");
    });
  });
}
