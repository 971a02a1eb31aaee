import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TokenRow } from "../../src/domain/oidc/model.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { OidcRepository } from "../../src/storage/oidc-repository.ts";
import { TokensRepository } from "../../src/storage/tokens-repository.ts";
import { OidcUsers } from "../../src/domain/oidc/users.ts";
import { systemClock } from "../../src/domain/clock.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { StatementCounter } from "../support/statement-counter.ts";

/**
 * Tokens read with their grant in one statement: the refresh token rotation
 * (one conditional UPDATE that uses the token up and returns what its grant
 * holds while the grant is live) and the lookup behind every bearer check;
 * and the tokens of one issuance stored together.
 */
const targets = await databaseTargets();

const now = 1_750_000_000_000;
const details = [{ type: "account_information", actions: ["read"] }];

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let scratch: ScratchDatabase;
    let database: Database;
    let tokens: TokensRepository;
    let grants: OidcRepository;
    let userId: string;

    beforeAll(async () => {
      scratch = await target.create();
      database = await openDatabase(scratch.url);
      await migrateToLatest(database);
      tokens = new TokensRepository(database);
      grants = new OidcRepository(database);
      userId = (await new OidcUsers(grants, randomBytes(32), systemClock).create({ login: "rotation", password: "a long password" })).id;
    });

    afterAll(async () => {
      await database?.close();
      await scratch?.drop();
    });

    /** A live grant, and an access and a refresh token under it stored together; returns the refresh token's hash. */
    async function issued(): Promise<{ grantId: string; refreshHash: string }> {
      const grantId = randomBytes(32).toString("base64url");
      await grants.saveGrant({ id: grantId, userId, clientId: "rp", scopes: ["openid", "offline_access"], authorizationDetails: details, createdAt: now, updatedAt: now, revokedAt: null });
      const base: Omit<TokenRow, "tokenHash" | "kind" | "expiresAt"> = {
        family: randomBytes(8).toString("hex"),
        clientId: "rp",
        userId,
        grantId,
        scopes: ["openid", "offline_access"],
        authorizationDetails: details,
        authTime: now,
        acr: "low",
        amr: ["pwd"],
        sid: null,
        claimsLocales: null,
        dpopJkt: null,
        createdAt: now,
        consumedAt: null,
        revokedAt: null,
      };
      const refreshHash = randomBytes(32).toString("hex");
      await tokens.insert([
        { ...base, tokenHash: randomBytes(32).toString("hex"), kind: "access", expiresAt: now + 3_600_000 },
        { ...base, tokenHash: refreshHash, kind: "refresh", expiresAt: now + 86_400_000 },
      ]);
      return { grantId, refreshHash };
    }

    it("stores every token of one issuance", async () => {
      const { grantId } = await issued();
      const rows = await database.db.selectFrom("oidc_tokens").select("kind").where("grant_id", "=", grantId).orderBy("kind").execute();
      expect(rows.map((r) => r.kind)).toEqual(["access", "refresh"]);
    });

    it("issuances made at once share inserts (SQLite: one for the turn; PostgreSQL: the first alone, then the rest); one that cannot be stored is stored not at all, the others whole", async () => {
      const counter = new StatementCounter();
      const counted = new TokensRepository({ ...database, db: database.db.withPlugin(counter) });
      const grantId = randomBytes(32).toString("base64url");
      await grants.saveGrant({ id: grantId, userId, clientId: "rp", scopes: ["openid"], authorizationDetails: [], createdAt: now, updatedAt: now, revokedAt: null });
      const token = (kind: TokenRow["kind"], tokenHash = randomBytes(32).toString("hex")): TokenRow => ({
        tokenHash, kind, family: randomBytes(8).toString("hex"), clientId: "rp", userId, grantId, scopes: ["openid"], authorizationDetails: [],
        authTime: now, acr: "low", amr: ["pwd"], sid: null, claimsLocales: null, dpopJkt: null, createdAt: now, expiresAt: now + 60_000, consumedAt: null, revokedAt: null,
      });
      const issuances = Array.from({ length: 5 }, () => [token("access"), token("refresh")]);
      await Promise.all(issuances.map((i) => counted.insert(i)));
      expect(counter.count).toBe(target.name === "postgres" ? 2 : 1);

      // The second issuance's refresh token repeats a stored hash: its access token must not be left behind either.
      const taken = issuances[0]![1]!.tokenHash;
      const next = [[token("access"), token("refresh")], [token("access"), token("refresh", taken)], [token("access")]];
      const outcomes = await Promise.allSettled(next.map((i) => counted.insert(i)));
      expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
      const stored = async (i: TokenRow[]) =>
        (await database.db.selectFrom("oidc_tokens").select("token_hash").where("token_hash", "in", i.map((t) => t.tokenHash)).execute()).length;
      expect(await stored(next[0]!)).toBe(2);
      expect(await stored([next[1]![0]!])).toBe(0);
      expect(await stored(next[2]!)).toBe(1);
    });

    it("using a refresh token returns it, consumed, with what its live grant holds; a second use gets nothing", async () => {
      const { grantId, refreshHash } = await issued();
      const used = await tokens.consumeRefresh(refreshHash, "rp", now + 1, null);
      expect(used?.token).toMatchObject({ tokenHash: refreshHash, kind: "refresh", grantId, consumedAt: now + 1 });
      expect(used?.grant).toEqual({ scopes: ["openid", "offline_access"], authorizationDetails: details });
      expect(await tokens.consumeRefresh(refreshHash, "rp", now + 2, null)).toBeUndefined();
    });

    it("a token whose grant was revoked is still used up, and comes back without a grant", async () => {
      const { grantId, refreshHash } = await issued();
      await database.db.updateTable("oidc_grants").set({ revoked_at: now }).where("id", "=", grantId).execute();
      const used = await tokens.consumeRefresh(refreshHash, "rp", now + 1, null);
      expect(used?.token.tokenHash).toBe(refreshHash);
      expect(used?.grant).toBeUndefined();
      expect((await tokens.find(refreshHash))?.consumedAt).toBe(now + 1);
    });

    it("a token read with its grant: the grant's rights while it is live, none once it is revoked", async () => {
      const { grantId, refreshHash } = await issued();
      const live = await tokens.findWithGrant(refreshHash);
      expect(live?.token).toEqual(await tokens.find(refreshHash));
      expect(live?.grant).toEqual({ scopes: ["openid", "offline_access"], authorizationDetails: details });
      await database.db.updateTable("oidc_grants").set({ revoked_at: now }).where("id", "=", grantId).execute();
      const revoked = await tokens.findWithGrant(refreshHash);
      expect(revoked?.token.tokenHash).toBe(refreshHash);
      expect(revoked?.grant).toBeUndefined();
      expect(await tokens.findWithGrant(randomBytes(32).toString("hex"))).toBeUndefined();
    });

    it("of twenty concurrent uses of one refresh token, exactly one gets it", async () => {
      const { refreshHash } = await issued();
      const results = await Promise.all(Array.from({ length: 20 }, () => tokens.consumeRefresh(refreshHash, "rp", now + 1, null)));
      expect(results.filter((r) => r !== undefined)).toHaveLength(1);
    });
  });
}
