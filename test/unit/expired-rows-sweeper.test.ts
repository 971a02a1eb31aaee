import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExpiredRowsSweeper } from "../../src/domain/maintenance/expired-rows-sweeper.ts";
import { OidcUsers } from "../../src/domain/oidc/users.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { ExpiredRowsRepository } from "../../src/storage/expired-rows-repository.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { OidcRepository } from "../../src/storage/oidc-repository.ts";
import { OneTimeRecords } from "../../src/storage/one-time-records.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { startTestServer } from "../support/server.ts";

const targets = await databaseTargets();
const now = Date.UTC(2030, 5, 1, 12, 0, 0);
const minute = 60_000;
const day = ExpiredRowsSweeper.replayMemoryMs;
const loginWindow = 15 * minute;

for (const t of targets) {
  describe.skipIf(!!t.unavailable)(targetTitle(t), () => {
    let scratch: ScratchDatabase;
    let database: Database;
    let userId: string;

    beforeAll(async () => {
      scratch = await t.create();
      database = await openDatabase(scratch.url);
      await migrateToLatest(database);
      const user = await new OidcUsers(new OidcRepository(database), randomBytes(32), () => now).create({ login: "sweep-user", password: "a long password" });
      userId = user.id;
    });

    afterAll(async () => {
      await database?.close();
      await scratch?.drop();
    });

    /** One row per table and expiry, named by what the expiry is relative to now. */
    async function seed(expiries: Record<string, number>): Promise<void> {
      for (const [name, expiresAt] of Object.entries(expiries)) {
        await database.db
          .insertInto("one_time_records")
          .values({ kind: "authorization_code", key_hash: name, owner: "c", payload: "null", created_at: now - 2 * day, expires_at: expiresAt, consumed_at: null })
          .execute();
        await database.db
          .insertInto("oidc_tokens")
          .values({
            token_hash: name,
            kind: "access",
            family: "f",
            client_id: "c",
            user_id: userId,
            grant_id: "g",
            scopes: "[]",
            authorization_details: "[]",
            auth_time: now,
            acr: "low",
            amr: "[]",
            sid: null,
            dpop_jkt: null,
            created_at: now - 2 * day,
            expires_at: expiresAt,
            consumed_at: null,
            revoked_at: null,
          })
          .execute();
        await database.db.insertInto("oidc_interactions").values({ id_hash: name, browser_hash: "b", state: "{}", created_at: now - 2 * day, expires_at: expiresAt }).execute();
        await database.db
          .insertInto("oidc_sessions")
          .values({ id_hash: name, user_id: userId, auth_time: now, acr: "low", amr: "[]", created_at: now - 2 * day, expires_at: expiresAt })
          .execute();
        // A sign-in attempt made a throttle window before this expiry.
        await database.db
          .insertInto("login_attempts")
          .values({ id: name, account_key: "a", address_key: "b", attempted_at: expiresAt - loginWindow })
          .execute();
        await database.db
          .insertInto("ocsp_responses")
          .values({
            issuer_anchor: "sha256:anchor",
            serial_number: name,
            url: "http://ocsp.example/",
            der: Buffer.from([0x30, 0x00]),
            sha256: "0".repeat(64),
            produced_at: now - day,
            this_update: now - day,
            next_update: expiresAt,
            usable_until: expiresAt,
            fetched_at: now - day,
          })
          .execute();
        await database.db.insertInto("oidc_dpop_proof_jtis").values({ jti_hash: name, expires_at: expiresAt }).execute();
      }
    }

    const left = async () => ({
      records: (await database.db.selectFrom("one_time_records").select("key_hash").orderBy("key_hash").execute()).map((r) => r.key_hash),
      tokens: (await database.db.selectFrom("oidc_tokens").select("token_hash").orderBy("token_hash").execute()).map((r) => r.token_hash),
      interactions: (await database.db.selectFrom("oidc_interactions").select("id_hash").orderBy("id_hash").execute()).map((r) => r.id_hash),
      sessions: (await database.db.selectFrom("oidc_sessions").select("id_hash").orderBy("id_hash").execute()).map((r) => r.id_hash),
      loginAttempts: (await database.db.selectFrom("login_attempts").select("id").orderBy("id").execute()).map((r) => r.id),
      ocspResponses: (await database.db.selectFrom("ocsp_responses").select("serial_number").orderBy("serial_number").execute()).map((r) => r.serial_number),
      dpopProofs: (await database.db.selectFrom("oidc_dpop_proof_jtis").select("jti_hash").orderBy("jti_hash").execute()).map((r) => r.jti_hash),
    });
    const sweeper = () => new ExpiredRowsSweeper(new OneTimeRecords(database), new ExpiredRowsRepository(database), () => now, { loginAttemptWindowMs: loginWindow });

    it("deletes interactions an hour after expiry, sessions and used DPoP proofs once expired, codes and tokens a day after, sign-in attempts out of the window, lapsed OCSP responses, and nothing live", async () => {
      await seed({ a_live: now + minute, b_just_expired: now - minute, c_expired_hours_ago: now - day + minute, d_expired_over_a_day: now - day - minute });
      const counts = await sweeper().sweep();
      expect(counts).toEqual({ oneTimeRecords: 1, tokens: 1, interactions: 2, sessions: 3, loginAttempts: 3, ocspResponses: 3, dpopProofs: 3, jpkiSignRequests: 0 });
      expect(await left()).toEqual({
        records: ["a_live", "b_just_expired", "c_expired_hours_ago"],
        tokens: ["a_live", "b_just_expired", "c_expired_hours_ago"],
        // An interaction is kept an hour past its expiry, so its page can still offer to start again.
        interactions: ["a_live", "b_just_expired"],
        sessions: ["a_live"],
        loginAttempts: ["a_live"],
        ocspResponses: ["a_live"],
        dpopProofs: ["a_live"],
      });
      // A second sweep finds nothing more.
      expect(await sweeper().sweep()).toEqual({ oneTimeRecords: 0, tokens: 0, interactions: 0, sessions: 0, loginAttempts: 0, ocspResponses: 0, dpopProofs: 0, jpkiSignRequests: 0 });
    });
  });
}

describe("the server sweeps on its own", () => {
  it("with sweepIntervalSeconds=1, an expired interaction is gone within a few seconds; shutdown stops the timer", async () => {
    const sqlite = targets.find((target) => target.name === "sqlite")!;
    const scratch = await sqlite.create();
    const server = await startTestServer(scratch.url, { sweepIntervalSeconds: 1 });
    try {
      await server.database.db.insertInto("oidc_interactions").values({ id_hash: "stale", browser_hash: "b", state: "{}", created_at: 0, expires_at: 1 }).execute();
      const deadline = Date.now() + 10_000;
      let remaining = 1;
      while (remaining > 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        remaining = (await server.database.db.selectFrom("oidc_interactions").select("id_hash").where("id_hash", "=", "stale").execute()).length;
      }
      expect(remaining).toBe(0);
    } finally {
      await server.close();
      await scratch.drop();
    }
  });
});
