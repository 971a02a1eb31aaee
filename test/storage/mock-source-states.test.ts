import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Accounts } from "../../src/domain/accounts/accounts.ts";
import type { StoredCertificate } from "../../src/domain/certificates/model.ts";
import type { SingleMethodSource } from "../../src/domain/certificates/revocation-source.ts";
import { newId } from "../../src/domain/ids.ts";
import { MockCaSource } from "../../src/domain/mock/mock-ca-source.ts";
import { MockEnvironment } from "../../src/domain/mock/mock-environment.ts";
import { AccountsRepository } from "../../src/storage/accounts-repository.ts";
import { CertificatesRepository } from "../../src/storage/certificates-repository.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { MockRepository } from "../../src/storage/mock/mock-repository.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { StatementCounter } from "../support/statement-counter.ts";

const targets = await databaseTargets();

/** Answers "good" by the method it stands for, reading nothing: what is counted is the mock source's own reads. */
function answering(method: "crl" | "ocsp"): SingleMethodSource {
  return {
    method,
    offers: () => true,
    check: () => Promise.resolve({ status: "good", method, sourceUpdatedAt: 1, revokedAt: null, revokedReason: null }),
    checkMany: (cs) => Promise.resolve(cs.map(() => ({ status: "good" as const, method, sourceUpdatedAt: 1, revokedAt: null, revokedReason: null }))),
  };
}

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let scratch: ScratchDatabase;
    let database: Database;
    let accountId: string;
    let otherAccountId: string;
    let mock: MockEnvironment;
    /** A mock certificate with a state (OCSP only) and one without. */
    let withState: StoredCertificate;
    let withoutState: StoredCertificate;
    const clock = () => Date.now();

    function counted(): { repository: CertificatesRepository; source: MockCaSource; counter: StatementCounter } {
      const counter = new StatementCounter();
      const view: Database = { ...database, db: database.db.withPlugin(counter) };
      const repository = new CertificatesRepository(view);
      const source = new MockCaSource(new MockRepository(view), { crl: answering("crl"), ocsp: answering("ocsp") }, ["crl", "ocsp"], async () => undefined);
      return { repository, source, counter };
    }

    beforeAll(async () => {
      scratch = await target.create();
      database = await openDatabase(scratch.url);
      await migrateToLatest(database);
      const accounts = new Accounts(new AccountsRepository(database), clock);
      accountId = (await accounts.create("states-a", "active")).id;
      otherAccountId = (await accounts.create("states-b", "active")).id;
      mock = new MockEnvironment(new MockRepository(database), new CertificatesRepository(database), clock, "http://127.0.0.1/mock/ca.crl", "http://127.0.0.1/mock/ocsp");
      withState = (await mock.createCertificate(accountId, { type: "jpki_card_digital_signature" })).certificate;
      withoutState = (await mock.createCertificate(accountId, { type: "jpki_card_digital_signature" })).certificate;
      await mock.setStatus(accountId, withState.id, { status: "good", offeredMethods: ["ocsp"] });
    }, 60_000);

    afterAll(async () => {
      await database?.close();
      await scratch?.drop();
    });

    it("another account's certificate is not found", async () => {
      const { repository } = counted();
      expect(await repository.findCertificate(otherAccountId, withState.id)).toBeUndefined();
      expect(await repository.findCertificate(accountId, newId())).toBeUndefined();
    });

    it("the mock source reads the certificate's state on each check, so a change counts at once", async () => {
      const { repository, source, counter } = counted();
      const read = (await repository.findCertificate(accountId, withState.id))!;
      // The state is the mock's own data, read through its own store: one statement a check, in mock mode only.
      counter.count = 0;
      expect((await source.check(read, undefined, clock())).method).toBe("ocsp");
      expect(counter.count).toBe(1);

      // Kept and checked again after a change: the change counts, at the price of one read.
      await mock.setStatus(accountId, withState.id, { status: "good", offeredMethods: ["crl"] });
      counter.count = 0;
      expect((await source.check(read, undefined, clock())).method).toBe("crl");
      expect(counter.count).toBe(1);
      await mock.setStatus(accountId, withState.id, { status: "good", offeredMethods: ["ocsp"] });
    });

    it("a certificate without a state is checked by the configured order, after the same one read", async () => {
      const { repository, source, counter } = counted();
      const read = (await repository.findCertificate(accountId, withoutState.id))!;
      counter.count = 0;
      expect((await source.check(read, undefined, clock())).method).toBe("crl");
      expect(counter.count).toBe(1);
    });

    it("a mock certificate registered by another account gets the issued certificate's state by fingerprint", async () => {
      const { repository, source, counter } = counted();
      const registered: StoredCertificate = { ...withState, id: newId(), accountId: otherAccountId, origin: "verified", trustAnchor: "mock" };
      const user = newId();
      await repository.insertUser({ id: user, accountId: otherAccountId, createdAt: registered.createdAt });
      await repository.insertCertificate({ ...registered, userId: user });
      const read = (await repository.findCertificate(otherAccountId, registered.id))!;
      counter.count = 0;
      expect((await source.check(read, undefined, clock())).method).toBe("ocsp");
      // Its own id first (the mock source reads its states itself), then by fingerprint: its own row has no state.
      expect(counter.count).toBe(2);
    });
  });
}
