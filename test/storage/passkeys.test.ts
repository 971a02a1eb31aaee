import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/domain/clock.ts";
import type { PasskeyRow } from "../../src/domain/oidc/passkeys/model.ts";
import { OidcUsers } from "../../src/domain/oidc/users.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { OidcRepository } from "../../src/storage/oidc-repository.ts";
import { PasskeysRepository } from "../../src/storage/passkeys-repository.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";

/**
 * The passkeys table (migration 0029) on SQLite and PostgreSQL: what is
 * stored reads back the same, a credential id is registered once, a use
 * records its counter only while the counter is the one read (two uses of
 * one counter cannot both pass), removal is the owner's only, and a user's
 * removal takes their passkeys.
 */
const targets = await databaseTargets();

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let scratch: ScratchDatabase;
    let database: Database;
    let store: PasskeysRepository;
    let users: OidcUsers;

    beforeAll(async () => {
      scratch = await target.create();
      database = await openDatabase(scratch.url);
      await migrateToLatest(database);
      store = new PasskeysRepository(database);
      users = new OidcUsers(new OidcRepository(database), randomBytes(32), systemClock);
    });

    afterAll(async () => {
      await database?.close();
      await scratch?.drop();
    });

    async function newUser(): Promise<string> {
      return (await users.create({ login: `p-${randomBytes(6).toString("hex")}`, password: "a long password" })).id;
    }

    function passkey(userId: string, extra: Partial<PasskeyRow> = {}): PasskeyRow {
      return {
        credentialId: randomBytes(32).toString("base64url"),
        userId,
        userHandle: randomBytes(32).toString("base64url"),
        publicKey: randomBytes(77).toString("base64url"),
        signCount: 0,
        transports: ["internal", "hybrid"],
        backupEligible: true,
        backedUp: false,
        name: "ノートPC",
        createdAt: 1_750_000_000_000,
        lastUsedAt: null,
        ...extra,
      };
    }

    it("reads back what it stored, the user's passkeys oldest first", async () => {
      const userId = await newUser();
      const later = passkey(userId, { createdAt: 1_750_000_000_500, signCount: 2 ** 32 - 1, backupEligible: false, transports: [] });
      const first = passkey(userId);
      expect(await store.insertPasskey(later)).toBe(true);
      expect(await store.insertPasskey(first)).toBe(true);
      expect(await store.findPasskey(first.credentialId)).toEqual(first);
      expect(await store.listPasskeys(userId)).toEqual([first, later]);
      expect(await store.listPasskeys(await newUser())).toEqual([]);
    });

    it("registers a credential id once", async () => {
      const row = passkey(await newUser());
      expect(await store.insertPasskey(row)).toBe(true);
      expect(await store.insertPasskey({ ...row, userId: await newUser(), name: "other" })).toBe(false);
      expect((await store.findPasskey(row.credentialId))?.name).toBe(row.name);
    });

    it("records a use only while the counter is the one read: of two uses of one counter, one passes", async () => {
      const row = passkey(await newUser(), { signCount: 5 });
      await store.insertPasskey(row);
      const results = await Promise.all([
        store.recordUse(row.credentialId, 5, { signCount: 6, backedUp: true, usedAt: 1_750_000_001_000 }),
        store.recordUse(row.credentialId, 5, { signCount: 6, backedUp: true, usedAt: 1_750_000_001_000 }),
      ]);
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await store.findPasskey(row.credentialId)).toEqual({ ...row, signCount: 6, backedUp: true, lastUsedAt: 1_750_000_001_000 });
      expect(await store.recordUse(row.credentialId, 5, { signCount: 7, backedUp: false, usedAt: 1 })).toBe(false);
      // A counter that stays 0 is recorded again and again.
      const zero = passkey(await newUser());
      await store.insertPasskey(zero);
      expect(await store.recordUse(zero.credentialId, 0, { signCount: 0, backedUp: false, usedAt: 2 })).toBe(true);
      expect(await store.recordUse(zero.credentialId, 0, { signCount: 0, backedUp: false, usedAt: 3 })).toBe(true);
    });

    it("removes a passkey for its owner only, and with its user", async () => {
      const owner = await newUser();
      const row = passkey(owner);
      await store.insertPasskey(row);
      expect(await store.deletePasskey(await newUser(), row.credentialId)).toBe(false);
      expect(await store.findPasskey(row.credentialId)).toBeDefined();
      expect(await store.deletePasskey(owner, row.credentialId)).toBe(true);
      expect(await store.findPasskey(row.credentialId)).toBeUndefined();
      expect(await store.deletePasskey(owner, row.credentialId)).toBe(false);

      const leaving = await newUser();
      const kept = passkey(leaving);
      await store.insertPasskey(kept);
      await database.db.deleteFrom("oidc_users").where("id", "=", leaving).execute();
      expect(await store.findPasskey(kept.credentialId)).toBeUndefined();
    });
  });
}
