import { generateKeyPairSync } from "node:crypto";
import { exportJWK, generateKeyPair, SignJWT, type JWK } from "jose";
import { describe, expect, it } from "vitest";
import type { OidcClient } from "../../src/domain/oidc/client.ts";
import { ClientKeys, ClientKeysUnavailable, type KeySetSource } from "../../src/domain/oidc/client-keys.ts";
import { checkServerCalledUris } from "../../src/domain/oidc/server-called-uris.ts";
import { registrationFromMetadata } from "../../src/domain/oidc/client-registration.ts";
import { DomainError } from "../../src/domain/errors.ts";

/**
 * The keys a client's JWTs are verified with when it registered a jwks_uri:
 * kept for the TTL, fetched again for an unknown kid at most once per
 * cool-down, failures kept for the cool-down, one fetch for concurrent
 * uses, the fetched document checked, and the fapi2 key-size rule at use.
 * The source is a stand-in that counts fetches; the clock is the test's.
 */
const uri = "https://rp.example/jwks";
const ttl = 300_000;
const cooldown = 30_000;

async function publicJwk(kid: string): Promise<JWK> {
  const { publicKey } = await generateKeyPair("ES256");
  return { ...(await exportJWK(publicKey)), kid };
}

/** A JWT whose header names `kid` (its signature does not matter here: ClientKeys chooses keys, it does not verify). */
async function jwtWithKid(kid?: string): Promise<string> {
  const { privateKey } = await generateKeyPair("ES256");
  return new SignJWT({}).setProtectedHeader({ alg: "ES256", ...(kid ? { kid } : {}) }).sign(privateKey);
}

function setup(answers: (() => { document: unknown } | { error: string })[]) {
  let now = 1_000_000;
  const fetches: string[] = [];
  let release: (() => void) | undefined;
  const source: KeySetSource & { hold(): void } = {
    hold() {
      const gate = new Promise<void>((resolve) => (release = resolve));
      this.read = async (u) => {
        fetches.push(u);
        await gate;
        return answers[Math.min(fetches.length, answers.length) - 1]!();
      };
    },
    async read(u) {
      fetches.push(u);
      return answers[Math.min(fetches.length, answers.length) - 1]!();
    },
  };
  const keys = new ClientKeys(source, () => now, { cacheTtlMs: ttl, refetchCooldownMs: cooldown });
  return { keys, source, fetches, advance: (ms: number) => void (now += ms), release: () => release?.() };
}

const client = (profile: OidcClient["profile"] = null): Pick<OidcClient, "jwks" | "jwksUri" | "profile"> => ({ jwks: null, jwksUri: uri, profile });

async function unavailable(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(ClientKeysUnavailable);
  return (error as Error).message;
}

