import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Accounts } from "../../src/domain/accounts/accounts.ts";
import type { StatusRecord, StoredCertificate } from "../../src/domain/certificates/model.ts";
import { statusRecord } from "../../src/domain/certificates/status-record.ts";
import { newId } from "../../src/domain/ids.ts";
import { MockEnvironment } from "../../src/domain/mock/mock-environment.ts";
import { AccountsRepository } from "../../src/storage/accounts-repository.ts";
import { CertificatesRepository } from "../../src/storage/certificates-repository.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { MockRepository } from "../../src/storage/mock-repository.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { StatementCounter } from "../support/statement-counter.ts";

const targets = await databaseTargets();

/**
 * Single checks' status records are committed in groups (src/storage/grouped-insert.ts):
 * fewer statements under concurrency, and still each caller answered only once its own
 * row is stored, and a bad row failing only its own caller.
 */
for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let scratch: ScratchDatabase;
    let database: Database;
    let accountId: string;
    let certificate: StoredCertificate;
    const clock = () => Date.now();

    beforeAll(async () => {
      scratch = await target.create();
      database = await openDatabase(scratch.url);
      await migrateToLatest(database);
      accountId = (await new Accounts(new AccountsRepository(database), clock).create("grouped-writes", "active")).id;
      const mock = new MockEnvironment(new MockRepository(database), new CertificatesRepository(database), clock, "http://127.0.0.1/mock/ca.crl", "http://127.0.0.1/mock/ocsp");
      certificate = (await mock.createCertificate(accountId, { type: "jpki_card_digital_signature" })).certificate;
    }, 60_000);

    afterAll(async () => {
      await database?.close();
      await scratch?.drop();
    });

    function record(of: StoredCertificate = certificate): StatusRecord {
      return statusRecord(of, { status: "good", method: "crl", sourceUpdatedAt: 1_700_000_000_000, revokedAt: null, revokedReason: null }, clock());
    }

    function counted(): { repository: CertificatesRepository; counter: StatementCounter } {
      const counter = new StatementCounter();
      return { repository: new CertificatesRepository({ ...database, db: database.db.withPlugin(counter) }), counter };
    }

    it("100 records written at once: two inserts (64 rows, then 36), each record readable when its write resolves", async () => {
      const { repository, counter } = counted();
      const records = Array.from({ length: 100 }, () => record());
      await Promise.all(
        records.map(async (r) => {
          await repository.insertStatus(r);
          // Resolved means committed: the row is there for any reader, on any connection.
          expect(await new CertificatesRepository(database).findStatus(accountId, r.id)).toEqual(r);
        }),
      );
      expect(counter.count).toBe(2);
    });

    it("one record alone is one insert", async () => {
      const { repository, counter } = counted();
      const r = record();
      await repository.insertStatus(r);
      expect(counter.count).toBe(1);
      expect(await repository.findStatus(accountId, r.id)).toEqual(r);
    });

    it("a record that cannot be stored fails its own write only; the rest of its group is stored", async () => {
      const { repository } = counted();
      const good = [record(), record(), record()];
      // Its certificate does not exist: the foreign key refuses it, inside a group of four.
      const orphan = record({ ...certificate, id: newId() });
      const outcomes = await Promise.allSettled([good[0]!, orphan, good[1]!, good[2]!].map((r) => repository.insertStatus(r)));
      expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled"]);
      for (const r of good) expect(await repository.findStatus(accountId, r.id)).toEqual(r);
      expect(await repository.findStatus(accountId, orphan.id)).toBeUndefined();
    });

    it("writes asked for after a group was taken go into the next group, none lost", async () => {
      const { repository, counter } = counted();
      const first = Array.from({ length: 5 }, () => record());
      const firstWrites = first.map((r) => repository.insertStatus(r));
      // Asked for once the first group has been taken.
      await new Promise((resolve) => setImmediate(resolve));
      const second = Array.from({ length: 5 }, () => record());
      await Promise.all([...firstWrites, ...second.map((r) => repository.insertStatus(r))]);
      expect(counter.count).toBe(2);
      for (const r of [...first, ...second]) expect(await repository.findStatus(accountId, r.id)).toEqual(r);
    });
  });
}
