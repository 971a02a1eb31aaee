import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Accounts } from "../../src/domain/accounts/accounts.ts";
import { BatchStatusChecks } from "../../src/domain/certificates/batch-checks.ts";
import type { StatusRecord, StoredCertificate } from "../../src/domain/certificates/model.ts";
import { UnconfiguredSource } from "../../src/domain/certificates/unconfigured-source.ts";
import { newId } from "../../src/domain/ids.ts";
import { MockEnvironment } from "../../src/domain/mock/mock-environment.ts";
import { MockCaSource } from "../../src/domain/mock/mock-ca-source.ts";
import { loadCrl } from "../../src/adapters/crl/load-crl.ts";
import type { VerifiedCrl } from "../../src/domain/certificates/crl/verified-crl.ts";
import type { SingleMethodSource } from "../../src/domain/certificates/revocation-source.ts";
import { x509 } from "../../src/domain/mock-ca/x509-runtime.ts";
import { AccountsRepository } from "../../src/storage/accounts-repository.ts";
import { CertificatesRepository } from "../../src/storage/certificates-repository.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { MockRepository } from "../../src/storage/mock/mock-repository.ts";
import { maxParameters } from "../../src/storage/parameter-limit.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { certificateCopies } from "../support/certificate-copies.ts";
import { StatementCounter } from "../support/statement-counter.ts";
import { goodStatusRecord } from "../support/status-records.ts";

