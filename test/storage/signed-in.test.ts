import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/domain/clock.ts";
import type { GrantRow } from "../../src/domain/oidc/model.ts";
import { OidcUsers } from "../../src/domain/oidc/users.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { OidcRepository } from "../../src/storage/oidc-repository.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";

/**
 * The authorization endpoint's one read of a browser's sign-in: the session,
 * its user and the user's current grant for the client must be exactly what
 * findSession, findUser and findLatestGrant answer one by one.
 */
const targets = await databaseTargets();

const now = 1_750_000_000_000;

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let scratch: ScratchDatabase;
    let database: Database;
    let repository: OidcRepository;
    let users: OidcUsers;

    beforeAll(async () => {
      scratch = await target.create();
      database = await openDatabase(scratch.url);
      await migrateToLatest(database);
      repository = new OidcRepository(database);
      users = new OidcUsers(repository, randomBytes(32), systemClock);
    });

    afterAll(async () => {
      await database?.close();
      await scratch?.drop();
    });

    /** A user with a session; returns both ids. */
    async function signedInUser(): Promise<{ userId: string; idHash: string }> {
      const userId = (await users.create({ login: `u-${randomBytes(4).toString("hex")}`, password: "a long password", name: "N", email: "n@example.com" })).id;
      const idHash = randomBytes(32).toString("hex");
      await repository.insertSession({ idHash, userId, authTime: now, acr: "low", amr: ["pwd"], createdAt: now, expiresAt: now + 60_000 });
      return { userId, idHash };
    }

    async function grant(userId: string, clientId: string, updatedAt: number, revokedAt: number | null = null): Promise<GrantRow> {
      const row: GrantRow = {
        id: randomBytes(32).toString("base64url"),
        userId,
        clientId,
        scopes: ["openid", `s${updatedAt}`],
        authorizationDetails: [{ type: "t", n: updatedAt }],
        createdAt: now,
        updatedAt,
        revokedAt: null,
      };
      await repository.saveGrant(row);
      if (revokedAt !== null) await repository.revokeGrant(row.id, revokedAt);
      return row;
    }

    async function expectSameAsOneByOne(idHash: string, at: number, clientId: string): Promise<void> {
      const session = await repository.findSession(idHash, at);
      const read = await repository.findSignedIn(idHash, at, clientId);
      if (!session) {
        expect(read).toBeUndefined();
        return;
      }
      expect(read).toEqual({
        session,
        user: await repository.findUser(session.userId),
        currentGrant: await repository.findLatestGrant(session.userId, clientId),
      });
    }

    it("the latest live grant of this client, not a newer revoked one nor another client's", async () => {
      const { userId, idHash } = await signedInUser();
      await grant(userId, "rp", now + 1);
      const current = await grant(userId, "rp", now + 5);
      await grant(userId, "rp", now + 9, now + 10);
      await grant(userId, "other", now + 20);
      const read = await repository.findSignedIn(idHash, now, "rp");
      expect(read?.currentGrant).toEqual(current);
      await expectSameAsOneByOne(idHash, now, "rp");
      await expectSameAsOneByOne(idHash, now, "other");
    });

    it("no grant for the client: the session and user, no grant", async () => {
      const { userId, idHash } = await signedInUser();
      const read = await repository.findSignedIn(idHash, now, "rp");
      expect(read?.session.userId).toBe(userId);
      expect(read?.user?.id).toBe(userId);
      expect(read?.currentGrant).toBeUndefined();
      await expectSameAsOneByOne(idHash, now, "rp");
    });

    it("another user's grant is never the current one", async () => {
      const { idHash } = await signedInUser();
      const other = await signedInUser();
      await grant(other.userId, "rp", now + 1);
      expect((await repository.findSignedIn(idHash, now, "rp"))?.currentGrant).toBeUndefined();
    });

    it("an expired or unknown session is nothing", async () => {
      const { idHash } = await signedInUser();
      expect(await repository.findSignedIn(idHash, now + 60_000, "rp")).toBeUndefined();
      expect(await repository.findSignedIn(randomBytes(32).toString("hex"), now, "rp")).toBeUndefined();
      await expectSameAsOneByOne(idHash, now + 60_000, "rp");
    });
  });
}
