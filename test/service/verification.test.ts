import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { create } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { Code, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CertificateStatus_CheckMethod as CheckMethod,
  CertificateStatus_CheckPurpose as CheckPurpose,
  CertificateStatus_Status as Status,
  Certificate_Type as CertificateType,
  CrlReason,
} from "../../gen/service/verify/v2/certificate_pb.ts";
import { JpkiDigitalSignatureContent_Gender as Gender, JpkiDigitalSignatureContentSchema, type JpkiDigitalSignatureContent } from "../../gen/service/verify/v2/certificate_content_pb.ts";
import { KeyAlgorithm, type CreateMockCertificateResponse } from "../../gen/service/verify/v2/mock_service_pb.ts";
import {
  HashAlgorithm,
  VerificationService,
  Verification_Result as Result,
  type VerifyResponse,
} from "../../gen/service/verify/v2/verification_service_pb.ts";
import { issueMockCertificate } from "../../src/domain/mock-ca/index.ts";
import {
  bearer,
  countStatuses,
  createTenant,
  expectRpcError,
  postJson,
  protocols,
  setupClients,
  uuidPattern,
  type Clients,
  type Tenant,
} from "../support/certificate-rpc.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { OpensslCa, Signer, pemToDer, selfSigned, type Hash } from "../support/openssl.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { mockOf } from "../../src/app/mock/installed-mock.ts";

const targets = await databaseTargets();
const cardSignaturePolicy = "1.2.392.200149.8.5.1.1.20";
const document = "I agree to the terms, 2026-11-22.\n";

const hashEnum: Record<Hash, HashAlgorithm> = { sha256: HashAlgorithm.SHA256, sha384: HashAlgorithm.SHA384, sha512: HashAlgorithm.SHA512 };

/** A person as a caller of CreateMockCertificate gives it, and as Verify must read it back. */
const person: JpkiDigitalSignatureContent = create(JpkiDigitalSignatureContentSchema, {
  name: "検証　次郎",
  nameSubstituteCharacters: "00010",
  dateOfBirth: "319750401",
  gender: Gender.MALE,
  address: "北海道札幌市中央区北一条西二丁目",
  addressSubstituteCharacters: "0".repeat(16),
});

