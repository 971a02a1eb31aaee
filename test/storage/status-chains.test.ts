import { afterEach, describe, expect, it } from "vitest";
import { Accounts } from "../../src/domain/accounts/accounts.ts";
import type { StatusRecord, StoredCertificate } from "../../src/domain/certificates/model.ts";
import { newId, newTimeOrderedId } from "../../src/domain/ids.ts";
import { MockEnvironment } from "../../src/domain/mock/mock-environment.ts";
import { AccountsRepository } from "../../src/storage/accounts-repository.ts";
import { CertificatesRepository } from "../../src/storage/certificates-repository.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { MockRepository } from "../../src/storage/mock/mock-repository.ts";
import { migratorFor } from "../support/migrator.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { goodStatusRecord } from "../support/status-records.ts";

const targets = await databaseTargets();
const before0024 = "0023_certificate_serials";

function record(certificate: StoredCertificate, createdAt: number, id = newTimeOrderedId(createdAt)): StatusRecord {
  return goodStatusRecord(certificate, createdAt, id);
}

/** Every record of the certificate's listing, page by page (pages of `size`), newest first. */
async function wholeHistory(repository: CertificatesRepository, certificate: StoredCertificate, size = 7): Promise<string[]> {
  const ids: string[] = [];
  let after: StatusRecord | undefined;
  for (;;) {
    const page = await repository.listStatuses(certificate.accountId, certificate.id, size, after);
    ids.push(...page.map((r) => r.id));
    if (page.length < size) return ids;
    after = page.at(-1);
  }
}

