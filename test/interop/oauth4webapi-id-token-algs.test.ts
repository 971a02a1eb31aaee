import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { calculateJwkThumbprint, createRemoteJWKSet, decodeProtectedHeader, importJWK, jwtVerify, type JWK } from "jose";
import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { authorize, discover, failure, redeem, refresh, registerFapiClient, type FapiClient } from "../support/fapi2-client.ts";
import { createUser } from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/*
 * PS256 and EdDSA ID tokens checked by oauth4webapi, a certified relying-party
 * library: a client registered for each algorithm (with the fapi2 profile,
 * which allows both, and without it), told to expect that algorithm, takes
 * the ID tokens of the code and of refresh (it checks alg and the claims;
 * jose checks the signatures against the published JWKS); told another
 * algorithm, it refuses them. On
 * SQLite and PostgreSQL, where the keys are stored.
 */
const targets = await databaseTargets();

/** at_hash as a relying party computes it: SHA-256 for PS256, SHA-512 for EdDSA over Ed25519, left half. */
function expectedAtHash(accessToken: string, alg: "PS256" | "EdDSA"): string {
  const digest = createHash(alg === "EdDSA" ? "sha512" : "sha256").update(accessToken, "ascii").digest();
  return digest.subarray(0, digest.length / 2).toString("base64url");
}

/** What each algorithm's published key must be. */
const publishedKey = { PS256: { kty: "RSA", e: "AQAB" }, EdDSA: { kty: "OKP", crv: "Ed25519" } } as const;

for (const target of targets) {
  describe.skipIf(target.unavailable !== undefined)(`PS256 and EdDSA ID tokens with oauth4webapi, ${targetTitle(target)}`, () => {
    let dataDir: string;
    let database: ScratchDatabase;
    let server: TestServer;
    let as: oauth.AuthorizationServer;
    let jwks: ReturnType<typeof createRemoteJWKSet>;

    beforeAll(async () => {
      dataDir = mkdtempSync(path.join(tmpdir(), "shomei-algs-"));
      database = await target.create();
      server = await startTestServer(database.url, { dataDir });
      as = await discover(server);
      jwks = createRemoteJWKSet(new URL(as.jwks_uri!));
    });

    afterAll(async () => {
      await server?.close();
      await database?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    async function publishedJwks(): Promise<(JWK & { kid: string; alg: string })[]> {
      return ((await (await fetch(as.jwks_uri!)).json()) as { keys: (JWK & { kid: string; alg: string })[] }).keys;
    }

    it("discovery offers ES256, RS256, PS256 and EdDSA; the JWKS has one key per algorithm, each naming its alg", async () => {
      expect(as.id_token_signing_alg_values_supported).toEqual(["ES256", "RS256", "PS256", "EdDSA"]);
      const keys = await publishedJwks();
      expect(keys.map((k) => k.alg)).toEqual(["ES256", "RS256", "PS256", "EdDSA"]);
      expect(keys.find((k) => k.alg === "PS256")).toMatchObject({ ...publishedKey.PS256, use: "sig" });
      expect(keys.find((k) => k.alg === "EdDSA")).toMatchObject({ ...publishedKey.EdDSA, use: "sig" });
      // RS256 and PS256 are two keys, not one published twice.
      expect(keys.find((k) => k.alg === "RS256")!.n).not.toBe(keys.find((k) => k.alg === "PS256")!.n);
      for (const key of keys) {
        expect(key.kid).toBe(await calculateJwkThumbprint(key, "sha256"));
        await expect(importJWK(key, key.alg)).resolves.toBeDefined();
      }
      // Stored in this database: one row per algorithm.
      const rows = await server.domain.oidc.signingKeys.published();
      expect(rows.map((r) => [r.alg, r.kid])).toEqual(keys.map((k) => [k.alg, k.kid]));
    });

    for (const alg of ["PS256", "EdDSA"] as const) {
      for (const profile of ["fapi2", undefined] as const) {
        it(`${alg}, ${profile ?? "no profile"}: the library, told ${alg}, takes the ID tokens of the code and of refresh, signatures checked against the JWKS`, async () => {
          const fc = await registerFapiClient(server, { ...(profile ? { profile } : {}), metadata: { id_token_signed_response_alg: alg } });
          const client: FapiClient = { ...fc, client: { ...fc.client, id_token_signed_response_alg: alg } };
          const user = await createUser(server);
          const DPoP = profile ? oauth.DPoP(client.client, await oauth.generateKeyPair("ES256")) : undefined;

          const tokens = await redeem(as, client, await authorize(server, as, client, user, DPoP), DPoP);
          const header = decodeProtectedHeader(tokens.id_token!);
          const key = (await publishedJwks()).find((k) => k.kid === header.kid);
          expect(header).toEqual({ alg, kid: key?.kid, typ: "JWT" });
          expect(key).toMatchObject({ ...publishedKey[alg], alg, use: "sig" });
          const claims = oauth.getValidatedIdTokenClaims(tokens)!;
          expect(claims).toMatchObject({ iss: as.issuer, aud: client.client.client_id, sub: user.row.id });
          expect(claims.at_hash).toBe(expectedAtHash(tokens.access_token, alg));
          // The library checks alg and the claims but, as OIDC Core 3.1.3.7 lets a client over TLS, not the signature: jose checks it against the JWKS.
          await jwtVerify(tokens.id_token!, jwks, { issuer: as.issuer, audience: client.client.client_id, algorithms: [alg], typ: "JWT" });

          const refreshed = await refresh(as, client, tokens.refresh_token!, DPoP);
          expect(decodeProtectedHeader(refreshed.id_token!)).toEqual(header);
          expect(oauth.getValidatedIdTokenClaims(refreshed)!.at_hash).toBe(expectedAtHash(refreshed.access_token, alg));
          await jwtVerify(refreshed.id_token!, jwks, { issuer: as.issuer, audience: client.client.client_id, algorithms: [alg], typ: "JWT" });
        });
      }

      it(`${alg}: the library told ES256 refuses the ${alg} ID token`, async () => {
        const fc = await registerFapiClient(server, { metadata: { id_token_signed_response_alg: alg } });
        const expectsEs256: FapiClient = { ...fc, client: { ...fc.client, id_token_signed_response_alg: "ES256" } };
        const refused = await failure(redeem(as, expectsEs256, await authorize(server, as, expectsEs256, await createUser(server))));
        expect(refused).toBeInstanceOf(oauth.OperationProcessingError);
        expect(refused).toMatchObject({ message: 'unexpected JWT "alg" header parameter', cause: { header: { alg }, expected: "ES256", reason: "client configuration" } });
      });
    }
  });
}