const targets = await databaseTargets();

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let scratch: ScratchDatabase;
    let database: Database;
    let accountId: string;
    /** 200 certificates of 200 users: one issued by the mock CA, the rest copies of its row under new ids. */
    let certificates: StoredCertificate[];
    let crl: VerifiedCrl;
    const clock = () => Date.now();

    /** The batch checks, over a connection that counts what it sends; mock certificates answered by the mock source. */
    function counted(): { checks: BatchStatusChecks; counter: StatementCounter } {
      const counter = new StatementCounter();
      const view: Database = { ...database, db: database.db.withPlugin(counter) };
      const repository = new CertificatesRepository(view);
      // The mock CA's real CRL, held in memory as the CRL source holds it: no reads of its own.
      const crlSource: SingleMethodSource = {
        method: "crl",
        offers: () => true,
        check: () => Promise.reject(new Error("batch only")),
        checkMany: async (cs) =>
          cs.map((c) => {
            const entry = crl.lookup(c.serialNumber);
            return { status: entry ? "revoked" : "good", method: "crl", sourceUpdatedAt: crl.thisUpdate, revokedAt: entry?.revokedAt ?? null, revokedReason: entry?.reason ?? null };
          }),
      };
      const mockSource = new MockCaSource(
        new MockRepository(view),
        { crl: crlSource, ocsp: crlSource },
        ["crl"],
        async () => undefined,
      );
      const unconfigured = new UnconfiguredSource();
      const checks = new BatchStatusChecks(
        repository,
        (c) => (c.origin === "mock" ? mockSource : unconfigured),
        clock,
      );
      return { checks, counter };
    }

    beforeAll(async () => {
      scratch = await target.create();
      database = await openDatabase(scratch.url);
      await migrateToLatest(database);
      accountId = (await new Accounts(new AccountsRepository(database), clock).create("batch-storage", "active")).id;
      const repository = new CertificatesRepository(database);
      const mock = new MockEnvironment(new MockRepository(database), repository, clock, "http://127.0.0.1/mock/ca.crl", "http://127.0.0.1/mock/ocsp");
      const issued = await mock.createCertificate(accountId, { type: "jpki_card_digital_signature" });
      certificates = await certificateCopies(repository, issued, 200);
      // Every tenth one revoked, so the mock source's read returns states as well as misses.
      for (const c of certificates.filter((_, i) => i % 10 === 5)) {
        await mock.setStatus(accountId, c.id, { status: "revoked", revokedReason: 1 });
      }
      crl = await loadCrl(await mock.currentCrl(), new Uint8Array(new x509.X509Certificate((await mock.ca()).certificatePem).rawData));
    }, 60_000);

    afterAll(async () => {
      await database?.close();
      await scratch?.drop();
    });

    it("BatchCheckCertificateStatus: three statements for 1 id and for 200 (certificates, mock states, one insert)", async () => {
      const one = counted();
      const single = await one.checks.checkCertificates(accountId, [certificates[0]!.id]);
      expect(single.map((item) => item.result?.status.status)).toEqual(["good"]);

      const many = counted();
      const batch = await many.checks.checkCertificates(accountId, certificates.map((c) => c.id));
      expect(batch).toHaveLength(200);
      expect(batch.filter((item) => item.result?.status.status === "revoked")).toHaveLength(20);
      expect(batch.filter((item) => item.result?.status.status === "good")).toHaveLength(180);

      expect({ one: one.counter.count, many: many.counter.count }).toEqual({ one: 3, many: 3 });
    });

    it("BatchCheckCertificateStatus with an id twice: three statements for 1 id and for 200 (certificates, mock states, one insert)", async () => {
      const one = counted();
      const single = await one.checks.checkCertificates(accountId, [certificates[0]!.id]);
      expect(single.map((item) => item.result?.status.status)).toEqual(["good"]);

      const many = counted();
      // An id twice: both positions get its state from the same read.
      const ids = [...certificates.map((c) => c.id), certificates[5]!.id];
      const batch = await many.checks.checkCertificates(accountId, ids);
      expect(batch.map((item) => item.result?.status.status)).toEqual(ids.map((_, i) => (i % 10 === 5 || i === 200 ? "revoked" : "good")));
      // The mock source reads its states itself, through its own store (the certificate store knows nothing of the
      // mock), in one statement for the whole batch, never one per id.
      expect(one.counter.count).toBe(3);
      expect(many.counter.count).toBe(3);

      const distinct = counted();
      await distinct.checks.checkCertificates(accountId, certificates.map((c) => c.id));
      expect(distinct.counter.count).toBe(3);
    });

    it("BatchCheckUserCertificateStatus: four statements for 1 id and for 200 (users, latest certificates, mock states, one insert)", async () => {
      const one = counted();
      const single = await one.checks.checkUsers(accountId, [certificates[0]!.userId], undefined);
      expect(single.map((item) => item.result?.certificate.id)).toEqual([certificates[0]!.id]);

      const many = counted();
      const batch = await many.checks.checkUsers(accountId, certificates.map((c) => c.userId), "jpki_card_digital_signature");
      expect(batch.map((item) => item.result?.certificate.id)).toEqual(certificates.map((c) => c.id));

      expect({ one: one.counter.count, many: many.counter.count }).toEqual({ one: 4, many: 4 });
    });

    it("a batch with only bad ids reads the certificates once and writes nothing", async () => {
      const { checks, counter } = counted();
      const repository = new CertificatesRepository(database);
      const before = await repository.countStatuses(accountId);
      const items = await checks.checkCertificates(accountId, ["not-a-uuid", newId()]);
      expect(items.map((item) => item.error?.code)).toEqual(["invalid_field", "certificate_not_found"]);
      expect(counter.count).toBe(1);
      expect(await repository.countStatuses(accountId)).toBe(before);
    });

    it("certificates without a source answer unavailable per item, with no read of any source", async () => {
      const { checks, counter } = counted();
      // Older than the user's certificate, which stays their latest for the user batch's test, whichever runs first.
      const unsourced = { ...certificates[1]!, id: newId(), origin: "verified" as const, fingerprintSha256: "e".repeat(64), trustAnchor: null, notBefore: certificates[1]!.notBefore - 86_400_000 };
      await new CertificatesRepository(database).insertCertificate(unsourced);
      const items = await checks.checkCertificates(accountId, [unsourced.id, certificates[1]!.id]);
      expect(items.map((item) => item.error?.code ?? item.result?.status.status)).toEqual(["source_unavailable", "good"]);
      expect(counter.count).toBe(3);
    });

    it("reads and writes past the parameter limit split into statements that each stay within it", async () => {
      const repository = new CertificatesRepository(database);
      const { counter } = counted();
      const view = new CertificatesRepository({ ...database, db: database.db.withPlugin(counter) });

      // More ids than one statement may bind: the known ones are among them.
      const ids = [...Array.from({ length: maxParameters + 100 }, () => newId()), certificates[3]!.id, certificates[4]!.id];
      const found = await view.findCertificates(accountId, ids);
      expect([...found.keys()].sort()).toEqual([certificates[3]!.id, certificates[4]!.id].sort());
      expect(counter.count).toBe(2);

      // 10 columns a row: 3,276 rows fit in one insert.
      const records: StatusRecord[] = Array.from({ length: 3300 }, (_, i) => goodStatusRecord({ id: certificates[i % 200]!.id, accountId }));
      const before = await repository.countStatuses(accountId);
      counter.count = 0;
      await view.insertStatuses(records);
      expect(counter.count).toBe(2);
      expect(await repository.countStatuses(accountId)).toBe(before + 3300);
    }, 30_000);
  });
}
