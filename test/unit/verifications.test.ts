import { beforeAll, describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.ts";
import { newId } from "../../src/domain/ids.ts";
import { createMockCa, issueMockCertificate } from "../../src/domain/mock-ca/index.ts";
import { CertificateDomain, crlUrl, signed, testIssuer, type TestIssuer } from "../support/certificate-domain.ts";

/**
 * The rules of Verifications over the in-memory stores, with a CRL and an
 * OCSP responder the test controls (test/support/certificate-domain.ts): the
 * order of the steps (trust anchor, validity, signature, revocation), that
 * the certificate is registered with the account, that a revocation check
 * is made and recorded only for a good signature, and that accounts never
 * see each other's verifications. Over HTTP and the databases:
 * test/service/verification.test.ts.
 */

const day = 24 * 3_600_000;
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

describe("verifications", () => {
  it("a good signature by a good certificate is ok: the certificate is registered, checked for revocation, and the verification stored", async () => {
    const domain = new CertificateDomain(issuer);
    const account = newId();
    const held = await domain.issue();
    const view = await domain.verifications.verify(account, { certificate: held.der, hashAlgorithm: "sha256", ...signed(held, "a contract"), identifyUser: true });
    expect(view.verification).toMatchObject({ accountId: account, result: "ok", certificateId: view.certificate.id, userId: view.certificate.userId, isNewUser: true });
    expect(view.status).toMatchObject({ status: "good", checkPurpose: "signature_verification", certificateId: view.certificate.id });
    expect(view.verification.certificateStatusId).toBe(view.status!.id);
    expect(await domain.certificates.findCertificateByFingerprint(account, view.certificate.fingerprintSha256)).toEqual(view.certificate);
    expect((await domain.verifications.get(account, view.verification.id)).verification).toEqual(view.verification);

    // The same certificate again: the registered one, and no new user.
    const again = await domain.verifications.verify(account, { certificate: held.der, hashAlgorithm: "sha256", ...signed(held, "another"), identifyUser: true });
    expect(again.certificate.id).toBe(view.certificate.id);
    expect(again.verification).toMatchObject({ userId: view.verification.userId, isNewUser: false });
  });

  it("a signature of another message, or by another key, is signature_mismatch, and no revocation check is made", async () => {
    const domain = new CertificateDomain(issuer);
    const account = newId();
    const [held, other] = [await domain.issue(), await domain.issue()];
    const wrongMessage = { ...signed(held, "what was signed"), digest: signed(held, "what is claimed").digest };
    const byOtherKey = { ...signed(held, "text"), signature: signed(other, "text").signature };
    for (const attempt of [wrongMessage, byOtherKey]) {
      const view = await domain.verifications.verify(account, { certificate: held.der, hashAlgorithm: "sha256", ...attempt, identifyUser: false });
      expect(view.verification).toMatchObject({ result: "signature_mismatch", certificateStatusId: null, userId: null, isNewUser: false });
      expect(view.status).toBeUndefined();
    }
    expect(domain.crlFetches + domain.ocspFetches).toBe(0);
    expect(await domain.certificates.countStatuses(account)).toBe(0);
  });

  it("a certificate outside its validity is certificate_expired, before the signature or revocation is looked at", async () => {
    const domain = new CertificateDomain(issuer);
    const account = newId();
    const notYet = await domain.issue({ notBefore: domain.time.now + day });
    const view = await domain.verifications.verify(account, { certificate: notYet.der, hashAlgorithm: "sha256", digest: new Uint8Array(32), signature: new Uint8Array([1]), identifyUser: false });
    expect(view.verification.result).toBe("certificate_expired");
    expect(domain.crlFetches + domain.ocspFetches).toBe(0);
  });

  it("a revoked certificate is certificate_revoked, with the check that found it", async () => {
    const domain = new CertificateDomain(issuer);
    const account = newId();
    const held = await domain.issue();
    domain.revokeOnList(held, "keyCompromise");
    const view = await domain.verifications.verify(account, { certificate: held.der, hashAlgorithm: "sha256", ...signed(held, "text"), identifyUser: false });
    expect(view.verification.result).toBe("certificate_revoked");
    expect(view.status).toMatchObject({ status: "revoked", revokedReason: 1, checkMethod: "crl", checkPurpose: "signature_verification" });
    expect(view.verification.certificateStatusId).toBe(view.status!.id);
  });

  it("by OCSP when asked; unknown there fails the call with source_unavailable and stores no verification", async () => {
    const domain = new CertificateDomain(issuer);
    const account = newId();
    const held = await domain.issue();
    domain.ocspStates.set(held.serialNumber, { status: "unknown", thisUpdate: domain.time.now - 60_000 });
    const input = { certificate: held.der, hashAlgorithm: "sha256" as const, ...signed(held, "text"), identifyUser: false };
    expect(await code(domain.verifications.verify(account, { ...input, checkMethod: "ocsp" }))).toBe("source_unavailable");
    expect(domain.tables.verifications.size).toBe(0);
    expect((await domain.verifications.verify(account, { ...input, checkMethod: "crl" })).verification.result).toBe("ok");
  });

  it("a certificate no trust anchor vouches for is unsupported_certificate, and nothing is registered or stored", async () => {
    const domain = new CertificateDomain(issuer);
    const account = newId();
    const stranger = await createMockCa({ now: new Date(domain.time.now - day), commonName: "Unknown CA" });
    const issued = await issueMockCertificate(stranger, { kind: "jpki_card_user_authentication", subjectCommonName: "X", notBefore: new Date(domain.time.now - day), crlDistributionPointUrl: crlUrl, keyAlgorithm: "ec_p256" });
    const der = new Uint8Array(Buffer.from(issued.certificatePem.replace(/-----[^-]+-----|\s/g, ""), "base64"));
    expect(await code(domain.verifications.verify(account, { certificate: der, hashAlgorithm: "sha256", digest: new Uint8Array(32), signature: new Uint8Array([1]), identifyUser: false }))).toBe(
      "unsupported_certificate",
    );
    expect(await domain.certificates.listCertificates(account)).toEqual([]);
    expect(domain.tables.verifications.size).toBe(0);
  });

  it("bad input is invalid_field before anything is read: a digest of the wrong length, an empty signature, bytes that are no certificate", async () => {
    const domain = new CertificateDomain(issuer);
    const account = newId();
    const held = await domain.issue();
    const good = { certificate: held.der, hashAlgorithm: "sha256" as const, ...signed(held, "text"), identifyUser: false };
    expect(await code(domain.verifications.verify(account, { ...good, digest: new Uint8Array(20) }))).toBe("invalid_field");
    expect(await code(domain.verifications.verify(account, { ...good, signature: new Uint8Array() }))).toBe("invalid_field");
    expect(await code(domain.verifications.verify(account, { ...good, certificate: new Uint8Array([0x30, 0x03, 1, 2, 3]) }))).toBe("invalid_field");
    expect(await domain.certificates.listCertificates(account)).toEqual([]);
  });

  it("another account's verification is verification_not_found, to read, list by its certificate, or delete", async () => {
    const domain = new CertificateDomain(issuer);
    const [owner, other] = [newId(), newId()];
    const held = await domain.issue();
    const { verification } = await domain.verifications.verify(owner, { certificate: held.der, hashAlgorithm: "sha256", ...signed(held, "text"), identifyUser: true });
    expect(await code(domain.verifications.get(other, verification.id))).toBe("verification_not_found");
    expect(await code(domain.verifications.delete(other, verification.id))).toBe("verification_not_found");
    expect(await code(domain.verifications.list(other, { certificateId: verification.certificateId }, 0, ""))).toBe("certificate_not_found");
    expect((await domain.verifications.list(other, {}, 0, "")).verifications).toEqual([]);
    expect((await domain.verifications.list(owner, {}, 0, "")).verifications.map((v) => v.id)).toEqual([verification.id]);

    await domain.verifications.delete(owner, verification.id);
    expect(await code(domain.verifications.get(owner, verification.id))).toBe("verification_not_found");
  });
});
