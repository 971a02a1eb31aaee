import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Accounts } from "../../src/domain/accounts/accounts.ts";
import type { StatusRecord, StoredCertificate } from "../../src/domain/certificates/model.ts";
import { newId } from "../../src/domain/ids.ts";
import { MockEnvironment } from "../../src/domain/mock/mock-environment.ts";
import { AccountsRepository } from "../../src/storage/accounts-repository.ts";
import { CertificatesRepository } from "../../src/storage/certificates-repository.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { MockRepository } from "../../src/storage/mock/mock-repository.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { StatementCounter } from "../support/statement-counter.ts";
import { goodStatusRecord } from "../support/status-records.ts";

const targets = await databaseTargets();

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let scratch: ScratchDatabase;
    let database: Database;
    let accountA: string;
    let accountB: string;
    /** Three mock certificates of account A, the first with a state; one of account B. */
    let ofA: StoredCertificate[];
    let ofB: StoredCertificate;
    const clock = () => Date.now();

    function counted<T>(make: (view: Database) => T): { repository: T; counter: StatementCounter } {
      const counter = new StatementCounter();
      return { repository: make({ ...database, db: database.db.withPlugin(counter) }), counter };
    }

    function record(certificate: StoredCertificate, id = newId()): StatusRecord {
      return goodStatusRecord(certificate, 2, id);
    }

    beforeAll(async () => {
      scratch = await target.create();
      database = await openDatabase(scratch.url);
      await migrateToLatest(database);
      const accounts = new Accounts(new AccountsRepository(database), clock);
      accountA = (await accounts.create("together-a", "active")).id;
      accountB = (await accounts.create("together-b", "active")).id;
      const mock = new MockEnvironment(new MockRepository(database), new CertificatesRepository(database), clock, "http://127.0.0.1/mock/ca.crl", "http://127.0.0.1/mock/ocsp");
      const issue = async (accountId: string) => (await mock.createCertificate(accountId, { type: "jpki_card_digital_signature" })).certificate;
      ofA = [await issue(accountA), await issue(accountA), await issue(accountA)];
      ofB = await issue(accountB);
      await mock.setStatus(accountA, ofA[0]!.id, { status: "revoked", revokedReason: 1 });
    }, 60_000);

    afterAll(async () => {
      await database?.close();
      await scratch?.drop();
    });

    /**
     * Reads: PostgreSQL shares statements among concurrent calls; on SQLite, where a read is a function call, each call
     * runs its own. Writes are grouped on both: on PostgreSQL those asked for while one runs, on SQLite those of one turn.
     */
    const shared = target.name === "postgres";

    it(`certificates asked for at the same time ${shared ? "are read together: the first alone, then one statement per account" : "are read one statement each"}`, async () => {
      const { repository, counter } = counted((view) => new CertificatesRepository(view));
      const asks: [string, string][] = [
        [accountA, ofA[0]!.id],
        [accountA, ofA[1]!.id],
        [accountB, ofB.id],
        [accountA, ofA[0]!.id],
        [accountA, ofB.id], // another account's certificate
        [accountB, ofA[2]!.id],
        [accountA, newId()],
        [accountA, ofA[2]!.id],
      ];
      const found = await Promise.all(asks.map(([accountId, id]) => repository.findCertificate(accountId, id)));
      expect(found.map((c) => c?.id)).toEqual([ofA[0]!.id, ofA[1]!.id, ofB.id, ofA[0]!.id, undefined, undefined, undefined, ofA[2]!.id]);
      expect(found[0]).toEqual(ofA[0]);
      expect(found[2]).toEqual(ofB);
      expect(counter.count).toBe(shared ? 3 : asks.length);
      // Each call has an object of its own.
      expect(found[3]).not.toBe(found[0]);
    });

    it(`20 records written at the same time share ${shared ? "2 inserts (the first alone, then the rest)" : "1 insert (those of one turn of the event loop)"}, each readable once its write resolves`, async () => {
      const { repository, counter } = counted((view) => new CertificatesRepository(view));
      const before = await repository.countStatuses(accountA);
      counter.count = 0;
      const records = Array.from({ length: 20 }, (_, i) => record(ofA[i % 3]!));
      await Promise.all(
        records.map(async (r) => {
          await repository.insertStatus(r);
          // Resolved means committed: the row is there for any reader.
          expect(await new CertificatesRepository(database).findStatus(accountA, r.id)).toEqual(r);
        }),
      );
      expect(counter.count).toBe(shared ? 2 : 1);
      expect(await repository.countStatuses(accountA)).toBe(before + 20);
    });

    it(`100 records written at the same time: at most 64 an insert, ${shared ? "3 inserts (1, 64, 35)" : "2 inserts (64, 36)"}`, async () => {
      const { repository, counter } = counted((view) => new CertificatesRepository(view));
      const before = await repository.countStatuses(accountA);
      counter.count = 0;
      await Promise.all(Array.from({ length: 100 }, (_, i) => repository.insertStatus(record(ofA[i % 3]!))));
      expect(counter.count).toBe(shared ? 3 : 2);
      expect(await repository.countStatuses(accountA)).toBe(before + 100);
    });

    it("a lone record is one insert", async () => {
      const { repository, counter } = counted((view) => new CertificatesRepository(view));
      const r = record(ofA[1]!);
      await repository.insertStatus(r);
      expect(counter.count).toBe(1);
      expect(await repository.findStatus(accountA, r.id)).toEqual(r);
    });

    it("a record that cannot be written fails its own call only; the others written with it are stored", async () => {
      const repository = new CertificatesRepository(database);
      const taken = newId();
      await repository.insertStatus(record(ofA[1]!, taken));
      const before = await repository.countStatuses(accountA);
      const first = repository.insertStatus(record(ofA[0]!));
      const outcomes = await Promise.allSettled([first, ...[ofA[1]!, ofA[2]!, ofA[0]!].map((c, i) => repository.insertStatus(record(c, i === 1 ? taken : newId())))]);
      expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
      expect(await repository.countStatuses(accountA)).toBe(before + 3);
    });
  });
}
