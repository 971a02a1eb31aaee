import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { migratorFor, scratchDatabasePerTest } from "../support/migrator.ts";
import { databaseTargets, targetTitle } from "../support/databases.ts";

const targets = await databaseTargets();
const before0036 = "0035_ocsp_sweep";

for (const t of targets) {
  describe.skipIf(!!t.unavailable)(`${targetTitle(t)}: migration 0036 (the status chain's head carries the statuses)`, () => {
    const openScratch = scratchDatabasePerTest(t);

    it("fills in the heads written before it, and the next change's event compares with them", async () => {
      const database = await openScratch();
      expect((await (await migratorFor(database)).migrateTo(before0036)).error).toBeUndefined();
      const db = database.db;
      const now = Date.UTC(2030, 0, 1);
      const accountId = randomUUID();
      const userId = randomUUID();
      const certificateId = randomUUID();
      await db.insertInto("accounts").values({ id: accountId, name: "before 0036", api_status: "active", created_at: now, updated_at: now }).execute();
      await db.insertInto("certificate_users").values({ id: userId, account_id: accountId, created_at: now }).execute();
      await db.insertInto("certificates").values({
        id: certificateId, account_id: accountId, user_id: userId, type: "jpki_card_digital_signature", origin: "verified", serial_number: "0a",
        issuer: "CN=issuer", subject: "", not_before: now - 1, not_after: now + 86_400_000, fingerprint_sha256: "1".repeat(64),
        crl_distribution_points: "[]", certificate_pem: "", created_at: now, trust_anchor: "sha256:before-0036", ocsp_urls: "[]",
      }).execute();
      let at = now;
      const record = async (status: "good" | "revoked", revokedReason: number | null) => {
        at += 1000;
        await db.insertInto("certificate_statuses").values({
          id: randomUUID(), account_id: accountId, certificate_id: certificateId, status, check_method: "crl", check_purpose: "status_check",
          source_updated_at: at, revoked_at: status === "revoked" ? at : null, revoked_reason: revokedReason, created_at: at,
        }).execute();
      };
      // Before 0036: good, then on hold (certificateHold, reason 6), which recorded its event by the old trigger.
      await record("good", null);
      await record("revoked", 6);

      expect((await migrateToLatest(database)).applied).toContain("0036_status_heads_carry_status");
      const head = await db.selectFrom("certificate_status_heads").selectAll().where("certificate_id", "=", certificateId).executeTakeFirstOrThrow();
      expect(head).toMatchObject({ status: "revoked", revoked_reason: 6, previous_status: "good", previous_revoked_reason: null });

      // The hold released: reinstated, compared with the head's copy of the hold; then good again: no event.
      await record("good", null);
      await record("good", null);
      const events = await db.selectFrom("certificate_events").select(["type", "status", "previous_status"]).where("certificate_id", "=", certificateId).orderBy("seq").execute();
      expect(events).toEqual([
        { type: "certificate.revoked", status: "revoked", previous_status: "good" },
        { type: "certificate.reinstated", status: "good", previous_status: "revoked" },
      ]);
    });
  });
}
