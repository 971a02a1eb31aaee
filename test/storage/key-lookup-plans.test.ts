import { CompiledQuery, sql, type Compilable } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Accounts } from "../../src/domain/accounts/accounts.ts";
import type { StoredCertificate } from "../../src/domain/certificates/model.ts";
import { MockEnvironment } from "../../src/domain/mock/mock-environment.ts";
import { AccountsRepository } from "../../src/storage/accounts-repository.ts";
import { certificatesByIds, CertificatesRepository, usersByIds } from "../../src/storage/certificates-repository.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { mockStatesBySerials, MockRepository } from "../../src/storage/mock/mock-repository.ts";
import { certificateCopies } from "../support/certificate-copies.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";

const targets = await databaseTargets();

/**
 * Reads of an account's rows by id (batch checks, a wave of checks read
 * together) must find them by primary key, not walk the account: on SQLite,
 * without statistics, `account_id = ? and id in (…)` chose the index led by
 * account_id as soon as the list held a few ids.
 */
for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let scratch: ScratchDatabase;
    let database: Database;
    let accountId: string;
    let otherAccountId: string;
    let certificates: StoredCertificate[];
    let foreign: StoredCertificate;

    beforeAll(async () => {
      scratch = await target.create();
      database = await openDatabase(scratch.url);
      await migrateToLatest(database);
      const accounts = new Accounts(new AccountsRepository(database), () => Date.now());
      accountId = (await accounts.create("plans", "active")).id;
      otherAccountId = (await accounts.create("plans-other", "active")).id;
      const repository = new CertificatesRepository(database);
      const mock = new MockEnvironment(new MockRepository(database), repository, () => Date.now(), "http://127.0.0.1/mock/ca.crl", "http://127.0.0.1/mock/ocsp");
      const issued = await mock.createCertificate(accountId, { type: "jpki_card_digital_signature" });
      certificates = await certificateCopies(repository, issued, 40);
      foreign = (await mock.createCertificate(otherAccountId, { type: "jpki_card_digital_signature" })).certificate;
    }, 60_000);

    afterAll(async () => {
      await database?.close();
      await scratch?.drop();
    });

    const ids = () => [...certificates.slice(0, 7).map((c) => c.id), foreign.id];
    const userIds = () => [...certificates.slice(0, 7).map((c) => c.userId), foreign.userId];

    it("each read answers with the account's rows only, the other account's id among them left out", async () => {
      const dialect = database.dialect;
      const own = certificates.slice(0, 7).map((c) => c.id).sort();
      expect((await certificatesByIds(database.db, dialect, accountId, ids()).execute()).map((r) => r.id).sort()).toEqual(own);
      expect((await usersByIds(database.db, dialect, accountId, userIds()).execute()).map((r) => r.id).sort()).toEqual(
        certificates.slice(0, 7).map((c) => c.userId).sort(),
      );
    });

    it("the repositories' reads of several ids answer the same at every size (on PostgreSQL one statement text for all)", async () => {
      const repository = new CertificatesRepository(database);
      for (const size of [2, 3, 8, 33]) {
        const own = certificates.slice(0, size).map((c) => c.id);
        const found = await repository.findCertificates(accountId, [...own, foreign.id]);
        expect([...found.keys()].sort()).toEqual([...own].sort());
        expect(found.get(own[1]!)).toMatchObject({ id: own[1], accountId, serialNumber: certificates[1]!.serialNumber });
      }
      const texts = (build: (ids: string[]) => Compilable<unknown>) => new Set([2, 3, 33].map((n) => build(certificates.slice(0, n).map((c) => c.id)).compile().sql)).size;
      const dialect = database.dialect;
      expect(texts((ids) => certificatesByIds(database.db, dialect, accountId, ids))).toBe(dialect === "postgres" ? 1 : 3);
    });

    /** The same reads as a planner would see them with the account condition written plainly. */
    const plainCertificates = () => database.db.selectFrom("certificates").selectAll().where("account_id", "=", accountId).where("id", "in", ids());
    const plainUsers = () => database.db.selectFrom("certificate_users").selectAll().where("account_id", "=", accountId).where("id", "in", userIds());

    if (target.name === "sqlite") it("SQLite finds them by primary key, where the plain account condition walked the account's index", async () => {
      const plan = async (query: Compilable<unknown>) => {
        const compiled = query.compile();
        const rows = await database.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]));
        return rows.rows.map((r) => r.detail).join(" | ");
      };
      expect(await plan(certificatesByIds(database.db, "sqlite", accountId, ids()))).toMatch(/USING INDEX sqlite_autoindex_certificates_1 \(id=\?\)/);
      expect(await plan(usersByIds(database.db, "sqlite", accountId, userIds()))).toMatch(/USING INDEX sqlite_autoindex_certificate_users_1 \(id=\?\)/);
      // Written plainly: the account's index, every row of the account.
      expect(await plan(plainCertificates())).toMatch(/USING INDEX certificates_(user_not_before|user_latest|account_fingerprint) \(account_id=\?\)/);
      expect(await plan(plainUsers())).toMatch(/USING INDEX certificate_users_account \(account_id=\?\)/);
      // The mock OCSP responder's lookup by serial number, of any account.
      expect(await plan(mockStatesBySerials(database.db, ["1000", "1001", "1002", "1003"]))).toMatch(/SEARCH c USING INDEX certificates_serial_number \(serial_number=\?\)/);
    });

    // Statistics older than the rows, as after a bulk import: the ANALYZE after migrations saw empty tables.
    // These tables are small enough to be read whole, so sequential scans are ruled out: the question is which index.
    if (target.name === "postgres") it("PostgreSQL finds them by primary key even with statistics older than the account's rows", async () => {
      const plan = async (query: Compilable<unknown>) => {
        const compiled = query.compile();
        const rows = await database.db.transaction().execute(async (trx) => {
          await sql`set local enable_seqscan = off`.execute(trx);
          return trx.executeQuery<{ "QUERY PLAN": string }>(CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]));
        });
        return rows.rows.map((r) => r["QUERY PLAN"]).join(" | ");
      };
      expect(await plan(certificatesByIds(database.db, "postgres", accountId, ids()))).toMatch(/(using|on) certificates_pkey /);
      expect(await plan(usersByIds(database.db, "postgres", accountId, userIds()))).toMatch(/(using|on) certificate_users_pkey /);
      // Written plainly, the same reads go through an index led by the account column: every row of the account.
      expect(await plan(plainCertificates())).toMatch(/(using|on) certificates_(user_not_before|user_latest|account_fingerprint) /);
      expect(await plan(plainUsers())).toMatch(/(using|on) certificate_users_account /);
    });

    it("the mock OCSP responder's lookup finds mock certificates by serial number in any account", async () => {
      const serials = [certificates[0]!.serialNumber, certificates[3]!.serialNumber, foreign.serialNumber, "ffff0000"];
      const rows = await mockStatesBySerials(database.db, serials).execute();
      expect(rows.map((r) => r.serial_number).sort()).toEqual(serials.slice(0, 3).sort());
    });
  });
}
