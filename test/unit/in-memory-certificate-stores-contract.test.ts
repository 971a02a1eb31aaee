import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Accounts } from "../../src/domain/accounts/accounts.ts";
import type { CertificateStore } from "../../src/domain/certificates/certificate-store.ts";
import type { CrlListStore, VerifiedListToStore } from "../../src/domain/certificates/crl/crl-list-store.ts";
import type { RegisteredBySerial } from "../../src/domain/certificates/crl/list-changes.ts";
import type { CertificateUser, StatusRecord, StoredCertificate } from "../../src/domain/certificates/model.ts";
import type { OcspResponseStore, StoredOcspResponse } from "../../src/domain/certificates/ocsp/ocsp-response-store.ts";
import { newId, newTimeOrderedId } from "../../src/domain/ids.ts";
import type { VerificationRecord } from "../../src/domain/verification/model.ts";
import type { VerificationStore } from "../../src/domain/verification/verification-store.ts";
import { AccountsRepository } from "../../src/storage/accounts-repository.ts";
import { CertificatesRepository } from "../../src/storage/certificates-repository.ts";
import { CrlListsRepository } from "../../src/storage/crl-lists-repository.ts";
import { openDatabase } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { OcspResponsesRepository } from "../../src/storage/ocsp-responses-repository.ts";
import { RegisteredBySerialRepository } from "../../src/storage/registered-by-serial-repository.ts";
import { VerificationsRepository } from "../../src/storage/verifications-repository.ts";
import { databaseTargets, targetTitle } from "../support/databases.ts";
import { CertificateTables, InMemoryCertificates, InMemoryVerifications } from "../support/in-memory/certificates.ts";
import { InMemoryCrlLists, InMemoryOcspResponses } from "../support/in-memory/revocation-lists.ts";

/**
 * The in-memory certificate stores (test/support/in-memory/certificates.ts,
 * revocation-lists.ts) and the repositories answer these checks alike, so
 * the unit tests of status checks and verifications over the fakes test what
 * the server does. The OIDC stores have theirs in in-memory-stores-contract.test.ts.
 */

interface Stores {
  certificates: CertificateStore & RegisteredBySerial;
  verifications: VerificationStore;
  crlLists: CrlListStore;
  ocspResponses: OcspResponseStore;
  /** A new account's id (the repositories' rows need an account row). */
  account(): Promise<string>;
}

interface Implementation {
  name: string;
  unavailable?: string | undefined;
  open(): Promise<{ stores: Stores; close(): Promise<void> }>;
}

const targets = await databaseTargets();
const now = 1_750_000_000_000;

const implementations: Implementation[] = [
  {
    name: "in memory",
    open: async () => {
      const tables = new CertificateTables();
      const stores: Stores = {
        certificates: new InMemoryCertificates(tables),
        verifications: new InMemoryVerifications(tables),
        crlLists: new InMemoryCrlLists(tables),
        ocspResponses: new InMemoryOcspResponses(),
        account: async () => newId(),
      };
      return { stores, close: async () => undefined };
    },
  },
  ...targets.map(
    (target): Implementation => ({
      name: `${targetTitle(target)} repositories`,
      unavailable: target.unavailable,
      async open() {
        const scratch = await target.create();
        const database = await openDatabase(scratch.url);
        await migrateToLatest(database);
        const certificates = new CertificatesRepository(database);
        const registered = new RegisteredBySerialRepository(database);
        const accounts = new Accounts(new AccountsRepository(database), () => now);
        const stores: Stores = {
          certificates: Object.assign(certificates, { findBySerials: registered.findBySerials.bind(registered) }),
          verifications: new VerificationsRepository(database),
          crlLists: new CrlListsRepository(database),
          ocspResponses: new OcspResponsesRepository(database),
          account: async () => (await accounts.create(`contract-${randomBytes(4).toString("hex")}`, "active")).id,
        };
        return {
          stores,
          async close() {
            await database.close();
            await scratch.drop();
          },
        };
      },
    }),
  ),
];

const hex = (bytes = 8) => randomBytes(bytes).toString("hex");

