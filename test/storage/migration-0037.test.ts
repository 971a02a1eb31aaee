import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { ExpiredRowsRepository } from "../../src/storage/expired-rows-repository.ts";
import { TokensRepository } from "../../src/storage/tokens-repository.ts";
import { migratorFor, scratchDatabasePerTest } from "../support/migrator.ts";
import { databaseTargets, targetTitle } from "../support/databases.ts";

const targets = await databaseTargets();
const before0037 = "0036_status_heads_carry_status";
const now = Date.UTC(2030, 0, 1);

for (const t of targets) {
  describe.skipIf(!!t.unavailable)(`${targetTitle(t)}: migration 0037 (revoked token families in a row of their own)`, () => {
    const openScratch = scratchDatabasePerTest(t);

    /** A token row of `family` (no grant or user needed: the table has no foreign keys). */
    const tokenRow = (family: string, revokedAt: number | null = null) => ({
      token_hash: randomBytes(32).toString("hex"), kind: "refresh", family, client_id: "rp", user_id: "u", grant_id: "g", scopes: "[]",
      authorization_details: "[]", auth_time: now, acr: "low", amr: "[]", created_at: now, expires_at: now + 60_000, consumed_at: null, revoked_at: revokedAt,
    });

    it("revokes families in a row read with their tokens; undone, the revocations go back onto the tokens", async () => {
      const database = await openScratch();
      expect((await migrateToLatest(database)).applied).toContain("0037_revoked_token_families");
      const db = database.db;
      const tokens = new TokensRepository(database, 60_000);
      const [family, other] = [randomBytes(8).toString("hex"), randomBytes(8).toString("hex")];
      const [own, late, untouched] = [tokenRow(family, now - 5), tokenRow(family), tokenRow(other)];
      await db.insertInto("oidc_tokens").values([own, late, untouched]).execute();
      expect(await tokens.revoke({ family }, now)).toBe(true);
      // The earlier revocation shows: the token's own before the family's.
      expect((await tokens.find(own.token_hash))?.revokedAt).toBe(now - 5);
      expect((await tokens.find(late.token_hash))?.revokedAt).toBe(now);
      expect((await tokens.find(untouched.token_hash))?.revokedAt).toBeNull();

      const down = await (await migratorFor(database)).migrateTo(before0037);
      expect(down.error).toBeUndefined();
      const rows = await db.selectFrom("oidc_tokens").select(["token_hash", "revoked_at"]).execute();
      const revokedAt = (hash: string) => Number(rows.find((row) => row.token_hash === hash)!.revoked_at ?? Number.NaN);
      expect([revokedAt(own.token_hash), revokedAt(late.token_hash)]).toEqual([now - 5, now]);
      expect(rows.find((row) => row.token_hash === untouched.token_hash)!.revoked_at).toBeNull();
      await expect(db.selectFrom("oidc_revoked_families").select("family").execute()).rejects.toThrow(/oidc_revoked_families/);
      expect((await migrateToLatest(database)).applied).toContain("0037_revoked_token_families");
    });

    it("a family's revocation is swept with the tokens once none of them can be live", async () => {
      const database = await openScratch();
      await migrateToLatest(database);
      const tokens = new TokensRepository(database, 60_000);
      const family = randomBytes(8).toString("hex");
      await tokens.revoke({ family }, now);
      const families = async () => (await database.db.selectFrom("oidc_revoked_families").select("family").execute()).length;
      const sweep = (tokensCutoff: number) =>
        new ExpiredRowsRepository(database).deleteExpired({ tokens: tokensCutoff, interactions: 0, sessions: 0, loginAttempts: 0, ocspResponses: 0, dpopProofs: 0, jpkiSignRequests: 0 });
      expect((await sweep(now + 60_000)).tokens).toBe(0);
      expect(await families()).toBe(1);
      expect((await sweep(now + 60_001)).tokens).toBe(1);
      expect(await families()).toBe(0);
    });
  });
}