for (const t of targets) {
  describe.skipIf(!!t.unavailable)(`${targetTitle(t)}: status history chains (migration 0024)`, () => {
    let scratch: ScratchDatabase | undefined;
    const opened: Database[] = [];

    afterEach(async () => {
      for (const database of opened.splice(0)) await database.close();
      await scratch?.drop();
      scratch = undefined;
    });

    async function open(url: string): Promise<Database> {
      const database = await openDatabase(url);
      opened.push(database);
      return database;
    }

    async function certificates(database: Database, count: number): Promise<StoredCertificate[]> {
      const clock = () => Date.now();
      const account = await new Accounts(new AccountsRepository(database), clock).create(`chains-${newId()}`, "active");
      const mock = new MockEnvironment(new MockRepository(database), new CertificatesRepository(database), clock, "http://127.0.0.1/mock/ca.crl", "http://127.0.0.1/mock/ocsp");
      const issued: StoredCertificate[] = [];
      for (let i = 0; i < count; i++) issued.push((await mock.createCertificate(account.id, { type: "jpki_card_digital_signature" })).certificate);
      return issued;
    }

    it("links the records written before it in the order the history index listed them (time, then id), and new ones after them", async () => {
      scratch = await t.create();
      const database = await open(scratch.url);
      expect((await (await migratorFor(database)).migrateTo(before0024)).error).toBeUndefined();
      const [a, b] = await certificates(database, 2);
      const repository = new CertificatesRepository(database);
      // Written out of time order, with two records of one millisecond (ordered by id) and one of another certificate between them.
      const old = [record(a!, 300, "00000000-0000-4000-8000-000000000002"), record(a!, 100), record(b!, 200), record(a!, 300, "00000000-0000-4000-8000-000000000001"), record(a!, 200)];
      await repository.insertStatuses(old);

      expect((await migrateToLatest(database)).applied.filter((name) => name < "0025")).toEqual(["0024_status_chains"]);

      const [a300two, a100, b200, a300one, a200] = old.map((r) => r.id);
      expect(await wholeHistory(repository, a!, 2)).toEqual([a300two, a300one, a200, a100]);
      expect(await wholeHistory(repository, b!, 2)).toEqual([b200]);
      const later = record(a!, 50); // an earlier clock: the chain keeps the order of writing
      await repository.insertStatus(later);
      expect(await wholeHistory(repository, a!, 2)).toEqual([later.id, a300two, a300one, a200, a100]);
      const heads = await database.db.selectFrom("certificate_status_heads").select(["certificate_id", "status_id"]).orderBy("status_id").execute();
      expect(heads).toEqual(expect.arrayContaining([{ certificate_id: a!.id, status_id: later.id }, { certificate_id: b!.id, status_id: b200 }]));
      expect(heads).toHaveLength(2);
    });

    it("keeps a certificate repeated in one insert, and in the groups of many calls, in the order written", async () => {
      scratch = await t.create();
      const database = await open(scratch.url);
      await migrateToLatest(database);
      const [a, b] = await certificates(database, 2);
      const repository = new CertificatesRepository(database);
      const batch = [record(a!, 10), record(b!, 10), record(a!, 10), record(a!, 10), record(b!, 10)];
      await repository.insertStatuses(batch);
      const singles = Array.from({ length: 30 }, (_, i) => record(i % 3 ? a! : b!, 20));
      await Promise.all(singles.map((r) => repository.insertStatus(r)));
      const written = [...batch, ...singles];
      for (const c of [a!, b!]) {
        expect(await wholeHistory(repository, c)).toEqual(written.filter((r) => r.certificateId === c.id).map((r) => r.id).reverse());
      }
    });

    it("leaves no record out and none twice when two instances write one certificate's records at the same time", async () => {
      scratch = await t.create();
      const first = await open(scratch.url);
      await migrateToLatest(first);
      const second = await open(scratch.url);
      const [a] = await certificates(first, 1);
      const writers = [new CertificatesRepository(first), new CertificatesRepository(second)];
      const written = await Promise.all(
        writers.map(async (repository, w) => {
          const mine: StatusRecord[] = [];
          for (let round = 0; round < 10; round++) {
            const group = Array.from({ length: 10 }, () => record(a!, 1000 + round));
            mine.push(...group);
            if (w === 0) await Promise.all(group.map((r) => repository.insertStatus(r)));
            else await repository.insertStatuses(group);
          }
          return mine;
        }),
      );
      const listed = await wholeHistory(writers[0]!, a!, 9);
      expect(listed).toHaveLength(200);
      expect(new Set(listed)).toEqual(new Set(written.flat().map((r) => r.id)));
      // Each instance's records keep their own order within the one chain.
      for (const mine of written) {
        const ids = new Set(mine.map((r) => r.id));
        expect(listed.filter((id) => ids.has(id))).toEqual(mine.map((r) => r.id).reverse());
      }
    });

    it("two writers of many certificates' records at once, in opposite orders, both succeed (no deadlock on the heads)", async () => {
      scratch = await t.create();
      const first = await open(scratch.url);
      await migrateToLatest(first);
      const second = await open(scratch.url);
      const issued = await certificates(first, 40);
      const writers = [new CertificatesRepository(first), new CertificatesRepository(second)];
      const written: StatusRecord[] = [];
      for (let round = 0; round < 5; round++) {
        const forward = issued.map((c) => record(c, 2000 + round));
        const backward = [...issued].reverse().map((c) => record(c, 2000 + round));
        written.push(...forward, ...backward);
        const outcomes = await Promise.allSettled([writers[0]!.insertStatuses(forward), writers[1]!.insertStatuses(backward)]);
        expect(outcomes.filter((o) => o.status === "rejected")).toEqual([]);
      }
      for (const c of [issued[0]!, issued[39]!]) {
        const listed = await wholeHistory(writers[0]!, c, 9);
        expect(new Set(listed)).toEqual(new Set(written.filter((r) => r.certificateId === c.id).map((r) => r.id)));
      }
    });

    it("gives an empty page for a cursor naming another certificate's or another account's record", async () => {
      scratch = await t.create();
      const database = await open(scratch.url);
      await migrateToLatest(database);
      const [a, b] = await certificates(database, 2);
      const [other] = await certificates(database, 1);
      const repository = new CertificatesRepository(database);
      const records = [record(a!, 1), record(a!, 2), record(b!, 3), record(other!, 4), record(other!, 5)];
      await repository.insertStatuses(records);
      expect((await repository.listStatuses(a!.accountId, a!.id, 10, records[1])).map((r) => r.id)).toEqual([records[0]!.id]);
      expect(await repository.listStatuses(a!.accountId, a!.id, 10, records[2])).toEqual([]);
      expect(await repository.listStatuses(a!.accountId, a!.id, 10, records[4])).toEqual([]);
      expect(await repository.listStatuses(a!.accountId, other!.id, 10)).toEqual([]);
    });
  });
}