describe("the keys at a client's jwks_uri", () => {
  it("are fetched once and kept for the TTL; after it they are fetched again", async () => {
    const a = await publicJwk("a");
    const t = setup([() => ({ document: { keys: [a] } })]);
    expect((await t.keys.keysFor(client(), await jwtWithKid("a"))).keys).toEqual([a]);
    t.advance(ttl - 1);
    await t.keys.keysFor(client(), await jwtWithKid("a"));
    expect(t.fetches).toEqual([uri]);
    t.advance(1);
    await t.keys.keysFor(client(), await jwtWithKid("a"));
    expect(t.fetches).toEqual([uri, uri]);
  });

  it("an unknown kid fetches again once the cool-down has passed, and finds the rotated key", async () => {
    const [a, b] = [await publicJwk("a"), await publicJwk("b")];
    const t = setup([() => ({ document: { keys: [a] } }), () => ({ document: { keys: [a, b] } })]);
    await t.keys.keysFor(client(), await jwtWithKid("a"));
    // Within the cool-down: the kept set is answered, without b, and nothing is fetched, however many ask.
    for (let i = 0; i < 5; i++) expect((await t.keys.keysFor(client(), await jwtWithKid("b"))).keys).toEqual([a]);
    expect(t.fetches).toHaveLength(1);
    t.advance(cooldown);
    expect((await t.keys.keysFor(client(), await jwtWithKid("b"))).keys).toEqual([a, b]);
    expect(t.fetches).toHaveLength(2);
    // A kid the new set does not hold either: once more only after another cool-down.
    await t.keys.keysFor(client(), await jwtWithKid("c"));
    expect(t.fetches).toHaveLength(2);
  });

  it("a JWT without kid uses the kept set until the TTL ends", async () => {
    const a = await publicJwk("a");
    const t = setup([() => ({ document: { keys: [a] } })]);
    await t.keys.keysFor(client(), await jwtWithKid());
    t.advance(cooldown * 2);
    await t.keys.keysFor(client(), await jwtWithKid());
    expect(t.fetches).toHaveLength(1);
  });

  it("concurrent uses share one fetch", async () => {
    const a = await publicJwk("a");
    const t = setup([() => ({ document: { keys: [a] } })]);
    t.source.hold();
    const jwt = await jwtWithKid("a");
    const uses = Promise.all([1, 2, 3, 4].map(() => t.keys.keysFor(client(), jwt)));
    t.release();
    expect((await uses).map((set) => set.keys)).toEqual([[a], [a], [a], [a]]);
    expect(t.fetches).toEqual([uri]);
  });

  it("a failed fetch is answered for the cool-down without another fetch, then tried again", async () => {
    const a = await publicJwk("a");
    const t = setup([() => ({ error: `${uri}: ECONNREFUSED` }), () => ({ document: { keys: [a] } })]);
    expect(await unavailable(t.keys.keysFor(client(), await jwtWithKid("a")))).toBe(`the client's jwks_uri could not be used: ${uri}: ECONNREFUSED`);
    t.advance(cooldown - 1);
    await unavailable(t.keys.keysFor(client(), await jwtWithKid("a")));
    expect(t.fetches).toHaveLength(1);
    t.advance(1);
    expect((await t.keys.keysFor(client(), await jwtWithKid("a"))).keys).toEqual([a]);
  });

  it.each([
    ["no keys member", { jwks: [] }],
    ["an empty keys array", { keys: [] }],
    ["a private key", { keys: [{ kty: "EC", crv: "P-256", x: "x", y: "y", d: "d" }] }],
    ["a symmetric key", { keys: [{ kty: "oct", k: "c2VjcmV0" }] }],
    ["not an object", "keys"],
  ])("a document with %s is refused", async (_name, document) => {
    const t = setup([() => ({ document })]);
    expect(await unavailable(t.keys.keysFor(client(), await jwtWithKid("a")))).toMatch(/not a JWK Set of 1 to 100 public keys/);
  });

  it("fapi2: an RSA key under 2048 bits in the fetched set is refused at use, and the set is fetched, not registered", async () => {
    const small = { ...generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey.export({ format: "jwk" }), kid: "small" };
    const t = setup([() => ({ document: { keys: [small] } })]);
    expect(await unavailable(t.keys.keysFor(client("fapi2"), await jwtWithKid("small")))).toMatch(/^the key set at jwks_uri: .*2048 bits/);
    // A client without the profile uses the same set.
    expect((await t.keys.keysFor(client(null), await jwtWithKid("small"))).keys).toHaveLength(1);
  });

  it("inline jwks are used as registered, without a fetch", async () => {
    const a = await publicJwk("a");
    const t = setup([() => ({ error: "not expected" })]);
    expect((await t.keys.keysFor({ jwks: { keys: [a] }, profile: null }, await jwtWithKid("a"))).keys).toEqual([a]);
    expect(await unavailable(t.keys.keysFor({ jwks: null, profile: null }, await jwtWithKid("a")))).toMatch(/no registered keys/);
    expect(t.fetches).toEqual([]);
  });
});

describe("registering a jwks_uri", () => {
  const base = { client_id: "rp", token_endpoint_auth_method: "private_key_jwt", redirect_uris: ["https://rp.example/cb"] };
  const refusal = (run: () => unknown): DomainError => {
    try {
      run();
    } catch (error) {
      expect(error).toBeInstanceOf(DomainError);
      return error as DomainError;
    }
    throw new Error("accepted");
  };

  it("is enough for private_key_jwt and signed request objects", () => {
    const { client } = registrationFromMetadata({ ...base, jwks_uri: uri, require_signed_request_object: true }, 0);
    expect(client).toMatchObject({ jwks: null, jwksUri: uri, requireSignedRequestObject: true });
  });

  it("is refused beside jwks, naming jwks_uri", async () => {
    const error = refusal(() => registrationFromMetadata({ ...base, jwks_uri: uri, jwks: { keys: [{ kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" }] } }, 0));
    expect([error.field, error.message]).toEqual(["jwks_uri", "jwks_uri: must not be sent with jwks (register one or the other)"]);
  });

  it.each(["rp.example/jwks", "ftp://rp.example/jwks", "https://rp.example/jwks#keys"])("refuses %s as a URL", (bad) => {
    expect(refusal(() => registrationFromMetadata({ ...base, jwks_uri: bad }, 0)).field).toBe("jwks_uri");
  });

  it("in production mode: https:// and a public host only; with private addresses allowed, http:// on loopback too", () => {
    for (const bad of ["http://rp.example/jwks", "https://127.0.0.1/jwks", "https://10.0.0.8/jwks", "https://localhost/jwks"]) {
      const { client } = registrationFromMetadata({ ...base, jwks_uri: bad }, 0);
      expect(refusal(() => checkServerCalledUris(client, false)).message, bad).toMatch(/^jwks_uri: must (be an https:\/\/ URL|not point at a loopback, private or link-local address)$/);
      expect(() => checkServerCalledUris(client, true)).not.toThrow();
    }
    expect(() => checkServerCalledUris(registrationFromMetadata({ ...base, jwks_uri: uri }, 0).client, false)).not.toThrow();
  });
});