let dir: string;
let signer: Signer;
let productionCa: OpensslCa;
let anchorsFile: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "shomei-verification-"));
  signer = new Signer(dir);
  productionCa = new OpensslCa(dir, "test-jpki-sign-ca");
  anchorsFile = path.join(dir, "trust-anchors.json");
  writeFileSync(
    anchorsFile,
    JSON.stringify({
      anchors: [
        {
          name: "test JPKI signature CA",
          certificates: path.basename(productionCa.certificatePath),
          issues: [{ type: "jpki_card_digital_signature", policyOid: cardSignaturePolicy, keyUsage: ["digitalSignature", "nonRepudiation"] }],
        },
      ],
    }),
  );
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let scratch: ScratchDatabase;
    let server: TestServer;
    let h2: Http2SessionManager;
    let a: Tenant;
    let b: Tenant;
    let setupA: Clients;
    let setupB: Clients;
    let verifyA: Client<typeof VerificationService>;
    let verifyB: Client<typeof VerificationService>;

    const verificationClient = (token: string) =>
      createClient(VerificationService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", useBinaryFormat: true, interceptors: [bearer(token)] }));

    async function count(table: "verifications" | "certificates" | "certificate_users", accountId: string): Promise<number> {
      const row = await server.database.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("account_id", "=", accountId)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    }

    /** Everything an account has stored, to show that a refused call changed nothing. */
    async function footprint(accountId: string) {
      return {
        verifications: await count("verifications", accountId),
        certificates: await count("certificates", accountId),
        users: await count("certificate_users", accountId),
        statuses: await countStatuses(server, accountId),
      };
    }

    async function mockCertificate(
      setup: Clients,
      type = CertificateType.JPKI_CARD_DIGITAL_SIGNATURE,
      extra: { userId?: string; keyAlgorithm?: KeyAlgorithm; person?: JpkiDigitalSignatureContent } = {},
    ): Promise<CreateMockCertificateResponse & { der: Buffer }> {
      const created = await setup.mock.createMockCertificate({ type, ...extra });
      return Object.assign(created, { der: pemToDer(created.certificatePem) });
    }

    function signed(privateKeyPem: string, hash: Hash = "sha256", ...sigopts: string[]) {
      return { hashAlgorithm: hashEnum[hash], digest: signer.digest(document, hash), signature: signer.sign(privateKeyPem, document, hash, ...sigopts) };
    }

    beforeAll(async () => {
      scratch = await target.create();
      server = await startTestServer(scratch.url, { mode: "mock", trustAnchorsFile: anchorsFile });
      h2 = new Http2SessionManager(server.url);
      a = await createTenant(server, "verify-a");
      b = await createTenant(server, "verify-b");
      setupA = setupClients(server, a.token);
      setupB = setupClients(server, b.token);
      verifyA = verificationClient(a.token);
      verifyB = verificationClient(b.token);
    });

    afterAll(async () => {
      h2?.abort();
      await server?.close();
      await scratch?.drop();
    });

    for (const protocol of protocols) {
      it(`${protocol.name}: an RSA PKCS#1 v1.5 SHA-256 signature over the digest is RESULT_OK, with the certificate's id and content`, async () => {
        const api = createClient(VerificationService, protocol.transport(server.url, [bearer(a.token)], h2));
        const created = await mockCertificate(setupA, CertificateType.JPKI_CARD_DIGITAL_SIGNATURE, { person });
        const before = await footprint(a.account.id);
        const response = await api.verify({ certificate: created.der, ...signed(created.privateKeyPem), identifyUser: true });
        const v = response.verification!;
        expect(v.id).toMatch(uuidPattern);
        expect({ result: v.result, certificateId: v.certificateId, userId: v.userId, isNewUser: v.isNewUser, hash: v.hashAlgorithm }).toEqual({
          result: Result.OK,
          certificateId: created.certificate!.id,
          userId: created.user!.id,
          isNewUser: false,
          hash: HashAlgorithm.SHA256,
        });
        expect(response.certificate!.id).toBe(created.certificate!.id);
        expect(response.certificate!.type).toBe(CertificateType.JPKI_CARD_DIGITAL_SIGNATURE);
        const s = response.certificateStatus!;
        expect({ status: s.status, purpose: s.checkPurpose, method: s.checkMethod }).toEqual({
          status: Status.GOOD,
          purpose: CheckPurpose.SIGNATURE_VERIFICATION,
          method: CheckMethod.CRL,
        });
        expect(response.certificateContent!.content).toEqual({ case: "jpkiCardDigitalSignature", value: person });
        // One verification and one status record; the certificate was already the account's.
        expect(await footprint(a.account.id)).toEqual({ ...before, verifications: before.verifications + 1, statuses: before.statuses + 1 });
      });
    }

    for (const hash of ["sha384", "sha512"] as const) {
      it(`RSA PKCS#1 v1.5 ${hash.toUpperCase()} is RESULT_OK; the digest of another hash is a mismatch`, async () => {
        const created = await mockCertificate(setupA);
        const response = await verifyA.verify({ certificate: created.der, ...signed(created.privateKeyPem, hash) });
        expect(response.verification!.result).toBe(Result.OK);
        expect(response.verification!.hashAlgorithm).toBe(hashEnum[hash]);
        // Without identify_user the verification names no user.
        expect({ userId: response.verification!.userId, isNewUser: response.verification!.isNewUser }).toEqual({ userId: "", isNewUser: false });
        const other = signed(created.privateKeyPem, hash);
        const mismatch = await verifyA.verify({ certificate: created.der, ...other, digest: signer.digest(document + "changed", hash) });
        expect(mismatch.verification!.result).toBe(Result.SIGNATURE_MISMATCH);
      });
    }

    it("RSA-PSS signatures (salt = hash length, and maximum salt) are RESULT_OK", async () => {
      const created = await mockCertificate(setupA);
      for (const saltlen of ["-1", "-2"]) {
        const response = await verifyA.verify({
          certificate: created.der,
          ...signed(created.privateKeyPem, "sha256", "rsa_padding_mode:pss", `rsa_pss_saltlen:${saltlen}`),
        });
        expect(response.verification!.result).toBe(Result.OK);
      }
    });

    it("ECDSA P-256 signatures of a mock certificate with a P-256 key are RESULT_OK for every hash", async () => {
      const created = await mockCertificate(setupA, CertificateType.JPKI_MOBILE_DIGITAL_SIGNATURE, { keyAlgorithm: KeyAlgorithm.EC_P256 });
      for (const hash of ["sha256", "sha384", "sha512"] as const) {
        const response = await verifyA.verify({ certificate: created.der, ...signed(created.privateKeyPem, hash) });
        expect(response.verification!.result).toBe(Result.OK);
        expect(response.certificate!.type).toBe(CertificateType.JPKI_MOBILE_DIGITAL_SIGNATURE);
      }
    });

    it("a tampered signature is RESULT_SIGNATURE_MISMATCH: stored, no revocation check", async () => {
      const created = await mockCertificate(setupA);
      const good = signed(created.privateKeyPem);
      const tampered = Buffer.from(good.signature);
      tampered[10]! ^= 0x40;
      const before = await footprint(a.account.id);
      const response = await verifyA.verify({ certificate: created.der, ...good, signature: tampered });
      expect(response.verification!.result).toBe(Result.SIGNATURE_MISMATCH);
      expect(response.certificateStatus).toBeUndefined();
      expect(await footprint(a.account.id)).toEqual({ ...before, verifications: before.verifications + 1 });
      const fetched = await verifyA.getVerification({ verificationId: response.verification!.id });
      expect(fetched.verification!.result).toBe(Result.SIGNATURE_MISMATCH);
      // Content is kept only with RESULT_OK.
      expect(fetched.certificateContent).toBeUndefined();
    });

    it("an expired certificate is RESULT_CERTIFICATE_EXPIRED before its signature is even looked at", async () => {
      const ca = await mockOf(server.domain).ca();
      const now = Date.now();
      const expired = await issueMockCertificate(ca, {
        kind: "jpki_card_digital_signature",
        subjectCommonName: "expired",
        notBefore: new Date(now - 2 * 365 * 86_400_000),
        notAfter: new Date(now - 86_400_000),
        crlDistributionPointUrl: `${server.url}/mock/ca.crl`,
      });
      const before = await footprint(a.account.id);
      const response = await verifyA.verify({ certificate: pemToDer(expired.certificatePem), ...signed(expired.privateKeyPem), identifyUser: true });
      expect(response.verification!.result).toBe(Result.CERTIFICATE_EXPIRED);
      expect(response.certificateStatus).toBeUndefined();
      // A certificate the account had not seen: registered, with a new user.
      expect(response.verification!.isNewUser).toBe(true);
      expect(await footprint(a.account.id)).toEqual({
        verifications: before.verifications + 1,
        certificates: before.certificates + 1,
        users: before.users + 1,
        statuses: before.statuses,
      });
      // A garbage signature is still "expired": step 2 decides first.
      const again = await verifyA.verify({ certificate: pemToDer(expired.certificatePem), ...signed(expired.privateKeyPem), signature: Buffer.alloc(256, 7) });
      expect(again.verification!.result).toBe(Result.CERTIFICATE_EXPIRED);
      expect(again.verification!.certificateId).toBe(response.verification!.certificateId);
    });

    it("a revoked certificate is RESULT_CERTIFICATE_REVOKED, recorded as a signature-verification check", async () => {
      // The mock CA's list held before the revocation, as a running service holds it: loaded by a check of
      // another certificate, so this one stays never checked (run first, the test found no list to compare).
      await setupA.certificates.checkCertificateStatus({ certificateId: (await mockCertificate(setupA)).certificate!.id, checkMethod: CheckMethod.CRL });
      const created = await mockCertificate(setupA);
      await setupA.mock.setMockCertificateStatus({ certificateId: created.certificate!.id, status: Status.REVOKED, revokedReason: CrlReason.AFFILIATION_CHANGED });
      const response = await verifyA.verify({ certificate: created.der, ...signed(created.privateKeyPem) });
      expect(response.verification!.result).toBe(Result.CERTIFICATE_REVOKED);
      const s = response.certificateStatus!;
      expect({ status: s.status, reason: s.revokedReason, purpose: s.checkPurpose }).toEqual({
        status: Status.REVOKED,
        reason: CrlReason.AFFILIATION_CHANGED,
        purpose: CheckPurpose.SIGNATURE_VERIFICATION,
      });
      const history = await setupA.certificates.listCertificateStatuses({ certificateId: created.certificate!.id });
      // Newest first: the verification's own record, then the two the new list recorded when it was installed
      // (the previous list's answer for a certificate never checked, then the change; docs/events.md).
      expect(history.certificateStatuses.map((r) => r.id)[0]).toBe(s.id);
      expect(history.certificateStatuses.map((r) => r.status)).toEqual([Status.REVOKED, Status.REVOKED, Status.GOOD]);
    });

    it("checkMethod is honoured in step 4; a source that does not know the certificate gives unavailable, not a result", async () => {
      const created = await mockCertificate(setupA);
      const viaOcsp = await verifyA.verify({ certificate: created.der, ...signed(created.privateKeyPem), checkMethod: CheckMethod.OCSP });
      expect(viaOcsp.certificateStatus!.checkMethod).toBe(CheckMethod.OCSP);
      await setupA.mock.setMockCertificateStatus({ certificateId: created.certificate!.id, status: Status.UNKNOWN });
      const before = await footprint(a.account.id);
      await expectRpcError(verifyA.verify({ certificate: created.der, ...signed(created.privateKeyPem) }), Code.Unavailable, "ERROR_REASON_SOURCE_UNAVAILABLE");
      // The check is recorded (history counts it); no verification is.
      expect(await footprint(a.account.id)).toEqual({ ...before, statuses: before.statuses + 1 });
    });

    it("a certificate no anchor vouches for is failed_precondition UNSUPPORTED_CERTIFICATE, and nothing is stored", async () => {
      const stranger = selfSigned(dir, "stranger");
      const offPolicy = productionCa.issue("off-policy", "1.2.3.4", "digitalSignature");
      const before = await footprint(a.account.id);
      for (const certificate of [stranger, offPolicy]) {
        await expectRpcError(
          verifyA.verify({ certificate: certificate.der, ...signed(certificate.privateKeyPem), identifyUser: true }),
          Code.FailedPrecondition,
          "ERROR_REASON_UNSUPPORTED_CERTIFICATE",
          "certificate",
        );
      }
      expect(await footprint(a.account.id)).toEqual(before);
    });

    it("a certificate of a configured anchor with no revocation source is unavailable, never RESULT_OK", async () => {
      const leaf = productionCa.issue("production-leaf", cardSignaturePolicy, "digitalSignature,nonRepudiation");
      const before = await footprint(a.account.id);
      await expectRpcError(
        verifyA.verify({ certificate: leaf.der, ...signed(leaf.privateKeyPem) }),
        Code.Unavailable,
        "ERROR_REASON_SOURCE_UNAVAILABLE",
      );
      // The certificate is registered (it is trusted); no verification is stored.
      expect(await footprint(a.account.id)).toEqual({ ...before, certificates: before.certificates + 1, users: before.users + 1 });
      // Its type came from the anchor's rule.
      const byContent = setupA.certificates.checkCertificateStatusByContent({ certificate: leaf.der });
      await expectRpcError(byContent, Code.Unavailable, "ERROR_REASON_SOURCE_UNAVAILABLE");
    });

    it("bad input is invalid_argument naming the field, and changes nothing", async () => {
      const created = await mockCertificate(setupA);
      const good = { certificate: created.der, ...signed(created.privateKeyPem) };
      const before = await footprint(a.account.id);
      const cases: [Partial<typeof good>, string][] = [
        [{ digest: good.digest.subarray(0, 31) }, "digest"],
        [{ digest: signer.digest(document, "sha384") }, "digest"],
        [{ hashAlgorithm: HashAlgorithm.SHA1, digest: Buffer.alloc(20) }, "hash_algorithm"],
        [{ hashAlgorithm: HashAlgorithm.UNSPECIFIED }, "hash_algorithm"],
        [{ signature: Buffer.alloc(0) }, "signature"],
        [{ certificate: Buffer.alloc(0) }, "certificate"],
        [{ certificate: Buffer.from("not DER") }, "certificate"],
      ];
      for (const [change, field] of cases) {
        await expectRpcError(verifyA.verify({ ...good, ...change }), Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", field);
      }
      expect(await footprint(a.account.id)).toEqual(before);
    });

    it("the same certificate keeps its id; another account gets its own id and user, linked by the mock to the person's other certificates", async () => {
      const first = await mockCertificate(setupA, CertificateType.JPKI_CARD_DIGITAL_SIGNATURE, { person });
      const renewed = await mockCertificate(setupA, CertificateType.JPKI_CARD_DIGITAL_SIGNATURE, { person, userId: first.user!.id });
      const one = await verifyB.verify({ certificate: first.der, ...signed(first.privateKeyPem), identifyUser: true });
      const two = await verifyB.verify({ certificate: first.der, ...signed(first.privateKeyPem), identifyUser: true });
      expect(one.verification!.certificateId).not.toBe(first.certificate!.id);
      expect(two.verification!.certificateId).toBe(one.verification!.certificateId);
      expect([one.verification!.isNewUser, two.verification!.isNewUser]).toEqual([true, false]);
      expect(two.verification!.userId).toBe(one.verification!.userId);
      // The renewed certificate is new to B, but the mock says whose it is.
      const three = await verifyB.verify({ certificate: renewed.der, ...signed(renewed.privateKeyPem), identifyUser: true });
      expect(three.verification!.certificateId).not.toBe(one.verification!.certificateId);
      expect({ user: three.verification!.userId, isNew: three.verification!.isNewUser }).toEqual({ user: one.verification!.userId, isNew: false });
      // The user's latest certificate is what CheckUserCertificateStatus checks.
      const latest = await setupB.certificates.checkUserCertificateStatus({ userId: one.verification!.userId });
      expect([one.verification!.certificateId, three.verification!.certificateId]).toContain(latest.certificate!.id);
    });

    it("another account's verification, certificate or user answers exactly like an unknown id", async () => {
      const created = await mockCertificate(setupA);
      const mine = await verifyA.verify({ certificate: created.der, ...signed(created.privateKeyPem), identifyUser: true });
      const unknown = "00000000-0000-4000-8000-000000000000";
      for (const id of [mine.verification!.id, unknown]) {
        const get = await expectRpcError(verifyB.getVerification({ verificationId: id }), Code.NotFound, "ERROR_REASON_VERIFICATION_NOT_FOUND");
        expect(get.rawMessage).toBe("no verification with this id");
        await expectRpcError(verifyB.deleteVerification({ verificationId: id }), Code.NotFound, "ERROR_REASON_VERIFICATION_NOT_FOUND");
      }
      for (const id of [created.certificate!.id, unknown]) {
        await expectRpcError(verifyB.listVerifications({ certificateId: id }), Code.NotFound, "ERROR_REASON_CERTIFICATE_NOT_FOUND");
        await expectRpcError(setupB.certificates.checkCertificateStatus({ certificateId: id }), Code.NotFound, "ERROR_REASON_CERTIFICATE_NOT_FOUND");
      }
      for (const id of [mine.verification!.userId, unknown]) {
        await expectRpcError(verifyB.listVerifications({ userId: id }), Code.NotFound, "ERROR_REASON_USER_NOT_FOUND");
      }
      // A's verification survives B's attempt to delete it.
      expect((await verifyA.getVerification({ verificationId: mine.verification!.id })).verification!.id).toBe(mine.verification!.id);
    });

    it("content is read back exactly as the mock CA wrote it, sealed at rest, never logged, and gone after DeleteVerification", async () => {
      const created = await mockCertificate(setupA, CertificateType.JPKI_CARD_DIGITAL_SIGNATURE, { person });
      const response = await verifyA.verify({ certificate: created.der, ...signed(created.privateKeyPem), identifyUser: true });
      const id = response.verification!.id;
      const fetched = await verifyA.getVerification({ verificationId: id });
      expect(fetched.certificateContent!.content).toEqual({ case: "jpkiCardDigitalSignature", value: person });
      expect(fetched.certificateStatus!.id).toBe(response.certificateStatus!.id);
      expect(timestampMs(fetched.verification!.createdAt!)).toBe(timestampMs(response.verification!.createdAt!));

      const row = await server.database.db.selectFrom("verifications").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
      expect(row.content_sealed).toMatch(/^v1\./);
      for (const fact of [person.name, person.address, person.dateOfBirth]) {
        expect(row.content_sealed).not.toContain(fact);
        expect(server.rawLogs()).not.toContain(fact);
      }
      const certificateRow = await server.database.db.selectFrom("certificates").selectAll().where("id", "=", created.certificate!.id).executeTakeFirstOrThrow();
      expect({ pem: certificateRow.certificate_pem, subject: certificateRow.subject }).toEqual({ pem: "", subject: "" });

      await verifyA.deleteVerification({ verificationId: id });
      await expectRpcError(verifyA.getVerification({ verificationId: id }), Code.NotFound, "ERROR_REASON_VERIFICATION_NOT_FOUND");
      expect(await server.database.db.selectFrom("verifications").selectAll().where("id", "=", id).executeTakeFirst()).toBeUndefined();
      // The certificate and its status record stay.
      const history = await setupA.certificates.listCertificateStatuses({ certificateId: created.certificate!.id });
      expect(history.certificateStatuses.map((s) => s.id)).toContain(response.certificateStatus!.id);
      await expectRpcError(verifyA.deleteVerification({ verificationId: id }), Code.NotFound, "ERROR_REASON_VERIFICATION_NOT_FOUND");
    });

    it("user authentication certificates carry no facts: content is the empty case of their type", async () => {
      const created = await mockCertificate(setupA, CertificateType.JPKI_MOBILE_USER_AUTHENTICATION);
      const response = await verifyA.verify({ certificate: created.der, ...signed(created.privateKeyPem) });
      expect(response.verification!.result).toBe(Result.OK);
      expect(response.certificateContent!.content.case).toBe("jpkiMobileUserAuthentication");
      expect((await verifyA.getVerification({ verificationId: response.verification!.id })).certificateContent).toBeUndefined();
      await expectRpcError(
        setupA.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_USER_AUTHENTICATION, person }),
        Code.InvalidArgument,
        "ERROR_REASON_INVALID_FIELD",
        "person",
      );
    });

    it("ListVerifications: newest first, by certificate or by user, in pages that walk every one once", async () => {
      const created = await mockCertificate(setupB);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        await new Promise((resolve) => setTimeout(resolve, 3));
        ids.push((await verifyB.verify({ certificate: created.der, ...signed(created.privateKeyPem), identifyUser: i % 2 === 0 })).verification!.id);
      }
      const newestFirst = [...ids].reverse();
      const all = await verifyB.listVerifications({ certificateId: created.certificate!.id, pageSize: 100 });
      expect(all.verifications.map((v) => v.id)).toEqual(newestFirst);
      const byUser = await verifyB.listVerifications({ userId: created.user!.id });
      expect(byUser.verifications.map((v) => v.id)).toEqual(newestFirst.filter((_, i) => (4 - i) % 2 === 0));

      const walked: string[] = [];
      let pageToken = "";
      do {
        const page = await verifyB.listVerifications({ certificateId: created.certificate!.id, pageSize: 2, pageToken });
        walked.push(...page.verifications.map((v) => v.id));
        pageToken = page.nextPageToken;
      } while (pageToken);
      expect(walked).toEqual(newestFirst);

      const first = await verifyB.listVerifications({ certificateId: created.certificate!.id, pageSize: 2 });
      await expectRpcError(verifyB.listVerifications({ pageToken: first.nextPageToken }), Code.InvalidArgument, "ERROR_REASON_INVALID_PAGE_TOKEN", "page_token");
      await expectRpcError(verifyB.listVerifications({ pageSize: 101 }), Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", "page_size");
      // Unfiltered: the account's own verifications only.
      const everything = await verifyB.listVerifications({ pageSize: 100 });
      expect(everything.verifications.every((v) => v.id)).toBe(true);
      const mineOnly = await server.database.db.selectFrom("verifications").select("id").where("account_id", "=", b.account.id).execute();
      expect(new Set(everything.verifications.map((v) => v.id))).toEqual(new Set(mineOnly.map((r) => r.id).slice(0, 100)));
    });

    it("CheckCertificateStatusByContent registers a trusted certificate once and checks it as a liveness check", async () => {
      const created = await mockCertificate(setupA);
      const before = await footprint(b.account.id);
      const first = await setupB.certificates.checkCertificateStatusByContent({ certificate: created.der, checkMethod: CheckMethod.OCSP });
      const second = await setupB.certificates.checkCertificateStatusByContent({ certificate: created.der });
      expect(first.certificate!.id).not.toBe(created.certificate!.id);
      expect(second.certificate!.id).toBe(first.certificate!.id);
      expect(first.certificate!.type).toBe(CertificateType.JPKI_CARD_DIGITAL_SIGNATURE);
      expect([first.certificateStatus!.checkMethod, second.certificateStatus!.checkMethod]).toEqual([CheckMethod.OCSP, CheckMethod.CRL]);
      expect(first.certificateStatus!.checkPurpose).toBe(CheckPurpose.LIVENESS_CHECK);
      expect(await footprint(b.account.id)).toEqual({ ...before, certificates: before.certificates + 1, users: before.users + 1, statuses: before.statuses + 2 });
      // Revoked in the mock (by the account that created it), revoked for every account: the CRL is the CA's.
      await setupA.mock.setMockCertificateStatus({ certificateId: created.certificate!.id, status: Status.REVOKED, revokedReason: CrlReason.KEY_COMPROMISE });
      const revoked = await setupB.certificates.checkCertificateStatus({ certificateId: first.certificate!.id });
      expect({ status: revoked.certificateStatus!.status, reason: revoked.certificateStatus!.revokedReason }).toEqual({ status: Status.REVOKED, reason: CrlReason.KEY_COMPROMISE });

      const stranger = selfSigned(dir, "stranger-by-content");
      const unchanged = await footprint(b.account.id);
      await expectRpcError(
        setupB.certificates.checkCertificateStatusByContent({ certificate: stranger.der }),
        Code.FailedPrecondition,
        "ERROR_REASON_UNSUPPORTED_CERTIFICATE",
        "certificate",
      );
      await expectRpcError(setupB.certificates.checkCertificateStatusByContent({ certificate: Buffer.from("x") }), Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", "certificate");
      expect(await footprint(b.account.id)).toEqual(unchanged);
    });

    it("JSON over HTTP uses the documented names", async () => {
      const created = await mockCertificate(setupA, CertificateType.JPKI_CARD_DIGITAL_SIGNATURE, { person });
      const s = signed(created.privateKeyPem);
      const body = JSON.stringify({
        certificate: created.der.toString("base64"),
        hashAlgorithm: "HASH_ALGORITHM_SHA256",
        digest: s.digest.toString("base64"),
        signature: s.signature.toString("base64"),
        identifyUser: true,
      });
      const reply = await postJson(server, "/service.verify.v2.VerificationService/Verify", body, a.token);
      expect(reply.status).toBe(200);
      const json = JSON.parse(reply.text) as { verification: Record<string, unknown>; certificateContent: Record<string, Record<string, unknown>> };
      expect(json.verification).toMatchObject({ result: "RESULT_OK", hashAlgorithm: "HASH_ALGORITHM_SHA256", certificateId: created.certificate!.id, userId: created.user!.id });
      expect(json.certificateContent.jpkiCardDigitalSignature).toEqual({
        name: person.name,
        nameSubstituteCharacters: person.nameSubstituteCharacters,
        dateOfBirth: person.dateOfBirth,
        gender: "GENDER_MALE",
        address: person.address,
        addressSubstituteCharacters: person.addressSubstituteCharacters,
      });
      const sha1 = await postJson(server, "/service.verify.v2.VerificationService/Verify", body.replace("HASH_ALGORITHM_SHA256", "HASH_ALGORITHM_SHA1"), a.token);
      expect(sha1.status).toBe(400);
    });
  });
}

