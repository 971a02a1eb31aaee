import { randomBytes } from "node:crypto";
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { signIdToken, type IdTokenClaims } from "../../src/domain/oidc/keys/id-token.ts";
import { SigningKeys, signingAlgs, type SigningAlg } from "../../src/domain/oidc/keys/signing-keys.ts";
import { ClientsRepository } from "../../src/storage/clients-repository.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { SigningKeysRepository } from "../../src/storage/signing-keys-repository.ts";
import { migratorFor, scratchDatabasePerTest } from "../support/migrator.ts";
import { databaseTargets, targetTitle } from "../support/databases.ts";

const targets = await databaseTargets();
const before0018 = "0017_dpop";
const now = Date.UTC(2030, 0, 1, 12, 0, 0);
const issuer = "https://op.example.test";

function claims(): IdTokenClaims {
  const iat = Math.floor(now / 1000);
  return { iss: issuer, sub: "user-1", aud: "old-client", exp: iat + 300, iat, auth_time: iat, acr: "low", amr: ["pwd"] };
}

for (const t of targets) {
  describe.skipIf(!!t.unavailable)(`${targetTitle(t)}: migration 0018 (RS256 beside ES256)`, () => {
    const openScratch = scratchDatabasePerTest(t);

    it("keeps the ES256 keys and clients made before it: the same key signs, its tokens verify, and RS256 starts at generation 1", async () => {
      const database = await openScratch();
      const migrator = await migratorFor(database);
      expect((await migrator.migrateTo(before0018)).error).toBeUndefined();

      // Before 0018: an ES256 key (through the same code, which only asks for ES256 here) and a client row of the old shape.
      const secretKey = randomBytes(32);
      const old = new SigningKeys(new SigningKeysRepository(database), secretKey, () => now);
      const oldKey = await old.active("ES256");
      const oldToken = await signIdToken(old, claims(), { alg: "ES256" });
      await sql`insert into oidc_clients (client_id, name, type, auth_method, secret_hash, jwks, redirect_uris, allowed_scopes,
        allowed_authorization_details_types, require_par, created_at, updated_at)
        values ('old-client', 'Old', 'public', 'none', null, null, '["https://rp.example.test/cb"]', '["openid"]', '[]', 0, 1, 1)`.execute(database.db);
      const rowBefore = await database.db.selectFrom("oidc_signing_keys").selectAll().executeTakeFirstOrThrow();

      expect((await migrateToLatest(database)).applied[0]).toBe("0018_signing_alg_per_client");

      // The key row is copied unchanged, and a fresh instance (no cache) adopts it rather than making another.
      expect(await database.db.selectFrom("oidc_signing_keys").selectAll().execute()).toEqual([rowBefore]);
      const after = new SigningKeys(new SigningKeysRepository(database), secretKey, () => now);
      expect((await after.active("ES256")).kid).toBe(oldKey.kid);
      const newToken = await signIdToken(after, claims(), { alg: "ES256" });
      expect(decodeProtectedHeader(newToken).kid).toBe(oldKey.kid);
      const jwks = createLocalJWKSet(await after.jwks());
      for (const token of [oldToken, newToken]) {
        await jwtVerify(token, jwks, { issuer, audience: "old-client", algorithms: ["ES256"], currentDate: new Date(now) });
      }

      // Every other algorithm (the JWKS made their keys) has a line of its own: its first key is generation 1 too.
      const rows = await database.db.selectFrom("oidc_signing_keys").select(["alg", "generation", "retired_at"]).execute();
      expect(rows.sort((a, b) => signingAlgs.indexOf(a.alg as SigningAlg) - signingAlgs.indexOf(b.alg as SigningAlg))).toEqual(
        signingAlgs.map((alg) => ({ alg, generation: 1, retired_at: null })),
      );
      // And the constraint still refuses a second key of one algorithm at a taken generation.
      const repository = new SigningKeysRepository(database);
      const taken = (await repository.findNewest("ES256"))!;
      expect(await repository.insertIfAbsent({ ...taken, kid: "another-kid" })).toBe(false);
      expect(await database.db.selectFrom("oidc_signing_keys").select("kid").where("alg", "=", "ES256").execute()).toEqual([{ kid: oldKey.kid }]);

      // The client registered before keeps ES256.
      expect((await new ClientsRepository(database).find("old-client"))?.idTokenSignedResponseAlg).toBe("ES256");
    });

    it("going back down keeps the ES256 keys and drops the RS256 ones", async () => {
      const database = await openScratch();
      await migrateToLatest(database);
      const keys = new SigningKeys(new SigningKeysRepository(database), randomBytes(32), () => now);
      const es = await keys.active("ES256");
      await keys.active("RS256");

      const down = await (await migratorFor(database)).migrateTo(before0018);
      expect(down.error).toBeUndefined();
      expect(await database.db.selectFrom("oidc_signing_keys").select(["kid", "alg", "generation"]).execute()).toEqual([
        { kid: es.kid, alg: "ES256", generation: 1 },
      ]);
    });
  });
}
