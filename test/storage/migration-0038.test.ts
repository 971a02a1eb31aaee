import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import type { Database } from "../../src/storage/database.ts";
import { migratorFor, scratchDatabasePerTest } from "../support/migrator.ts";
import { databaseTargets, targetTitle } from "../support/databases.ts";

const targets = await databaseTargets();
const before0038 = "0037_revoked_token_families";
const now = Date.UTC(2030, 0, 1);

/** An account, a user and a certificate of theirs; returns the account's and the certificate's ids. */
async function certificate(database: Database): Promise<{ accountId: string; certificateId: string }> {
  const db = database.db;
  const [accountId, userId, certificateId] = [randomUUID(), randomUUID(), randomUUID()];
  await db.insertInto("accounts").values({ id: accountId, name: `account ${accountId}`, api_status: "active", created_at: now, updated_at: now }).execute();
  await db.insertInto("certificate_users").values({ id: userId, account_id: accountId, created_at: now }).execute();
  await db.insertInto("certificates").values({
    id: certificateId, account_id: accountId, user_id: userId, type: "jpki_card_digital_signature", origin: "verified", serial_number: "0a",
    issuer: "CN=issuer", subject: "", not_before: now - 1, not_after: now + 86_400_000, fingerprint_sha256: certificateId.replaceAll("-", "").padEnd(64, "0"),
    crl_distribution_points: "[]", certificate_pem: "", created_at: now, trust_anchor: "sha256:migration-0038", ocsp_urls: "[]",
  }).execute();
  return { accountId, certificateId };
}

function statusRecord(accountId: string, certificateId: string) {
  return {
    id: randomUUID(), account_id: accountId, certificate_id: certificateId, status: "good", check_method: "crl", check_purpose: "status_check",
    source_updated_at: now, revoked_at: null, revoked_reason: null, created_at: now,
  };
}

/** The foreign keys from the status records to the certificates, as the database's catalog lists them. */
async function keysToCertificates(database: Database): Promise<number> {
  if (database.dialect === "sqlite") {
    const keys = await sql<{ table: string }>`select "table" from pragma_foreign_key_list('certificate_statuses')`.execute(database.db);
    return keys.rows.filter((key) => key.table === "certificates").length;
  }
  const keys = await sql<{ name: string }>`
    select conname as name from pg_constraint
    where conrelid = 'certificate_statuses'::regclass and confrelid = 'certificates'::regclass and contype = 'f'`.execute(database.db);
  return keys.rows.length;
}

for (const t of targets) {
  describe.skipIf(!!t.unavailable)(`${targetTitle(t)}: migration 0038 (a status record's certificate guaranteed through the chain's head)`, () => {
    const openScratch = scratchDatabasePerTest(t);

    it("refuses a record of a certificate that does not exist, and writes nothing", async () => {
      const database = await openScratch();
      expect((await migrateToLatest(database)).applied).toContain("0038_status_certificate_through_head");
      const { accountId } = await certificate(database);
      const orphan = statusRecord(accountId, randomUUID());
      await expect(database.db.insertInto("certificate_statuses").values(orphan).execute()).rejects.toThrow(/foreign key/i);
      expect(await database.db.selectFrom("certificate_statuses").select("id").where("id", "=", orphan.id).execute()).toEqual([]);
      expect(await database.db.selectFrom("certificate_status_heads").select("certificate_id").where("certificate_id", "=", orphan.certificate_id).execute()).toEqual([]);
    });

    it("refuses to delete a certificate that has records", async () => {
      const database = await openScratch();
      await migrateToLatest(database);
      const { accountId, certificateId } = await certificate(database);
      await database.db.insertInto("certificate_statuses").values(statusRecord(accountId, certificateId)).execute();
      await expect(database.db.deleteFrom("certificates").where("id", "=", certificateId).execute()).rejects.toThrow(/foreign key/i);
      expect(await database.db.selectFrom("certificates").select("id").where("id", "=", certificateId).execute()).toEqual([{ id: certificateId }]);
    });

    it(
      t.name === "postgres" ? "drops the records' own key on PostgreSQL; undone, puts it back" : "keeps the records' own key on SQLite, up and down",
      async () => {
        const database = await openScratch();
        const kept = t.name === "postgres" ? 0 : 1;
        await migrateToLatest(database);
        expect(await keysToCertificates(database)).toBe(kept);
        expect((await (await migratorFor(database)).migrateTo(before0038)).error).toBeUndefined();
        expect(await keysToCertificates(database)).toBe(1);
        expect((await migrateToLatest(database)).applied).toEqual(["0038_status_certificate_through_head"]);
        expect(await keysToCertificates(database)).toBe(kept);
      },
    );
  });
}
