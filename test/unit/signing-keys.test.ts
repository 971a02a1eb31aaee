import { createHash, createPublicKey, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createLocalJWKSet, decodeProtectedHeader, generateKeyPair, importJWK, jwtVerify, SignJWT, type JWK } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import { open } from "../../src/domain/credentials/secret-box.ts";
import { atHash, signIdToken, type IdTokenClaims } from "../../src/domain/oidc/keys/id-token.ts";
import { SigningKeys, signingAlgs, type SigningAlg, type SigningKeysOptions } from "../../src/domain/oidc/keys/signing-keys.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { SigningKeysRepository } from "../../src/storage/signing-keys-repository.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { openssl } from "../support/openssl.ts";

const targets = await databaseTargets();

const issuer = "https://op.example.test";
const clientId = "client-1";
const start = Date.UTC(2030, 0, 1, 12, 0, 0);
const minute = 60_000;
const hour = 60 * minute;

function claims(nowMs: number, extra: Partial<IdTokenClaims> = {}): IdTokenClaims {
  const iat = Math.floor(nowMs / 1000);
  return {
    iss: issuer,
    sub: "user-1",
    aud: clientId,
    exp: iat + 300,
    iat,
    auth_time: iat - 10,
    nonce: "n-0S6_WzA2Mj",
    acr: "urn:example:loa:2",
    amr: ["pwd", "otp"],
    ...extra,
  };
}

/** Verifies like a relying party registered for alg would, at the token's own time. */
async function verify(token: string, jwks: { keys: JWK[] }, nowMs: number, alg: SigningAlg = "ES256") {
  return jwtVerify(token, createLocalJWKSet(jwks), {
    issuer,
    audience: clientId,
    algorithms: [alg],
    currentDate: new Date(nowMs),
    typ: "JWT",
  });
}

/** The JWK members each algorithm publishes: public members, kid, alg and use. */
const publishedMembers: Record<SigningAlg, string[]> = {
  ES256: ["alg", "crv", "kid", "kty", "use", "x", "y"],
  RS256: ["alg", "e", "kid", "kty", "n", "use"],
  PS256: ["alg", "e", "kid", "kty", "n", "use"],
  EdDSA: ["alg", "crv", "kid", "kty", "use", "x"],
};

const keyTypes: Record<SigningAlg, string> = { ES256: "EC", RS256: "RSA", PS256: "RSA", EdDSA: "OKP" };

/** Rows as the database lists them, put in discovery's order (the databases' collations differ on "EdDSA" beside "ES256"). */
const inAlgOrder = <T extends { alg: string }>(rows: T[]) => [...rows].sort((a, b) => signingAlgs.indexOf(a.alg as SigningAlg) - signingAlgs.indexOf(b.alg as SigningAlg));

function ofAlg<T extends { alg?: string }>(keys: T[], alg: SigningAlg): T[] {
  return keys.filter((k) => k.alg === alg);
}