for (const implementation of implementations) {
  describe.skipIf(!!implementation.unavailable)(implementation.name, () => {
    let stores: Stores;
    let close: () => Promise<void> = async () => undefined;

    beforeAll(async () => {
      ({ stores, close } = await implementation.open());
    });
    afterAll(() => close());

    async function user(accountId: string): Promise<CertificateUser> {
      const row = { id: newId(), accountId, createdAt: now };
      await stores.certificates.insertUser(row);
      return row;
    }

    function certificate(owner: CertificateUser, values: Partial<StoredCertificate> = {}): StoredCertificate {
      return {
        id: newId(),
        accountId: owner.accountId,
        userId: owner.id,
        type: "jpki_card_user_authentication",
        origin: "verified",
        serialNumber: hex(),
        issuer: "CN=Test",
        notBefore: now - 1000,
        notAfter: now + 1000,
        fingerprintSha256: hex(32),
        crlDistributionPoints: ["http://ca.example/ca.crl"],
        ocspUrls: [],
        trustAnchor: `sha256:${hex()}`,
        createdAt: now,
        ...values,
      };
    }

    function status(c: StoredCertificate, createdAt: number, values: Partial<StatusRecord> = {}): StatusRecord {
      return {
        id: newTimeOrderedId(createdAt),
        accountId: c.accountId,
        certificateId: c.id,
        status: "good",
        checkMethod: "crl",
        checkPurpose: "liveness_check",
        sourceUpdatedAt: now,
        revokedAt: null,
        revokedReason: null,
        createdAt,
        ...values,
      };
    }

    describe("certificates", () => {
      it("are read only by their account; the current auth version comes with a found one only", async () => {
        const [a, b] = [await stores.account(), await stores.account()];
        const owner = await user(a);
        const c = certificate(owner);
        await stores.certificates.insertCertificate(c);
        expect(await stores.certificates.findCertificate(a, c.id)).toEqual(c);
        expect(await stores.certificates.findCertificate(b, c.id)).toBeUndefined();
        expect(await stores.certificates.findUser(b, owner.id)).toBeUndefined();
        expect(await stores.certificates.findCertificateByFingerprint(b, c.fingerprintSha256)).toBeUndefined();
        const found = await stores.certificates.findCertificateAndCurrentAuthVersion(a, c.id);
        expect(found.certificate).toEqual(c);
        expect(found.authVersion).toEqual(expect.any(Number));
        expect(await stores.certificates.findCertificateAndCurrentAuthVersion(b, c.id)).toEqual({ certificate: undefined, authVersion: undefined });
      });

      it("one per fingerprint and account: insertCertificateIfAbsent keeps the first; another account may hold the same", async () => {
        const [a, b] = [await stores.account(), await stores.account()];
        const [ua, ub] = [await user(a), await user(a)];
        const first = certificate(ua);
        expect(await stores.certificates.insertCertificateIfAbsent(first)).toBe(true);
        expect(await stores.certificates.insertCertificateIfAbsent(certificate(ub, { fingerprintSha256: first.fingerprintSha256 }))).toBe(false);
        expect(await stores.certificates.findCertificateByFingerprint(a, first.fingerprintSha256)).toEqual(first);
        expect(await stores.certificates.insertCertificateIfAbsent(certificate(await user(b), { fingerprintSha256: first.fingerprintSha256 }))).toBe(true);
        await stores.certificates.deleteUserWithoutCertificates(a, ua.id);
        await stores.certificates.deleteUserWithoutCertificates(a, ub.id);
        expect(await stores.certificates.findUser(a, ua.id)).toEqual(ua);
        expect(await stores.certificates.findUser(a, ub.id)).toBeUndefined();
      });

      it("a user's latest is the latest notBefore, then the most recently stored; by type when asked", async () => {
        const a = await stores.account();
        const owner = await user(a);
        const older = certificate(owner, { notBefore: now - 5000, createdAt: now + 10 });
        const newer = certificate(owner, { notBefore: now - 1000, createdAt: now });
        const sameStartLater = certificate(owner, { notBefore: now - 1000, createdAt: now + 5 });
        const signature = certificate(owner, { notBefore: now - 9000, type: "jpki_card_digital_signature" });
        for (const c of [older, newer, sameStartLater, signature]) await stores.certificates.insertCertificate(c);
        expect(await stores.certificates.findLatestCertificate(a, owner.id)).toEqual(sameStartLater);
        expect(await stores.certificates.findLatestCertificate(a, owner.id, "jpki_card_digital_signature")).toEqual(signature);
        expect(await stores.certificates.findUserByFingerprints(a, [older.fingerprintSha256, hex(32)])).toEqual(owner);
        expect(await stores.certificates.findUserByFingerprints(a, [hex(32)])).toBeUndefined();
      });

      it("statuses list newest first in the order written, a page after a cursor, and only the account's", async () => {
        const a = await stores.account();
        const c = certificate(await user(a));
        await stores.certificates.insertCertificate(c);
        const written = [status(c, now + 1), status(c, now + 2), status(c, now + 3)];
        await stores.certificates.insertStatus(written[0]!);
        await stores.certificates.insertStatuses(written.slice(1));
        const all = await stores.certificates.listStatuses(a, c.id, 10);
        expect(all).toEqual([...written].reverse());
        expect(await stores.certificates.listStatuses(a, c.id, 1, all[0])).toEqual([written[1]]);
        expect(await stores.certificates.findStatus(a, written[0]!.id)).toEqual(written[0]);
        expect(await stores.certificates.findStatus(await stores.account(), written[0]!.id)).toBeUndefined();
        expect(await stores.certificates.countStatuses(a)).toBe(3);
      });

      it("findBySerials finds the anchor's certificates in every account, with their latest status", async () => {
        const anchor = `sha256:${hex()}`;
        const [a, b] = [await stores.account(), await stores.account()];
        const serial = hex();
        const [ca, cb] = [certificate(await user(a), { trustAnchor: anchor, serialNumber: serial }), certificate(await user(b), { trustAnchor: anchor, serialNumber: serial })];
        const elsewhere = certificate(await user(a), { serialNumber: serial });
        for (const c of [ca, cb, elsewhere]) await stores.certificates.insertCertificate(c);
        await stores.certificates.insertStatuses([status(ca, now + 1), status(ca, now + 2, { status: "revoked", revokedAt: now, revokedReason: 1 })]);
        const found = await stores.certificates.findBySerials(anchor, [serial, hex()]);
        expect(found.sort((x, y) => (x.certificate.id < y.certificate.id ? -1 : 1))).toEqual(
          [
            { certificate: ca, status: "revoked" },
            { certificate: cb, status: undefined },
          ].sort((x, y) => (x.certificate.id < y.certificate.id ? -1 : 1)),
        );
      });
    });

    describe("verifications", () => {
      it("list newest first (ties by id), filtered by user or certificate, only the account's; delete once, by the account", async () => {
        const a = await stores.account();
        const owner = await user(a);
        const c = certificate(owner);
        await stores.certificates.insertCertificate(c);
        const record = (createdAt: number, userId: string | null): VerificationRecord => ({
          id: newTimeOrderedId(createdAt),
          accountId: a,
          certificateId: c.id,
          userId,
          isNewUser: false,
          result: "ok",
          hashAlgorithm: "sha256",
          certificateStatusId: null,
          contentSealed: null,
          createdAt,
        });
        const [first, second, third] = [record(now + 1, owner.id), record(now + 2, null), record(now + 2, owner.id)];
        for (const r of [first, second, third]) await stores.verifications.insert(r);
        const newestFirst = [second, third].sort((x, y) => (x.id < y.id ? 1 : -1)).concat(first);
        expect(await stores.verifications.list(a, {}, 10)).toEqual(newestFirst);
        expect(await stores.verifications.list(a, {}, 10, newestFirst[0])).toEqual(newestFirst.slice(1));
        expect(await stores.verifications.list(a, { userId: owner.id }, 10)).toEqual(newestFirst.filter((r) => r.userId === owner.id));
        expect(await stores.verifications.list(a, { certificateId: newId() }, 10)).toEqual([]);
        const other = await stores.account();
        expect(await stores.verifications.list(other, {}, 10)).toEqual([]);
        expect(await stores.verifications.find(other, first.id)).toBeUndefined();
        expect(await stores.verifications.delete(other, first.id)).toBe(false);
        expect(await stores.verifications.delete(a, first.id)).toBe(true);
        expect(await stores.verifications.delete(a, first.id)).toBe(false);
        expect(await stores.verifications.find(a, first.id)).toBeUndefined();
      });
    });

    describe("OCSP responses", () => {
      it("a response replaces the stored one unless that one has a later thisUpdate; forget drops it", async () => {
        const key = { issuerAnchor: `sha256:${hex()}`, serialNumber: hex() };
        const response = (thisUpdate: number, byte: number): StoredOcspResponse => ({
          ...key,
          url: "http://ocsp.example",
          der: new Uint8Array([byte, 1, 2]),
          sha256: hex(32),
          producedAt: thisUpdate,
          thisUpdate,
          nextUpdate: thisUpdate + 1000,
          usableUntil: thisUpdate + 1000,
          fetchedAt: thisUpdate,
        });
        const [middle, older, newer] = [response(now, 1), response(now - 10, 2), response(now + 10, 3)];
        await stores.ocspResponses.save(middle);
        await stores.ocspResponses.save(older);
        const id = `${key.issuerAnchor} ${key.serialNumber}`;
        expect((await stores.ocspResponses.findMany([key])).get(id)).toEqual(middle);
        await stores.ocspResponses.save(newer);
        expect((await stores.ocspResponses.findMany([key, { ...key, serialNumber: hex() }])).get(id)).toEqual(newer);
        await stores.ocspResponses.forget(key);
        expect((await stores.ocspResponses.findMany([key])).size).toBe(0);
      });
    });

    describe("CRL lists", () => {
      it("a list replaces the stored one only in crlNumber and thisUpdate order, and only the one it was computed against", async () => {
        const key = { issuerAnchor: `sha256:${hex()}`, url: `http://ca.example/${hex()}.crl` };
        const list = (crlNumber: bigint, thisUpdate: number, replacing: string | undefined, statusRecords: StatusRecord[] = []): VerifiedListToStore => ({
          ...key,
          replacing,
          statusRecords,
          der: new Uint8Array(randomBytes(40)),
          sha256: hex(32),
          etag: undefined,
          lastModified: undefined,
          thisUpdate,
          nextUpdate: thisUpdate + 1000,
          crlNumber,
          entries: 0,
          at: thisUpdate,
        });
        const first = list(5n, now, undefined);
        expect(await stores.crlLists.saveList(first)).toBe(true);
        expect(await stores.crlLists.find(key)).toMatchObject({ sha256: first.sha256, crlNumber: 5n, thisUpdate: now, bytes: 40 });
        expect(new Uint8Array((await stores.crlLists.der(key, first.sha256))!)).toEqual(first.der);
        expect(await stores.crlLists.saveList(list(4n, now + 10, undefined))).toBe(false);
        expect(await stores.crlLists.saveList(list(6n, now + 10, hex(32)))).toBe(false);

        const a = await stores.account();
        const c = certificate(await user(a));
        await stores.certificates.insertCertificate(c);
        const second = list(6n, now + 10, first.sha256, [status(c, now + 11, { status: "revoked", revokedAt: now, revokedReason: 0 })]);
        expect(await stores.crlLists.saveList(second)).toBe(true);
        expect(await stores.crlLists.der(key, first.sha256)).toBeUndefined();
        expect(await stores.certificates.listStatuses(a, c.id, 10)).toEqual(second.statusRecords);

        await stores.crlLists.markChecked(key, second.sha256, now + 20, "etag-1", undefined);
        await stores.crlLists.recordError(key, "fetch failed", now + 30);
        expect(await stores.crlLists.find(key)).toMatchObject({ checkedAt: now + 20, etag: "etag-1", lastError: "fetch failed", lastErrorAt: now + 30 });
        await stores.crlLists.forget(key);
        expect(await stores.crlLists.find(key)).toBeUndefined();
      });
    });
  });
}