describe("with storage of certificate content turned off", () => {
  it("Verify still answers with the content, but none is kept", async () => {
    const scratch = await targets[0]!.create();
    const server = await startTestServer(scratch.url, { mode: "mock", storeCertificateContent: "false" });
    try {
      const tenant = await createTenant(server, "no-retention");
      const setup = setupClients(server, tenant.token);
      const created = await setup.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE, person });
      const api = createClient(VerificationService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", interceptors: [bearer(tenant.token)] }));
      const response: VerifyResponse = await api.verify({
        certificate: pemToDer(created.certificatePem),
        hashAlgorithm: HashAlgorithm.SHA256,
        digest: signer.digest(document, "sha256"),
        signature: signer.sign(created.privateKeyPem, document, "sha256"),
      });
      expect(response.verification!.result).toBe(Result.OK);
      expect(response.certificateContent!.content).toEqual({ case: "jpkiCardDigitalSignature", value: person });
      expect((await api.getVerification({ verificationId: response.verification!.id })).certificateContent).toBeUndefined();
      const row = await server.database.db.selectFrom("verifications").selectAll().where("id", "=", response.verification!.id).executeTakeFirstOrThrow();
      expect(row.content_sealed).toBeNull();
    } finally {
      await server.close();
      await scratch.drop();
    }
  });
});