for (const t of targets) {
  describe.skipIf(!!t.unavailable)(targetTitle(t), () => {
    let scratch: Promise<ScratchDatabase> | undefined;
    const opened: Database[] = [];
    const secretKey = randomBytes(32);
    let now = start;
    const clock = () => now;

    /** A fresh migrated scratch database per test; every call opens another connection to it, as another instance would. */
    async function connect(): Promise<Database> {
      scratch ??= (async () => {
        const created = await t.create();
        const database = await openDatabase(created.url);
        try {
          await migrateToLatest(database);
        } finally {
          await database.close();
        }
        return created;
      })();
      const database = await openDatabase((await scratch).url);
      opened.push(database);
      return database;
    }

    async function instance(options: SigningKeysOptions = {}, database?: Database) {
      const db = database ?? (await connect());
      const repository = new SigningKeysRepository(db);
      return { keys: new SigningKeys(repository, secretKey, clock, options), repository, db };
    }

    afterEach(async () => {
      for (const database of opened.splice(0)) await database.close();
      const created = scratch;
      scratch = undefined;
      now = start;
      if (created) await (await created).drop();
    });

    for (const alg of signingAlgs) {
      describe(alg, () => {
        const sign = (keys: SigningKeys, c: IdTokenClaims) => signIdToken(keys, c, { alg });
        const jwksOf = async (keys: SigningKeys) => ({ keys: ofAlg((await keys.jwks()).keys, alg) });
        const kidsOf = async (keys: SigningKeys) => (await jwksOf(keys)).keys.map((k) => k.kid);
        const rowsOf = (db: Database) => db.db.selectFrom("oidc_signing_keys").selectAll().where("alg", "=", alg);

        it(`creates an ${alg} key on first use and returns the same one after`, async () => {
          const { keys, db } = await instance();
          expect(await db.db.selectFrom("oidc_signing_keys").selectAll().execute()).toEqual([]);

          const first = await keys.active(alg);
          expect(first.alg).toBe(alg);
          expect(first.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);

          // Same instance past its cache, and a fresh instance: both read the same key back.
          now += 10 * minute;
          expect((await keys.active(alg)).kid).toBe(first.kid);
          const other = await instance({}, db);
          expect((await other.keys.active(alg)).kid).toBe(first.kid);

          // Only the key asked for was made.
          const rows = await db.db.selectFrom("oidc_signing_keys").selectAll().execute();
          expect(rows).toHaveLength(1);
          expect(rows[0]).toMatchObject({ kid: first.kid, alg, generation: 1, created_at: start, activated_at: start, retired_at: null });
        });

        it("publishes public members only, and the JWKS verifies a signed ID token", async () => {
          const { keys } = await instance();
          const token = await signIdToken(keys, claims(now, { at_hash: atHash("access-token-1", alg), sid: "s-1" }), { alg });

          const jwks = await jwksOf(keys);
          expect(jwks.keys).toHaveLength(1);
          const [jwk] = jwks.keys;
          expect(Object.keys(jwk!).sort()).toEqual(publishedMembers[alg]);
          expect(jwk).toMatchObject({ kty: keyTypes[alg], alg, use: "sig", kid: (await keys.active(alg)).kid });
          expect(JSON.stringify(await keys.jwks())).not.toMatch(/"(d|p|q|dp|dq|qi|k)"/);

          const header = decodeProtectedHeader(token);
          expect(header).toEqual({ alg, kid: jwk!.kid, typ: "JWT" });
          const { payload } = await verify(token, jwks, now, alg);
          expect(payload).toEqual({ ...claims(now), at_hash: atHash("access-token-1", alg), sid: "s-1" });
          // A relying party registered for another algorithm refuses it.
          for (const other of signingAlgs.filter((a) => a !== alg)) await expect(verify(token, jwks, now, other)).rejects.toThrow(/alg/);

          // Optional claims left out are absent, not null.
          const bare = await sign(keys, claims(now, { nonce: undefined }));
          expect((await verify(bare, jwks, now, alg)).payload).not.toHaveProperty("nonce");
        });

        it("rejects a token signed by another key under the published kid", async () => {
          const { keys } = await instance();
          const { kid } = await keys.active(alg);
          const { privateKey } = await generateKeyPair(alg);
          const forged = await new SignJWT({ ...claims(now) }).setProtectedHeader({ alg, kid, typ: "JWT" }).sign(privateKey);
          await expect(verify(forged, await jwksOf(keys), now, alg)).rejects.toThrow(/signature/i);
        });

        it("rotates: the new key signs, and tokens from the old key still verify until the grace period ends", async () => {
          const { keys } = await instance({ retiredGraceMs: 24 * hour });
          const old = await keys.active(alg);
          const oldToken = await sign(keys, claims(now));

          now += minute;
          const rotation = await keys.rotate(alg);
          expect(rotation).toEqual({ alg, newKid: expect.any(String), retiredKid: old.kid });
          expect(rotation.newKid).not.toBe(old.kid);

          const current = await keys.active(alg);
          expect(current.kid).toBe(rotation.newKid);
          const newToken = await sign(keys, claims(now));
          expect(decodeProtectedHeader(newToken)).toEqual({ alg, kid: rotation.newKid, typ: "JWT" });

          const jwks = await jwksOf(keys);
          expect(jwks.keys.map((k) => k.kid)).toEqual([rotation.newKid, old.kid]);
          await verify(newToken, jwks, now, alg);
          await verify(oldToken, jwks, start, alg);

          // Still published just inside the grace period, gone after it.
          now += 24 * hour - 1;
          expect(await kidsOf(keys)).toEqual([rotation.newKid, old.kid]);
          now += 2;
          const later = await jwksOf(keys);
          expect(later.keys.map((k) => k.kid)).toEqual([rotation.newKid]);
          await expect(verify(oldToken, later, start, alg)).rejects.toThrow();
          expect((await keys.active(alg)).kid).toBe(rotation.newKid);
        });

        it("rotating one algorithm leaves the other algorithm's key active and unchanged", async () => {
          const other: SigningAlg = alg === "ES256" ? "RS256" : "ES256";
          const { keys, db } = await instance();
          const otherKey = await keys.active(other);
          const otherBefore = await db.db.selectFrom("oidc_signing_keys").selectAll().where("alg", "=", other).execute();
          now += minute;
          const { newKid } = await keys.rotate(alg);
          expect(await db.db.selectFrom("oidc_signing_keys").selectAll().where("alg", "=", other).execute()).toEqual(otherBefore);
          expect(otherBefore).toMatchObject([{ kid: otherKey.kid, generation: 1, retired_at: null }]);
          const fresh = await instance({}, db);
          expect((await fresh.keys.active(other)).kid).toBe(otherKey.kid);
          expect((await fresh.keys.active(alg)).kid).toBe(newKid);
        });

        it("keeps every key retired within the grace period through several rotations", async () => {
          const { keys } = await instance();
          const kids = [(await keys.active(alg)).kid];
          for (let i = 0; i < 3; i++) {
            now += minute;
            const { newKid, retiredKid } = await keys.rotate(alg);
            expect(retiredKid).toBe(kids[0]);
            kids.unshift(newKid);
          }
          expect(new Set(kids).size).toBe(4);
          expect(await kidsOf(keys)).toEqual(kids);
        });

        it("rotate on an empty table creates the first key and reports nothing retired", async () => {
          const { keys } = await instance();
          const rotation = await keys.rotate(alg);
          expect(rotation).toEqual({ alg, newKid: expect.any(String) });
          expect((await keys.active(alg)).kid).toBe(rotation.newKid);
        });

        it("picks up another instance's rotation once its cache expires", async () => {
          const a = await instance({ cacheMs: minute });
          const b = await instance({ cacheMs: minute });
          const first = await a.keys.active(alg);

          const { newKid } = await b.keys.rotate(alg);
          expect((await b.keys.active(alg)).kid).toBe(newKid);
          // Within its cache a signs with the key it has; tokens from it still verify against either instance's JWKS.
          now += minute - 1;
          expect((await a.keys.active(alg)).kid).toBe(first.kid);
          const stale = await sign(a.keys, claims(now));
          await verify(stale, await jwksOf(b.keys), now, alg);

          now += 1;
          expect((await a.keys.active(alg)).kid).toBe(newKid);
        });

        it("does not store the private key in plain text", async () => {
          const { keys, db } = await instance();
          const { kid } = await keys.active(alg);
          const row = await rowsOf(db).where("kid", "=", kid).executeTakeFirstOrThrow();

          // The sealed column opens, with the server key and the kid, to the private JWK that matches the published key.
          const privateJwk = JSON.parse(open(secretKey, row.private_jwk_sealed, kid).toString("utf8")) as JWK;
          expect(privateJwk.d).toMatch(/^[A-Za-z0-9_-]{43,}$/);
          const published = (await jwksOf(keys)).keys[0]!;
          const publicPart = (jwk: JWK) => Object.fromEntries(publishedMembers[alg].filter((m) => !["alg", "kid", "use"].includes(m)).map((m) => [m, jwk[m as keyof JWK]]));
          expect(publicPart(privateJwk)).toEqual(publicPart(published));
          const signed = await new SignJWT({ ...claims(now) })
            .setProtectedHeader({ alg, kid, typ: "JWT" })
            .sign(await importJWK(privateJwk, alg));
          await verify(signed, { keys: [published] }, now, alg);

          // Neither the sealed column nor any other holds d.
          const d = privateJwk.d!;
          for (const value of Object.values(row)) expect(String(value)).not.toContain(d);
          expect(row.private_jwk_sealed).toMatch(/^v1\./);
          expect(JSON.parse(row.public_jwk)).not.toHaveProperty("d");
          // Sealed to this kid: it does not open as another key's.
          expect(() => open(secretKey, row.private_jwk_sealed, "another-kid")).toThrow();
          // And not under another server key.
          const wrongKey = new SigningKeys(new SigningKeysRepository(db), randomBytes(32), clock);
          await expect(wrongKey.active(alg)).rejects.toThrow(/authentication/);
        });

        it("instances racing active() on a fresh database agree on one key", async () => {
          const racers = [];
          for (let i = 0; i < 4; i++) racers.push(await instance());
          const results = await Promise.all(racers.map((r) => r.keys.active(alg)));
          const kids = new Set(results.map((r) => r.kid));
          expect(kids.size).toBe(1);
          const rows = await racers[0]!.db.db.selectFrom("oidc_signing_keys").select(["kid", "alg", "generation", "retired_at"]).execute();
          expect(rows).toEqual([{ kid: [...kids][0], alg, generation: 1, retired_at: null }]);
          // The key works for every instance.
          for (const r of racers) await verify(await sign(r.keys, claims(now)), await jwksOf(r.keys), now, alg);
        });

        it("an instance that saw an empty table adopts the key another instance created meanwhile", async () => {
          const b = await instance();
          const db = await connect();
          /** Answers its first look as if it ran just before b created its key. */
          class StaleOnce extends SigningKeysRepository {
            private stale = true;
            override async findNewest(asked: string) {
              if (this.stale) {
                this.stale = false;
                return undefined;
              }
              return super.findNewest(asked);
            }
          }
          const existing = await b.keys.active(alg);
          const late = new SigningKeys(new StaleOnce(db), secretKey, clock);
          expect((await late.active(alg)).kid).toBe(existing.kid);
          expect(await db.db.selectFrom("oidc_signing_keys").select("kid").execute()).toEqual([{ kid: existing.kid }]);
        });

        it("replaces an active key that was retired directly in the database", async () => {
          const { keys, db } = await instance({ cacheMs: 0 });
          const first = await keys.active(alg);
          await db.db.updateTable("oidc_signing_keys").set({ retired_at: now }).where("kid", "=", first.kid).execute();
          const second = await keys.active(alg);
          expect(second.kid).not.toBe(first.kid);
          expect(await kidsOf(keys)).toEqual([second.kid, first.kid]);
        });

        it("instances racing rotate() leave exactly one active key and publish every new key", async () => {
          const racers = [];
          for (let i = 0; i < 4; i++) racers.push(await instance());
          const first = await racers[0]!.keys.active(alg);
          now += minute;

          const rotations = await Promise.all(racers.map((r) => r.keys.rotate(alg)));
          const unretired = await racers[0]!.db.db
            .selectFrom("oidc_signing_keys")
            .select("kid")
            .where("alg", "=", alg)
            .where("retired_at", "is", null)
            .execute();
          expect(unretired).toHaveLength(1);
          const published = await kidsOf(racers[0]!.keys);
          for (const { newKid } of rotations) expect(published).toContain(newKid);
          expect(published).toContain(first.kid);
          // Once caches lapse, every instance signs with the one active key.
          now += 2 * minute;
          const active = new Set(await Promise.all(racers.map(async (r) => (await r.keys.active(alg)).kid)));
          expect([...active]).toEqual([unretired[0]!.kid]);
        });
      });
    }

    it("instances racing to create keys of every algorithm at once get one key of each, all generation 1", async () => {
      // Under 0005's single line of generations the two algorithms would compete for generation 1 and one would fail.
      const racers: Awaited<ReturnType<typeof instance>>[] = [];
      for (let i = 0; i < 6; i++) racers.push(await instance());
      const results = await Promise.all(racers.map((r, i) => r.keys.active(signingAlgs[i % signingAlgs.length]!)));
      const rows = inAlgOrder(await racers[0]!.db.db.selectFrom("oidc_signing_keys").select(["kid", "alg", "generation", "retired_at"]).execute());
      expect(rows).toEqual(signingAlgs.map((alg) => ({ kid: results.find((r) => r.alg === alg)!.kid, alg, generation: 1, retired_at: null })));
      for (const [i, result] of results.entries()) expect(result.alg).toBe(signingAlgs[i % signingAlgs.length]);
      expect(new Set(results.map((r) => r.kid)).size).toBe(signingAlgs.length);
    });

    it("instances racing rotate() of every algorithm leave one active key per algorithm", async () => {
      const racers: Awaited<ReturnType<typeof instance>>[] = [];
      for (let i = 0; i < 4; i++) racers.push(await instance());
      await Promise.all(signingAlgs.map((alg) => racers[0]!.keys.active(alg)));
      now += minute;
      await Promise.all(racers.flatMap((r) => signingAlgs.map((alg) => r.keys.rotate(alg))));
      const unretired = inAlgOrder(await racers[0]!.db.db.selectFrom("oidc_signing_keys").select(["alg", "generation"]).where("retired_at", "is", null).execute());
      expect(unretired.map((k) => k.alg)).toEqual([...signingAlgs]);
      // Racing rotations collapse into one when they overlap; one that starts after another ended makes one more generation.
      for (const key of unretired) expect(key.generation).toBeGreaterThanOrEqual(2);
      for (const key of unretired) expect(key.generation).toBeLessThanOrEqual(1 + racers.length);
    });

    it("the JWKS holds the active key of every algorithm, each importable and RSA of 2048 bits as openssl reads it", async () => {
      const { keys } = await instance();
      const jwks = await keys.jwks();
      expect(jwks.keys.map((k) => k.alg)).toEqual(["ES256", "RS256", "PS256", "EdDSA"]);
      expect(jwks.keys.map((k) => k.kid)).toEqual(await Promise.all(signingAlgs.map(async (alg) => (await keys.active(alg)).kid)));
      for (const jwk of jwks.keys) {
        expect(jwk.use).toBe("sig");
        await expect(importJWK(jwk, jwk.alg)).resolves.toBeDefined();
      }
      const byAlg = (alg: SigningAlg) => jwks.keys.find((k) => k.alg === alg)!;
      expect([byAlg("RS256").e, byAlg("PS256").e]).toEqual(["AQAB", "AQAB"]);
      // PS256 has a key of its own, not RS256's: each published key names the one alg it signs with.
      expect(byAlg("PS256").n).not.toBe(byAlg("RS256").n);
      expect(byAlg("EdDSA")).toMatchObject({ kty: "OKP", crv: "Ed25519" });
      const dir = mkdtempSync(path.join(tmpdir(), "shomei-jwks-"));
      try {
        const pemOf = (alg: SigningAlg) => {
          const pem = path.join(dir, `${alg}.pem`);
          writeFileSync(pem, createPublicKey({ key: { ...byAlg(alg) }, format: "jwk" }).export({ type: "spki", format: "pem" }));
          return pem;
        };
        expect(openssl("pkey", "-pubin", "-in", pemOf("RS256"), "-noout", "-text")).toMatch(/^Public-Key: \(2048 bit\)$/m);
        expect(openssl("pkey", "-pubin", "-in", pemOf("PS256"), "-noout", "-text")).toMatch(/^Public-Key: \(2048 bit\)$/m);
        expect(openssl("pkey", "-pubin", "-in", pemOf("EdDSA"), "-noout", "-text")).toMatch(/^ED25519 Public-Key:$/m);
        /** Signs with alg, writes the signing input (spoiled when asked) and the signature, and returns openssl's verdict. */
        const opensslVerifies = async (alg: SigningAlg, verifyArgs: (pem: string, sig: string, input: string) => string[]) => {
          const token = await signIdToken(keys, claims(now), { alg });
          const [header, payload, signature] = token.split(".");
          const input = path.join(dir, `${alg}.input`);
          const sig = path.join(dir, `${alg}.sig`);
          writeFileSync(sig, Buffer.from(signature!, "base64url"));
          writeFileSync(input, `${header}.${payload}`);
          const good = openssl(...verifyArgs(pemOf(alg), sig, input));
          writeFileSync(input, `${header}.${payload}x`);
          let spoiled: string;
          try {
            spoiled = openssl(...verifyArgs(pemOf(alg), sig, input));
          } catch (error) {
            spoiled = (error as Error).message;
          }
          return { good, spoiled };
        };
        // RS256: RSASSA-PKCS1-v1_5 with SHA-256.
        const rs = await opensslVerifies("RS256", (pem, sig, input) => ["dgst", "-sha256", "-verify", pem, "-signature", sig, input]);
        expect(rs.good).toBe("Verified OK\n");
        expect(rs.spoiled).toMatch(/failed \(1\).*bad signature/is);
        // PS256: RSASSA-PSS with SHA-256, MGF1 with SHA-256, and a 32-byte salt (RFC 7518 section 3.5), nothing else.
        const pss = ["-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_mgf1_md:sha256", "-sigopt", "rsa_pss_saltlen:32"];
        const ps = await opensslVerifies("PS256", (pem, sig, input) => ["dgst", "-sha256", ...pss, "-verify", pem, "-signature", sig, input]);
        expect(ps.good).toBe("Verified OK\n");
        expect(ps.spoiled).toMatch(/failed \(1\)/);
        // Read as PKCS1-v1_5 the PSS signature does not verify.
        const asPkcs1 = await opensslVerifies("PS256", (pem, sig, input) => ["dgst", "-sha256", "-verify", pem, "-signature", sig, input]).catch((e: Error) => ({ good: e.message }));
        expect(asPkcs1.good).not.toBe("Verified OK\n");
        // EdDSA: pure Ed25519 over the signing input itself (RFC 8037 section 3.1).
        const ed = await opensslVerifies("EdDSA", (pem, sig, input) => ["pkeyutl", "-verify", "-pubin", "-inkey", pem, "-rawin", "-in", input, "-sigfile", sig]);
        expect(ed.good).toBe("Signature Verified Successfully\n");
        expect(ed.spoiled).toMatch(/failed \(1\)/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

describe("signIdToken argument checks", () => {
  // No database needed: these fail before a key is asked for.
  const keys = { active: () => Promise.reject(new Error("not reached")) } as unknown as SigningKeys;
  const alg = { alg: "ES256" } as const;

  it("refuses milliseconds for seconds, exp before iat, and several audiences without azp", async () => {
    await expect(signIdToken(keys, claims(start, { exp: start + 300_000 }), alg)).rejects.toThrow(/seconds/);
    await expect(signIdToken(keys, claims(start, { exp: Math.floor(start / 1000) }), alg)).rejects.toThrow(/expires/);
    await expect(signIdToken(keys, claims(start, { aud: [clientId, "other"] }), alg)).rejects.toThrow(/azp/);
    await expect(signIdToken(keys, claims(start, { aud: [clientId, "other"], azp: "third" }), alg)).rejects.toThrow(/azp/);
    await expect(signIdToken(keys, claims(start, { sub: "" }), alg)).rejects.toThrow(/sub/);
  });
});

describe("atHash", () => {
  it("matches the OpenID Connect Core example (SHA-256 left half, base64url)", () => {
    // OIDC Core 1.0, Appendix A.3 (RS256 and ES256 both use SHA-256).
    expect(atHash("jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y", "ES256")).toBe("77QmUPtjPfzWtF2AnpK9RQ");
    expect(atHash("jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y", "RS256")).toBe("77QmUPtjPfzWtF2AnpK9RQ");
  });

  it("matches a value computed by hand", () => {
    const token = "2YotnFZFEjr1zCsicMWpAA";
    const digest = createHash("sha256").update(Buffer.from(token, "ascii")).digest();
    const expected = digest.subarray(0, 16).toString("base64url");
    expect(expected).toHaveLength(22);
    expect(atHash(token, "ES256")).toBe(expected);
    // Not the whole digest, and not padded base64.
    expect(atHash(token, "ES256")).not.toBe(digest.toString("base64url"));
    expect(atHash(token, "ES256")).not.toContain("=");
  });

  it("hashes as the signature does: SHA-256 for PS256, SHA-512 for EdDSA (Ed25519), left half", () => {
    const token = "2YotnFZFEjr1zCsicMWpAA";
    const half = (hash: string) => {
      const digest = createHash(hash).update(Buffer.from(token, "ascii")).digest();
      return digest.subarray(0, digest.length / 2).toString("base64url");
    };
    expect(atHash(token, "PS256")).toBe(half("sha256"));
    expect(atHash(token, "EdDSA")).toBe(half("sha512"));
    // 32 bytes of SHA-512: 43 characters, never the SHA-256 value.
    expect(atHash(token, "EdDSA")).toHaveLength(43);
    expect(atHash(token, "EdDSA")).not.toBe(half("sha256"));
  });

  it("refuses an empty or non-ASCII access token", () => {
    expect(() => atHash("", "ES256")).toThrow();
    expect(() => atHash("tökén", "ES256")).toThrow();
  });
});
