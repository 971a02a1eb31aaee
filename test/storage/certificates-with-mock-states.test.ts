import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Accounts } from "../../src/domain/accounts/accounts.ts";
import type { StoredCertificate } from "../../src/domain/certificates/model.ts";
import type { SingleMethodSource } from "../../src/domain/certificates/revocation-source.ts";
import { newId } from "../../src/domain/ids.ts";
import { MockCaSource } from "../../src/domain/mock/mock-ca-source.ts";
import { MockEnvironment } from "../../src/domain/mock/mock-environment.ts";
import { AccountsRepository } from "../../src/storage/accounts-repository.ts";
import { CertificatesWithMockStates } from "../../src/storage/certificates-with-mock-states.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { MockRepository } from "../../src/storage/mock-repository.ts";
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

    function counted(): { repository: CertificatesWithMockStates; source: MockCaSource; counter: StatementCounter } {
      const counter = new StatementCounter();
      const view: Database = { ...database, db: database.db.withPlugin(counter) };
      const repository = new CertificatesWithMockStates(view);
      const source = new MockCaSource(new MockRepository(view), { crl: answering("crl"), ocsp: answering("ocsp") }, ["crl", "ocsp"], async () => undefined, repository);
      return { repository, source, counter };
    }

    beforeAll(async () => {
      scratch = await target.create();
      database = await openDatabase(scratch.url);
      await migrateToLatest(database);
      const accounts = new Accounts(new AccountsRepository(database), clock);
      accountId = (await accounts.create("states-a", "active")).id;
      otherAccountId = (await accounts.create("states-b", "active")).id;
      mock = new MockEnvironment(new MockRepository(database), new CertificatesWithMockStates(database), clock, "http://127.0.0.1/mock/ca.crl", "http://127.0.0.1/mock/ocsp");
      withState = (await mock.createCertificate(accountId, { type: "jpki_card_digital_signature" })).certificate;
      withoutState = (await mock.createCertificate(accountId, { type: "jpki_card_digital_signature" })).certificate;
      await mock.setStatus(accountId, withState.id, { status: "good", offeredMethods: ["ocsp"] });
    }, 60_000);

    afterAll(async () => {
      await database?.close();
      await scratch?.drop();
    });

    it("a certificate read by id brings its state (null when it has none), handed out once", async () => {
      const { repository, counter } = counted();
      const read = (await repository.findCertificate(accountId, withState.id))!;
      const bare = (await repository.findCertificate(accountId, withoutState.id))!;
      expect(counter.count).toBe(2);
      expect(read).toEqual(withState);
      expect(repository.take(read)).toMatchObject({ certificateId: withState.id, status: "good", offeredMethods: ["ocsp"] });
      expect(repository.take(read)).toBeUndefined();
      expect(repository.take(bare)).toBeNull();
      expect(repository.take(withState)).toBeUndefined(); // an object not read here
    });

    it("another account's certificate is not found and nothing is held for it", async () => {
      const { repository } = counted();
      expect(await repository.findCertificate(otherAccountId, withState.id)).toBeUndefined();
      expect(await repository.findCertificate(accountId, newId())).toBeUndefined();
    });

    it("the mock source answers from the state read with the certificate, and reads it anew when checked again", async () => {
      const { repository, source, counter } = counted();
      const read = (await repository.findCertificate(accountId, withState.id))!;
      counter.count = 0;
      expect((await source.check(read, undefined, clock())).method).toBe("ocsp");
      expect(counter.count).toBe(0);

      // Kept and checked again after a change: the change counts, at the price of one read.
      await mock.setStatus(accountId, withState.id, { status: "good", offeredMethods: ["crl"] });
      expect((await source.check(read, undefined, clock())).method).toBe("crl");
      expect(counter.count).toBe(1);
      await mock.setStatus(accountId, withState.id, { status: "good", offeredMethods: ["ocsp"] });
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
      expect(counter.count).toBe(1); // by fingerprint; its own row has no state
    });
  });
}