describe("a bad trust anchors file stops start-up with a clear message", () => {
  it.each([
    ["a missing file", () => path.join(dir, "missing.json"), /trust anchors file .*missing\.json: cannot read it \(ENOENT\)/],
    ["invalid JSON", () => writeTemp("bad.json", "{"), /not valid JSON/],
    ["an unknown type", () => writeTemp("type.json", JSON.stringify({ anchors: [{ name: "x", certificates: "ca.pem", issues: [{ type: "passport", policyOid: "1.2.3" }] }] })), /anchors\.0\.issues\.0\.type/],
    [
      "a CRL URL that is not http, https or file",
      () => writeTemp("crl-url.json", JSON.stringify({ anchors: [{ name: "x", certificates: "ca.pem", issues: [{ type: "jpki_card_digital_signature", policyOid: "1.2.3" }], crlUrls: ["ldap://dir.example/cn=CRL"] }] })),
      /anchors\.0\.crlUrls\.0 must be absolute http:, https: or file: URLs/,
    ],
    [
      "an OCSP URL that is not http or https",
      () => writeTemp("ocsp-url.json", JSON.stringify({ anchors: [{ name: "x", certificates: "ca.pem", issues: [{ type: "jpki_card_digital_signature", policyOid: "1.2.3" }], ocspUrls: ["file:///srv/ocsp"] }] })),
      /anchors\.0\.ocspUrls\.0 must be absolute http: or https: URLs/,
    ],
    ["a bundle without certificates", () => (writeTemp("empty.pem", "nothing"), writeTemp("empty.json", JSON.stringify({ anchors: [{ name: "x", certificates: "empty.pem", issues: [{ type: "jpki_card_digital_signature", policyOid: "1.2.3" }] }] }))), /holds no PEM certificate/],
  ])("%s", async (_label, file, message) => {
    await expectStartUpFailure(file(), message);
  });

  it("a certificate that is not a CA", async () => {
    const leaf = productionCa.issue("not-a-ca", cardSignaturePolicy, "digitalSignature");
    writeTemp("leaf-bundle.pem", `-----BEGIN CERTIFICATE-----\n${leaf.der.toString("base64")}\n-----END CERTIFICATE-----\n`);
    const file = writeTemp("leaf.json", JSON.stringify({ anchors: [{ name: "leaf", certificates: "leaf-bundle.pem", issues: [{ type: "jpki_card_digital_signature", policyOid: "1.2.3" }] }] }));
    await expectStartUpFailure(file, /is not a CA certificate/);
  });
});

async function expectStartUpFailure(trustAnchorsFile: string, message: RegExp): Promise<void> {
  const outcome = await startTestServer("sqlite::memory:", { trustAnchorsFile }).then(
    async (server) => {
      await server.close();
      return undefined;
    },
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(Error);
  expect((outcome as Error).message).toMatch(message);
}

function writeTemp(name: string, content: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, content);
  return file;
}
