import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CertificateIdentity } from "../../src/domain/certificates/ocsp/certificate-identity.ts";
import { ocspRequest } from "../../src/domain/certificates/ocsp/ocsp-request.ts";
import { readOcspResponse } from "../../src/domain/certificates/ocsp/ocsp-response.ts";
import { MockEnvironment } from "../../src/domain/mock/mock-environment.ts";
import { x509 } from "../../src/domain/mock-ca/x509-runtime.ts";
import { Accounts } from "../../src/domain/accounts/accounts.ts";
import { AccountsRepository } from "../../src/storage/accounts-repository.ts";
import { CertificatesRepository } from "../../src/storage/certificates-repository.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { MockRepository } from "../../src/storage/mock/mock-repository.ts";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";

const [sqlite] = await databaseTargets();
const day = 24 * 60 * 60 * 1000;

/** The mock OCSP responder's certificate: kept in the database, renewed before it lapses; its answers read by the production reader. */
describe("mock OCSP responder", () => {
  let scratch: ScratchDatabase;
  let database: Database;
  let now = Date.parse("2026-11-23T00:00:00Z");
  let mock: MockEnvironment;
  let accountId: string;

  beforeAll(async () => {
    scratch = await sqlite!.create();
    database = await openDatabase(scratch.url);
    await migrateToLatest(database);
    const clock = () => now;
    accountId = (await new Accounts(new AccountsRepository(database), clock).create("responder", "active")).id;
    mock = new MockEnvironment(new MockRepository(database), new CertificatesRepository(database), clock, "http://127.0.0.1/mock/ca.crl", "http://127.0.0.1/mock/ocsp");
  }, 30_000);

  afterAll(async () => {
    await database?.close();
    await scratch?.drop();
  });

  it("answers as the state says, signed by a responder certificate the production reader accepts", async () => {
    const issued = await mock.createCertificate(accountId, { type: "jpki_card_user_authentication" });
    await mock.setStatus(accountId, issued.certificate.id, { status: "revoked", revokedReason: 9, revokedAt: now - day, sourceUpdatedAt: now - 60_000 });
    const ca = new CertificateIdentity(new Uint8Array(new x509.X509Certificate((await mock.ca()).certificatePem).rawData));
    const der = await mock.answerOcsp(ocspRequest(ca, issued.certificate.serialNumber, undefined).der);
    const read = readOcspResponse(der, ca, issued.certificate.serialNumber);
    expect({ status: read.status, revokedAt: read.revokedAt, revokedReason: read.revokedReason, producedAt: read.producedAt, thisUpdate: read.thisUpdate }).toEqual({
      status: "revoked",
      revokedAt: now - day,
      revokedReason: 9,
      producedAt: now - 60_000,
      thisUpdate: now - 60_000,
    });
    expect(read.nextUpdate).toBe(now + 60 * 60 * 1000);
    expect(read.signerValidity).toBeDefined();
  });

  it("keeps one responder certificate across instances, and renews it when less than a month is left", async () => {
    const first = await mock.ocspResponder();
    const again = new MockEnvironment(new MockRepository(database), new CertificatesRepository(database), () => now, "http://127.0.0.1/mock/ca.crl", "http://127.0.0.1/mock/ocsp");
    expect((await again.ocspResponder()).responder.certificate.serialNumber).toBe(first.responder.certificate.serialNumber);
    expect(first.responder.certificate.keyUsage).toEqual(["1.3.6.1.5.5.7.3.9"]);

    now += 340 * day;
    const renewed = await mock.ocspResponder();
    expect(renewed.responder.certificate.serialNumber).not.toBe(first.responder.certificate.serialNumber);
    expect(Date.parse(renewed.responder.certificate.validTo)).toBeGreaterThan(now + 300 * day);
    const stored = await new MockRepository(database).findAuthority("default-ocsp-responder");
    expect(new x509.X509Certificate(stored!.certificatePem).serialNumber.toUpperCase()).toBe(renewed.responder.certificate.serialNumber.toUpperCase());
  });
});
