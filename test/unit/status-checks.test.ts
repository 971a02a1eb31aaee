import { beforeAll, describe, expect, it } from "vitest";
import { CallerNotConfirmed } from "../../src/domain/accounts/caller.ts";
import { DomainError } from "../../src/domain/errors.ts";
import { newId } from "../../src/domain/ids.ts";
import { CertificateDomain, testIssuer, type TestIssuer } from "../support/certificate-domain.ts";

/**
 * The rules of CertificateStatusChecks over the in-memory stores, with a
 * CRL and an OCSP responder the test controls (test/support/certificate-domain.ts):
 * which source answers, what revoked, on hold and unknown become, when a
 * source is asked again, and that accounts never see each other's
 * certificates. The same rules over HTTP and the databases are in
 * test/service/certificate-status.test.ts.
 */

const minute = 60_000;
let issuer: TestIssuer;
beforeAll(async () => {
  issuer = await testIssuer(Date.UTC(2030, 0, 1, 9));
});

const code = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof DomainError)) throw new Error(`expected a DomainError, got ${String(error)}`);
  return error.code;
};

describe("status checks", () => {
  it("a certificate on no list is good by CRL, the first method in order, and one record is written", async () => {
    const domain = new CertificateDomain(issuer);
    const account = newId();
    const id = await domain.register(account, await domain.issue());
    const { status } = await domain.statusChecks.checkCertificate({ accountId: account }, id);
    expect(status).toMatchObject({ status: "good", checkMethod: "crl", checkPurpose: "liveness_check", revokedAt: null, revokedReason: null, certificateId: id, accountId: account });
    expect(domain.ocspFetches).toBe(0);
    expect(await domain.certificates.countStatuses(account)).toBe(1);
  });

  it("OCSP answers when asked for, and when the certificate names no CRL", async () => {
    const domain = new CertificateDomain(issuer);
    const account = newId();
    const both = await domain.register(account, await domain.issue());
    expect((await domain.statusChecks.checkCertificate({ accountId: account }, both, "ocsp")).status).toMatchObject({ status: "good", checkMethod: "ocsp" });
    const ocspOnly = await domain.register(account, await domain.issue({ crl: false }));
    expect((await domain.statusChecks.checkCertificate({ accountId: account }, ocspOnly)).status).toMatchObject({ status: "good", checkMethod: "ocsp" });
    expect(domain.crlFetches).toBe(0);
  });

  it("a method the certificate does not offer is check_method_not_offered, and nothing is written", async () => {
    const domain = new CertificateDomain(issuer);
    const account = newId();
    const crlOnly = await domain.register(account, await domain.issue({ ocsp: false }));
    expect(await code(domain.statusChecks.checkCertificate({ accountId: account }, crlOnly, "ocsp"))).toBe("check_method_not_offered");
    expect(await domain.certificates.countStatuses(account)).toBe(0);
  });

  it("revoked on the CRL: revoked, with the list's date and reason", async () => {
    const domain = new CertificateDomain(issuer);
    const account = newId();
    const held = await domain.issue();
    const id = await domain.register(account, held);
    const revokedAt = Math.floor((domain.time.now - 30 * minute) / 1000) * 1000;
    domain.revokeOnList(held, "keyCompromise", revokedAt);
    const { status } = await domain.statusChecks.checkCertificate({ accountId: account }, id, "crl");
    expect(status).toMatchObject({ status: "revoked", checkMethod: "crl", revokedAt, revokedReason: 1 });
  });

  it("on hold (certificateHold) is revoked with reason 6, by CRL and by OCSP alike", async () => {
    const domain = new CertificateDomain(issuer);
    const account = newId();
    const held = await domain.issue();
    const id = await domain.register(account, held);
    domain.revokeOnList(held, "certificateHold");
    domain.ocspStates.set(held.serialNumber, { status: "revoked", thisUpdate: domain.time.now - minute, revokedAt: domain.time.now - 30 * minute, reason: 6 });
    expect((await domain.statusChecks.checkCertificate({ accountId: account }, id, "crl")).status).toMatchObject({ status: "revoked", revokedReason: 6 });
    expect((await domain.statusChecks.checkCertificate({ accountId: account }, id, "ocsp")).status).toMatchObject({ status: "revoked", revokedReason: 6 });
  });

  it("a responder that does not know the certificate: unknown is recorded as unknown, never good", async () => {
    const domain = new CertificateDomain(issuer);
    const account = newId();
    const held = await domain.issue();
    const id = await domain.register(account, held);
    domain.ocspStates.set(held.serialNumber, { status: "unknown", thisUpdate: domain.time.now - minute });
    expect((await domain.statusChecks.checkCertificate({ accountId: account }, id, "ocsp")).status).toMatchObject({ status: "unknown", checkMethod: "ocsp" });
  });

  it("a source that cannot answer is source_unavailable, and nothing is written", async () => {
    const domain = new CertificateDomain(issuer);
    const account = newId();
    const id = await domain.register(account, await domain.issue({ ocsp: false, crl: false }));
    expect(await code(domain.statusChecks.checkCertificate({ accountId: account }, id))).toBe("source_unavailable");
    expect(await domain.certificates.countStatuses(account)).toBe(0);
  });

  it("a CRL is fetched once and answers every check while current; a new one is fetched once it is not", async () => {
    const domain = new CertificateDomain(issuer);
    const account = newId();
    const [a, b] = [await domain.issue(), await domain.issue()];
    const [idA, idB] = [await domain.register(account, a), await domain.register(account, b)];
    await domain.statusChecks.checkCertificate({ accountId: account }, idA);
    await domain.statusChecks.checkCertificate({ accountId: account }, idB);
    await domain.statusChecks.checkCertificate({ accountId: account }, idA);
    expect(domain.crlFetches).toBe(1);

    domain.revokeOnList(b, "superseded");
    // Past the list's nextUpdate: the check waits for the new list, which revokes b.
    domain.time.advance(25 * 3_600_000);
    expect((await domain.statusChecks.checkCertificate({ accountId: account }, idB)).status).toMatchObject({ status: "revoked", revokedReason: 4 });
    expect(domain.crlFetches).toBe(2);
  });

  it("an OCSP answer is kept until its nextUpdate: the responder is asked once, then again after", async () => {
    const domain = new CertificateDomain(issuer);
    const account = newId();
    const held = await domain.issue();
    const id = await domain.register(account, held);
    await domain.statusChecks.checkCertificate({ accountId: account }, id, "ocsp");
    domain.ocspStates.set(held.serialNumber, { status: "revoked", thisUpdate: domain.time.now, revokedAt: domain.time.now - minute, reason: 0 });
    expect((await domain.statusChecks.checkCertificate({ accountId: account }, id, "ocsp")).status).toMatchObject({ status: "good" });
    expect(domain.ocspFetches).toBe(1);
    expect(domain.ocspStore.responses.size).toBe(1);

    domain.time.advance(2 * 3_600_000);
    expect((await domain.statusChecks.checkCertificate({ accountId: account }, id, "ocsp")).status).toMatchObject({ status: "revoked", revokedReason: 0 });
    expect(domain.ocspFetches).toBe(2);
  });

  it("another account's certificate is certificate_not_found, as an unknown id is; nothing is fetched or written", async () => {
    const domain = new CertificateDomain(issuer);
    const [owner, other] = [newId(), newId()];
    const id = await domain.register(owner, await domain.issue());
    expect(await code(domain.statusChecks.checkCertificate({ accountId: other }, id))).toBe("certificate_not_found");
    expect(await code(domain.statusChecks.checkCertificate({ accountId: other }, newId()))).toBe("certificate_not_found");
    expect(await code(domain.statusChecks.getCertificate(other, id))).toBe("certificate_not_found");
    expect(await code(domain.statusChecks.listStatuses(other, id, 0, ""))).toBe("certificate_not_found");
    expect(domain.crlFetches + domain.ocspFetches).toBe(0);
    expect(await domain.certificates.countStatuses(other)).toBe(0);

    const { status } = await domain.statusChecks.checkCertificate({ accountId: owner }, id);
    expect(await code(domain.statusChecks.getStatus(other, status.id))).toBe("certificate_status_not_found");
  });

  it("the same certificate registered by two accounts is two certificates, each with its own history", async () => {
    const domain = new CertificateDomain(issuer);
    const [a, b] = [newId(), newId()];
    const held = await domain.issue();
    const [idA, idB] = [await domain.register(a, held), await domain.register(b, held)];
    expect(idA).not.toBe(idB);
    await domain.statusChecks.checkCertificate({ accountId: a }, idA);
    expect((await domain.statusChecks.listStatuses(a, idA, 0, "")).statuses).toHaveLength(1);
    expect((await domain.statusChecks.listStatuses(b, idB, 0, "")).statuses).toHaveLength(0);
  });

  it("a caller admitted on a remembered token is confirmed by the certificate's read, before any source is asked", async () => {
    const domain = new CertificateDomain(issuer);
    const account = newId();
    const id = await domain.register(account, await domain.issue());
    domain.tables.authVersion = 8;
    await expect(domain.statusChecks.checkCertificate({ accountId: account, unconfirmedAt: 7 }, id)).rejects.toThrow(CallerNotConfirmed);
    expect(domain.crlFetches).toBe(0);
    expect((await domain.statusChecks.checkCertificate({ accountId: account, unconfirmedAt: 8 }, id)).status.status).toBe("good");
  });

  it("the history lists newest first, a page at a time, without overlap", async () => {
    const domain = new CertificateDomain(issuer);
    const account = newId();
    const id = await domain.register(account, await domain.issue());
    const written: string[] = [];
    for (let i = 0; i < 5; i++) {
      domain.time.advance(1000);
      written.push((await domain.statusChecks.checkCertificate({ accountId: account }, id)).status.id);
    }
    const first = await domain.statusChecks.listStatuses(account, id, 2, "");
    const second = await domain.statusChecks.listStatuses(account, id, 2, first.nextPageToken);
    const last = await domain.statusChecks.listStatuses(account, id, 2, second.nextPageToken);
    expect([...first.statuses, ...second.statuses, ...last.statuses].map((s) => s.id)).toEqual(written.reverse());
    expect(last.nextPageToken).toBe("");
  });
});
