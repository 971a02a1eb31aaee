import { randomUUID } from "node:crypto";
import { timestampFromMs, timestampMs, type Timestamp } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { Http2SessionManager } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CertificateStatus_CheckMethod as CheckMethod,
  CertificateStatus_CheckPurpose as CheckPurpose,
  CertificateStatus_Status as Status,
  Certificate_Type as CertificateType,
  CrlReason,
  type Certificate,
  type CertificateStatus,
} from "../../gen/service/verify/v2/certificate_pb.ts";
import type { CreateMockCertificateResponse } from "../../gen/service/verify/v2/mock_service_pb.ts";
import {
  bearer,
  certificateServicePath,
  clients,
  countStatuses,
  createTenant,
  errorInfosOf,
  expectRpcError,
  mockServicePath,
  postJson,
  protocols,
  setupClients,
  sleep,
  statusRecords,
  uuidPattern,
  type Clients,
  type Tenant,
} from "../support/certificate-rpc.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { mockOf } from "../../src/app/mock/installed-mock.ts";

const targets = await databaseTargets();

/** RFC 3339 with fractional seconds, as the spec shows createdAt. */
const fractionalTime = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/;

const ms = (t: Timestamp | undefined): number => {
  expect(t).toBeDefined();
  return timestampMs(t!);
};

/** The certificate in a response is the one MockService created, field for field. */
function expectSameCertificate(actual: Certificate | undefined, created: CreateMockCertificateResponse): void {
  expect(actual).toBeDefined();
  expect({ id: actual!.id, type: actual!.type, createdAt: ms(actual!.createdAt) }).toEqual({
    id: created.certificate!.id,
    type: created.certificate!.type,
    createdAt: ms(created.certificate!.createdAt),
  });
}

/** A status record written by a check of a mock certificate whose state is "good" by default. */
function expectGoodRecord(status: CertificateStatus | undefined, method: CheckMethod, before: number, after: number): void {
  expect(status).toBeDefined();
  const s = status!;
  expect(s.id).toMatch(uuidPattern);
  expect(s.status).toBe(Status.GOOD);
  expect(s.checkMethod).toBe(method);
  expect(s.checkPurpose).toBe(CheckPurpose.LIVENESS_CHECK);
  // Through the real sources: the mock CRL's thisUpdate or the OCSP producedAt (whole seconds, not after the check), no longer a start-of-day default.
  expect(ms(s.sourceUpdatedAt) % 1000).toBe(0);
  expect(ms(s.sourceUpdatedAt)).toBeLessThanOrEqual(after);
  // Same clock as the server; a creation time on a whole second is moved by 1 ms.
  expect(ms(s.createdAt)).toBeGreaterThanOrEqual(before);
  expect(ms(s.createdAt)).toBeLessThanOrEqual(after + 1);
  expect(ms(s.createdAt) % 1000).not.toBe(0);
  expect(s.revokedAt).toBeUndefined();
  expect(s.revokedReason).toBeUndefined();
}

/** The same record, compared on every field. */
function recordView(s: CertificateStatus | undefined) {
  expect(s).toBeDefined();
  return {
    id: s!.id,
    status: s!.status,
    checkMethod: s!.checkMethod,
    checkPurpose: s!.checkPurpose,
    sourceUpdatedAt: s!.sourceUpdatedAt && timestampMs(s!.sourceUpdatedAt),
    createdAt: s!.createdAt && timestampMs(s!.createdAt),
    revokedAt: s!.revokedAt && timestampMs(s!.revokedAt),
    revokedReason: s!.revokedReason,
  };
}

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let scratch: ScratchDatabase;
    let server: TestServer;
    let h2: Http2SessionManager;
    let a: Tenant;
    let b: Tenant;
    let setupA: Clients;

    beforeAll(async () => {
      scratch = await target.create();
      server = await startTestServer(scratch.url, { mode: "mock" });
      h2 = new Http2SessionManager(server.url);
      a = await createTenant(server, "tenant-a");
      b = await createTenant(server, "tenant-b");
      setupA = setupClients(server, a.token);
    });

    afterAll(async () => {
      h2?.abort();
      await server?.close();
      await scratch?.drop();
    });

    for (const protocol of protocols) {
      describe(protocol.name, () => {
        let api: Clients;
        /** Two certificates of one user, created one after the other: card signature, then mobile user authentication. */
        let older: CreateMockCertificateResponse;
        let newer: CreateMockCertificateResponse;
        /** A certificate of another user of the same account, to revoke. */
        let revocable: CreateMockCertificateResponse;

        beforeAll(async () => {
          api = clients(protocol.transport(server.url, [bearer(a.token)], h2));
          [older, revocable] = await Promise.all([
            setupA.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE }),
            setupA.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_USER_AUTHENTICATION, commonName: "Revocable" }),
          ]);
          newer = await setupA.mock.createMockCertificate({ type: CertificateType.JPKI_MOBILE_USER_AUTHENTICATION, userId: older.user!.id });
          expect(newer.user!.id).toBe(older.user!.id);
          expect(revocable.user!.id).not.toBe(older.user!.id);
          expect(ms(newer.certificate!.createdAt)).toBeGreaterThan(ms(older.certificate!.createdAt));
        });

        it("CheckCertificateStatus: a new mock certificate is good (CRL, liveness check) and the check writes one record", async () => {
          const count = await countStatuses(server, a.account.id);
          const before = Date.now();
          const response = await api.certificates.checkCertificateStatus({ certificateId: older.certificate!.id });
          const after = Date.now();

          expectSameCertificate(response.certificate, older);
          expectGoodRecord(response.certificateStatus, CheckMethod.CRL, before, after);
          expect(await countStatuses(server, a.account.id)).toBe(count + 1);
          // The record written is the one returned.
          const stored = (await statusRecords(server, a.account.id, older.certificate!.id))[0]!;
          expect(stored).toMatchObject({
            id: response.certificateStatus!.id,
            accountId: a.account.id,
            certificateId: older.certificate!.id,
            status: "good",
            checkMethod: "crl",
            checkPurpose: "liveness_check",
            sourceUpdatedAt: ms(response.certificateStatus!.sourceUpdatedAt),
            createdAt: ms(response.certificateStatus!.createdAt),
            revokedAt: null,
            revokedReason: null,
          });
        });

        it("CheckCertificateStatus: checkMethod OCSP is recorded as OCSP", async () => {
          const count = await countStatuses(server, a.account.id);
          const before = Date.now();
          const response = await api.certificates.checkCertificateStatus({
            certificateId: older.certificate!.id,
            checkMethod: CheckMethod.OCSP,
          });
          const after = Date.now();
          expectGoodRecord(response.certificateStatus, CheckMethod.OCSP, before, after);
          expect(await countStatuses(server, a.account.id)).toBe(count + 1);
        });

        it("CheckCertificateStatus: revoked for key compromise, with the revocation and source times set, exactly", async () => {
          // Whole seconds: CRLs and OCSP carry no fraction, so the mock state keeps none (see docs, mock environment).
          const revokedAt = Date.UTC(2026, 0, 15, 8, 30, 12, 0);
          const sourceUpdatedAt = Date.UTC(2026, 0, 16, 0, 0, 0, 0);
          const set = await api.mock.setMockCertificateStatus({
            certificateId: revocable.certificate!.id,
            status: Status.REVOKED,
            revokedReason: CrlReason.KEY_COMPROMISE,
            revokedAt: timestampFromMs(revokedAt),
            sourceUpdatedAt: timestampFromMs(sourceUpdatedAt),
          });
          expect({
            certificateId: set.certificateId,
            status: set.status,
            revokedReason: set.revokedReason,
            revokedAt: ms(set.revokedAt),
            sourceUpdatedAt: ms(set.sourceUpdatedAt),
          }).toEqual({
            certificateId: revocable.certificate!.id,
            status: Status.REVOKED,
            revokedReason: CrlReason.KEY_COMPROMISE,
            revokedAt,
            sourceUpdatedAt,
          });

          const count = await countStatuses(server, a.account.id);
          const response = await api.certificates.checkCertificateStatus({ certificateId: revocable.certificate!.id });
          expectSameCertificate(response.certificate, revocable);
          const s = response.certificateStatus!;
          expect(s.status).toBe(Status.REVOKED);
          expect(s.checkMethod).toBe(CheckMethod.CRL);
          expect(s.checkPurpose).toBe(CheckPurpose.LIVENESS_CHECK);
          expect(s.revokedReason).toBe(CrlReason.KEY_COMPROMISE);
          // Exactly, to the nanosecond.
          expect(s.revokedAt).toMatchObject({ seconds: BigInt(Math.floor(revokedAt / 1000)), nanos: 0 });
          expect(s.sourceUpdatedAt).toMatchObject({ seconds: BigInt(sourceUpdatedAt / 1000), nanos: 0 });
          expect(await countStatuses(server, a.account.id)).toBe(count + 1);

          // The record keeps what was reported.
          const fetched = await api.certificates.getCertificateStatus({ certificateStatusId: s.id });
          expect(recordView(fetched.certificateStatus)).toEqual(recordView(s));
        });

        it("CheckUserCertificateStatus: the user's latest certificate, or the latest of a type", async () => {
          const count = await countStatuses(server, a.account.id);
          const before = Date.now();
          const latest = await api.certificates.checkUserCertificateStatus({ userId: older.user!.id });
          const after = Date.now();
          expect({ id: latest.user!.id, createdAt: ms(latest.user!.createdAt) }).toEqual({
            id: older.user!.id,
            createdAt: ms(older.user!.createdAt),
          });
          expectSameCertificate(latest.certificate, newer);
          expectGoodRecord(latest.certificateStatus, CheckMethod.CRL, before, after);

          const ofType = await api.certificates.checkUserCertificateStatus({
            userId: older.user!.id,
            certificateType: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE,
            checkMethod: CheckMethod.OCSP,
          });
          expect(ofType.user!.id).toBe(older.user!.id);
          expectSameCertificate(ofType.certificate, older);
          expect(ofType.certificateStatus!.checkMethod).toBe(CheckMethod.OCSP);
          expect(await countStatuses(server, a.account.id)).toBe(count + 2);

          // A type the user has no certificate of is not_found, and writes nothing.
          await expectRpcError(
            api.certificates.checkUserCertificateStatus({
              userId: older.user!.id,
              certificateType: CertificateType.JPKI_MOBILE_DIGITAL_SIGNATURE,
            }),
            Code.NotFound,
            "ERROR_REASON_USER_NOT_FOUND",
          );
          expect(await countStatuses(server, a.account.id)).toBe(count + 2);
        });

        it("GetCertificate: the certificate and its user, without writing", async () => {
          const count = await countStatuses(server, a.account.id);
          const response = await api.certificates.getCertificate({ certificateId: newer.certificate!.id });
          expectSameCertificate(response.certificate, newer);
          expect({ id: response.user!.id, createdAt: ms(response.user!.createdAt) }).toEqual({
            id: older.user!.id,
            createdAt: ms(older.user!.createdAt),
          });
          expect(await countStatuses(server, a.account.id)).toBe(count);
        });

        it("ListCertificateStatuses: newest first; pages of 2 walk every record exactly once", async () => {
          const id = newer.certificate!.id;
          const existing = (await api.certificates.listCertificateStatuses({ certificateId: id, pageSize: 100 })).certificateStatuses.map((s) => s.id);
          const checked: string[] = [];
          for (let i = 0; i < 5; i++) {
            // Distinct creation milliseconds, so "newest first" is the reverse of the order of the checks.
            await sleep(3);
            const r = await api.certificates.checkCertificateStatus({ certificateId: id, checkMethod: i % 2 ? CheckMethod.OCSP : CheckMethod.CRL });
            checked.push(r.certificateStatus!.id);
          }
          const expected = [...checked.reverse(), ...existing];
          expect(expected.length).toBeGreaterThanOrEqual(5);
          const count = await countStatuses(server, a.account.id);

          const all = await api.certificates.listCertificateStatuses({ certificateId: id, pageSize: 100 });
          expect(all.certificateStatuses.map((s) => s.id)).toEqual(expected);
          expect(all.nextPageToken).toBe("");
          const times = all.certificateStatuses.map((s) => ms(s.createdAt));
          expect(times).toEqual([...times].sort((x, y) => y - x));
          // Records of other certificates never appear.
          expect(new Set(all.certificateStatuses.map((s) => s.id)).size).toBe(expected.length);

          const walked: string[] = [];
          const pageSizes: number[] = [];
          let pageToken = "";
          for (let page = 0; page < 50; page++) {
            const r = await api.certificates.listCertificateStatuses({ certificateId: id, pageSize: 2, pageToken });
            pageSizes.push(r.certificateStatuses.length);
            walked.push(...r.certificateStatuses.map((s) => s.id));
            pageToken = r.nextPageToken;
            if (!pageToken) break;
          }
          expect(walked).toEqual(expected);
          expect(pageSizes).toEqual(Array.from({ length: Math.ceil(expected.length / 2) }, (_, i) => (i * 2 + 2 <= expected.length ? 2 : 1)));

          // pageSize 0 means 20: everything here fits on one page.
          const defaults = await api.certificates.listCertificateStatuses({ certificateId: id });
          expect(defaults.certificateStatuses.map((s) => s.id)).toEqual(expected);
          expect(defaults.nextPageToken).toBe("");
          // Listing writes nothing.
          expect(await countStatuses(server, a.account.id)).toBe(count);
        });

        it("ListCertificateStatuses: a page token that is not from this listing is invalid_argument INVALID_PAGE_TOKEN", async () => {
          await api.certificates.checkCertificateStatus({ certificateId: older.certificate!.id });
          await api.certificates.checkCertificateStatus({ certificateId: older.certificate!.id });
          const first = await api.certificates.listCertificateStatuses({ certificateId: older.certificate!.id, pageSize: 1 });
          expect(first.nextPageToken).not.toBe("");
          // The token continues its own listing...
          const second = await api.certificates.listCertificateStatuses({
            certificateId: older.certificate!.id,
            pageSize: 1,
            pageToken: first.nextPageToken,
          });
          expect(second.certificateStatuses).toHaveLength(1);
          expect(second.certificateStatuses[0]!.id).not.toBe(first.certificateStatuses[0]!.id);
          // ...but not another certificate's.
          await expectRpcError(
            api.certificates.listCertificateStatuses({ certificateId: newer.certificate!.id, pageSize: 1, pageToken: first.nextPageToken }),
            Code.InvalidArgument,
            "ERROR_REASON_INVALID_PAGE_TOKEN",
            "page_token",
          );
          for (const pageToken of ["not-a-page-token", "eyJ4IjoxfQ", "%%%"]) {
            await expectRpcError(
              api.certificates.listCertificateStatuses({ certificateId: older.certificate!.id, pageToken }),
              Code.InvalidArgument,
              "ERROR_REASON_INVALID_PAGE_TOKEN",
              "page_token",
            );
          }
        });

        it("GetCertificateStatus: one record and its certificate, without writing", async () => {
          const checked = await api.certificates.checkCertificateStatus({ certificateId: older.certificate!.id, checkMethod: CheckMethod.OCSP });
          const count = await countStatuses(server, a.account.id);
          const response = await api.certificates.getCertificateStatus({ certificateStatusId: checked.certificateStatus!.id });
          expectSameCertificate(response.certificate, older);
          expect(recordView(response.certificateStatus)).toEqual(recordView(checked.certificateStatus));
          // Ids are accepted in any case.
          const upper = await api.certificates.getCertificateStatus({ certificateStatusId: checked.certificateStatus!.id.toUpperCase() });
          expect(upper.certificateStatus!.id).toBe(checked.certificateStatus!.id);
          expect(await countStatuses(server, a.account.id)).toBe(count);
        });

        it("another account's token sees none of it: not_found, nothing written", async () => {
          const asB = clients(protocol.transport(server.url, [bearer(b.token)], h2));
          const status = (await api.certificates.checkCertificateStatus({ certificateId: older.certificate!.id })).certificateStatus!;
          const countA = await countStatuses(server, a.account.id);
          await expectRpcError(asB.certificates.checkCertificateStatus({ certificateId: older.certificate!.id }), Code.NotFound, "ERROR_REASON_CERTIFICATE_NOT_FOUND");
          await expectRpcError(asB.certificates.checkUserCertificateStatus({ userId: older.user!.id }), Code.NotFound, "ERROR_REASON_USER_NOT_FOUND");
          await expectRpcError(asB.certificates.getCertificate({ certificateId: older.certificate!.id }), Code.NotFound, "ERROR_REASON_CERTIFICATE_NOT_FOUND");
          await expectRpcError(asB.certificates.listCertificateStatuses({ certificateId: older.certificate!.id }), Code.NotFound, "ERROR_REASON_CERTIFICATE_NOT_FOUND");
          await expectRpcError(asB.certificates.getCertificateStatus({ certificateStatusId: status.id }), Code.NotFound, "ERROR_REASON_CERTIFICATE_STATUS_NOT_FOUND");
          await expectRpcError(
            asB.mock.setMockCertificateStatus({ certificateId: older.certificate!.id, status: Status.REVOKED }),
            Code.NotFound,
            "ERROR_REASON_CERTIFICATE_NOT_FOUND",
          );
          expect(await countStatuses(server, a.account.id)).toBe(countA);
          expect(await countStatuses(server, b.account.id)).toBe(0);
        });
      });
    }

    describe("plain JSON over HTTP/1.1, as curl sends it", () => {
      let good: CreateMockCertificateResponse;
      let revoked: CreateMockCertificateResponse;
      const check = (body: string, token = a.token) => postJson(server, `${certificateServicePath}/CheckCertificateStatus`, body, token);

      beforeAll(async () => {
        [good, revoked] = await Promise.all([
          setupA.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE }),
          setupA.mock.createMockCertificate({ type: CertificateType.JPKI_MOBILE_DIGITAL_SIGNATURE }),
        ]);
      });

      it("good certificate: exactly the documented keys and values", async () => {
        const count = await countStatuses(server, a.account.id);
        const before = Date.now();
        const reply = await check(JSON.stringify({ certificateId: good.certificate!.id }));
        const after = Date.now();
        expect(reply.status).toBe(200);
        expect(reply.contentType).toBe("application/json");
        const body = JSON.parse(reply.text) as Record<string, Record<string, string>>;
        expect(Object.keys(body).sort()).toEqual(["certificate", "certificateStatus"]);

        const certificate = body.certificate!;
        expect(Object.keys(certificate).sort()).toEqual(["createdAt", "id", "type"]);
        expect(certificate.id).toBe(good.certificate!.id);
        expect(certificate.type).toBe("TYPE_JPKI_CARD_DIGITAL_SIGNATURE");
        expect(certificate.createdAt).toMatch(fractionalTime);
        expect(Date.parse(certificate.createdAt!)).toBe(ms(good.certificate!.createdAt));

        const status = body.certificateStatus!;
        expect(Object.keys(status).sort()).toEqual(["checkMethod", "checkPurpose", "createdAt", "id", "sourceUpdatedAt", "status"]);
        expect(status.id).toMatch(uuidPattern);
        expect(status.status).toBe("STATUS_GOOD");
        expect(status.checkMethod).toBe("CHECK_METHOD_CRL");
        expect(status.checkPurpose).toBe("CHECK_PURPOSE_LIVENESS_CHECK");
        expect(status.createdAt).toMatch(fractionalTime);
        expect(Date.parse(status.createdAt!)).toBeGreaterThanOrEqual(before);
        expect(Date.parse(status.createdAt!)).toBeLessThanOrEqual(after + 1);
        // The mock CRL's thisUpdate (real sources: no start-of-day default), a whole second as protobuf JSON writes it.
        expect(status.sourceUpdatedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
        expect(Date.parse(status.sourceUpdatedAt!)).toBeLessThanOrEqual(after);
        expect(await countStatuses(server, a.account.id)).toBe(count + 1);
      });

      it('"checkMethod": "CHECK_METHOD_OCSP" writes a record with CHECK_METHOD_OCSP', async () => {
        const count = await countStatuses(server, a.account.id);
        const reply = await check(JSON.stringify({ certificateId: good.certificate!.id, checkMethod: "CHECK_METHOD_OCSP" }));
        expect(reply.status).toBe(200);
        const body = JSON.parse(reply.text) as { certificateStatus: Record<string, string> };
        expect(body.certificateStatus.checkMethod).toBe("CHECK_METHOD_OCSP");
        expect(body.certificateStatus.status).toBe("STATUS_GOOD");
        expect(await countStatuses(server, a.account.id)).toBe(count + 1);
        const stored = (await statusRecords(server, a.account.id, good.certificate!.id))[0]!;
        expect({ id: stored.id, checkMethod: stored.checkMethod }).toEqual({ id: body.certificateStatus.id, checkMethod: "ocsp" });
      });

      it("an upper-case certificate id is the same certificate", async () => {
        const reply = await check(JSON.stringify({ certificateId: good.certificate!.id.toUpperCase() }));
        expect(reply.status).toBe(200);
        expect((JSON.parse(reply.text) as { certificate: { id: string } }).certificate.id).toBe(good.certificate!.id);
      });

      it("revoked for key compromise: the spec's example shape, times exactly as set", async () => {
        await setupA.mock.setMockCertificateStatus({
          certificateId: revoked.certificate!.id,
          status: Status.REVOKED,
          revokedReason: CrlReason.KEY_COMPROMISE,
          // Whole seconds: CRLs and OCSP carry no fraction.
          revokedAt: timestampFromMs(Date.parse("2026-11-22T04:31:08Z")),
          sourceUpdatedAt: timestampFromMs(Date.parse("2026-11-22T00:00:00Z")),
        });
        const count = await countStatuses(server, a.account.id);
        const reply = await check(JSON.stringify({ certificateId: revoked.certificate!.id }));
        expect(reply.status).toBe(200);
        const body = JSON.parse(reply.text) as Record<string, Record<string, string>>;
        expect(Object.keys(body).sort()).toEqual(["certificate", "certificateStatus"]);
        expect(Object.keys(body.certificate!).sort()).toEqual(["createdAt", "id", "type"]);
        expect(body.certificate!.type).toBe("TYPE_JPKI_MOBILE_DIGITAL_SIGNATURE");
        const status = body.certificateStatus!;
        expect(Object.keys(status).sort()).toEqual([
          "checkMethod", "checkPurpose", "createdAt", "id", "revokedAt", "revokedReason", "sourceUpdatedAt", "status",
        ]);
        expect(status).toMatchObject({
          status: "STATUS_REVOKED",
          checkMethod: "CHECK_METHOD_CRL",
          checkPurpose: "CHECK_PURPOSE_LIVENESS_CHECK",
          sourceUpdatedAt: "2026-11-22T00:00:00Z",
          revokedAt: "2026-11-22T04:31:08Z",
          revokedReason: "CRL_REASON_KEY_COMPROMISE",
        });
        expect(status.createdAt).toMatch(fractionalTime);
        expect(await countStatuses(server, a.account.id)).toBe(count + 1);
      });

      it('revoked with reason CRL_REASON_UNSPECIFIED, set explicitly or not at all: "revokedReason" is still present', async () => {
        for (const reason of [CrlReason.UNSPECIFIED, undefined]) {
          // Whole seconds: CRLs and OCSP carry no fraction.
          const revokedAt = Date.parse("2026-10-01T12:00:00Z");
          const set = await setupA.mock.setMockCertificateStatus({
            certificateId: revoked.certificate!.id,
            status: Status.REVOKED,
            ...(reason === undefined ? {} : { revokedReason: reason }),
            revokedAt: timestampFromMs(revokedAt),
          });
          expect(set.revokedReason).toBe(CrlReason.UNSPECIFIED);
          const count = await countStatuses(server, a.account.id);
          const reply = await check(JSON.stringify({ certificateId: revoked.certificate!.id }));
          expect(reply.status).toBe(200);
          expect(reply.text).toContain('"revokedReason":"CRL_REASON_UNSPECIFIED"');
          const status = (JSON.parse(reply.text) as { certificateStatus: Record<string, string> }).certificateStatus;
          expect(Object.keys(status).sort()).toEqual([
            "checkMethod", "checkPurpose", "createdAt", "id", "revokedAt", "revokedReason", "sourceUpdatedAt", "status",
          ]);
          expect(status).toMatchObject({ status: "STATUS_REVOKED", revokedAt: "2026-10-01T12:00:00Z", revokedReason: "CRL_REASON_UNSPECIFIED" });
          expect(await countStatuses(server, a.account.id)).toBe(count + 1);
        }
      });

      it("revoked without a revocation time: revokedAt defaults to when the status was set", async () => {
        const before = Date.now();
        await setupA.mock.setMockCertificateStatus({ certificateId: revoked.certificate!.id, status: Status.REVOKED });
        const after = Date.now();
        const reply = await check(JSON.stringify({ certificateId: revoked.certificate!.id }));
        const status = (JSON.parse(reply.text) as { certificateStatus: Record<string, string> }).certificateStatus;
        expect(status.revokedReason).toBe("CRL_REASON_UNSPECIFIED");
        // Truncated to the second, as a CRL entry carries it.
        expect(Date.parse(status.revokedAt!)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
        expect(Date.parse(status.revokedAt!)).toBeLessThanOrEqual(after);
      });

      it("set back to good: no revokedAt or revokedReason", async () => {
        await setupA.mock.setMockCertificateStatus({ certificateId: revoked.certificate!.id, status: Status.GOOD });
        const reply = await check(JSON.stringify({ certificateId: revoked.certificate!.id }));
        const status = (JSON.parse(reply.text) as { certificateStatus: Record<string, string> }).certificateStatus;
        expect(Object.keys(status).sort()).toEqual(["checkMethod", "checkPurpose", "createdAt", "id", "sourceUpdatedAt", "status"]);
        expect(status.status).toBe("STATUS_GOOD");
      });

      it("GetCertificate, ListCertificateStatuses and GetCertificateStatus answer the documented JSON", async () => {
        // Two records of its own, so that a page of one has a next page.
        for (let i = 0; i < 2; i++) expect((await check(JSON.stringify({ certificateId: good.certificate!.id }))).status).toBe(200);
        const cert = await postJson(server, `${certificateServicePath}/GetCertificate`, JSON.stringify({ certificateId: good.certificate!.id }), a.token);
        expect(cert.status).toBe(200);
        const certBody = JSON.parse(cert.text) as Record<string, Record<string, string>>;
        expect(Object.keys(certBody).sort()).toEqual(["certificate", "user"]);
        expect(Object.keys(certBody.user!).sort()).toEqual(["createdAt", "id"]);
        expect(certBody.user!.id).toBe(good.user!.id);
        expect(certBody.user!.createdAt).toMatch(fractionalTime);

        const list = await postJson(
          server,
          `${certificateServicePath}/ListCertificateStatuses`,
          JSON.stringify({ certificateId: good.certificate!.id, pageSize: 1 }),
          a.token,
        );
        expect(list.status).toBe(200);
        const listBody = JSON.parse(list.text) as { certificateStatuses: Record<string, string>[]; nextPageToken: string };
        expect(Object.keys(listBody).sort()).toEqual(["certificateStatuses", "nextPageToken"]);
        expect(listBody.certificateStatuses).toHaveLength(1);
        expect(listBody.nextPageToken).toMatch(/^[A-Za-z0-9_-]+$/);

        const one = await postJson(
          server,
          `${certificateServicePath}/GetCertificateStatus`,
          JSON.stringify({ certificateStatusId: listBody.certificateStatuses[0]!.id }),
          a.token,
        );
        expect(one.status).toBe(200);
        const oneBody = JSON.parse(one.text) as Record<string, unknown>;
        expect(Object.keys(oneBody).sort()).toEqual(["certificate", "certificateStatus"]);
        expect(oneBody.certificateStatus).toEqual(listBody.certificateStatuses[0]);
      });
    });

    describe("tenant isolation", () => {
      let owned: CreateMockCertificateResponse;
      let statusId: string;

      beforeAll(async () => {
        owned = await setupA.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_USER_AUTHENTICATION });
        statusId = (await setupA.certificates.checkCertificateStatus({ certificateId: owned.certificate!.id })).certificateStatus!.id;
      });

      const cases: { rpc: string; body: (id: string) => object; idOf: () => string; reason: string }[] = [
        { rpc: `${certificateServicePath}/CheckCertificateStatus`, body: (id) => ({ certificateId: id }), idOf: () => owned.certificate!.id, reason: "ERROR_REASON_CERTIFICATE_NOT_FOUND" },
        { rpc: `${certificateServicePath}/CheckCertificateStatus`, body: (id) => ({ certificateId: id, checkMethod: "CHECK_METHOD_OCSP" }), idOf: () => owned.certificate!.id, reason: "ERROR_REASON_CERTIFICATE_NOT_FOUND" },
        { rpc: `${certificateServicePath}/CheckUserCertificateStatus`, body: (id) => ({ userId: id }), idOf: () => owned.user!.id, reason: "ERROR_REASON_USER_NOT_FOUND" },
        { rpc: `${certificateServicePath}/GetCertificate`, body: (id) => ({ certificateId: id }), idOf: () => owned.certificate!.id, reason: "ERROR_REASON_CERTIFICATE_NOT_FOUND" },
        { rpc: `${certificateServicePath}/ListCertificateStatuses`, body: (id) => ({ certificateId: id }), idOf: () => owned.certificate!.id, reason: "ERROR_REASON_CERTIFICATE_NOT_FOUND" },
        { rpc: `${certificateServicePath}/GetCertificateStatus`, body: (id) => ({ certificateStatusId: id }), idOf: () => statusId, reason: "ERROR_REASON_CERTIFICATE_STATUS_NOT_FOUND" },
        { rpc: `${mockServicePath}/SetMockCertificateStatus`, body: (id) => ({ certificateId: id, status: "STATUS_REVOKED" }), idOf: () => owned.certificate!.id, reason: "ERROR_REASON_CERTIFICATE_NOT_FOUND" },
        {
          rpc: `${mockServicePath}/CreateMockCertificate`,
          body: (id) => ({ type: "TYPE_JPKI_CARD_DIGITAL_SIGNATURE", userId: id }),
          idOf: () => owned.user!.id,
          reason: "ERROR_REASON_USER_NOT_FOUND",
        },
      ];

      for (const c of cases) {
        it(`${c.rpc.split(".").at(-1)} ${JSON.stringify(c.body("<id>"))}: another account's id answers byte for byte like an unknown one`, async () => {
          const countA = await countStatuses(server, a.account.id);
          const certificatesA = (await mockOf(server.domain).listCertificates(a.account.id)).length;

          const foreign = await postJson(server, c.rpc, JSON.stringify(c.body(c.idOf())), b.token);
          const unknown = await postJson(server, c.rpc, JSON.stringify(c.body(randomUUID())), b.token);
          expect(foreign.status).toBe(404);
          expect(foreign.contentType).toBe("application/json");
          expect(foreign.text).toBe(unknown.text);
          const body = JSON.parse(foreign.text) as { code: string; message: string; details?: { type: string; value: string }[] };
          expect(body.code).toBe("not_found");
          expect(body.message).not.toContain(c.idOf());
          expect(errorInfosOf(body).map((i) => ({ reason: i.reason, domain: i.domain, metadata: i.metadata }))).toEqual([
            { reason: c.reason, domain: "verify.shomei", metadata: {} },
          ]);

          // B's calls changed nothing of A's: no records, no certificates, no mock state.
          expect(await countStatuses(server, a.account.id)).toBe(countA);
          expect((await mockOf(server.domain).listCertificates(a.account.id)).length).toBe(certificatesA);
          expect(await mockOf(server.domain).currentStatus(owned.certificate!.id)).toBe("good");

          // The owner's id in the hands of the owner does exist (so the test compares what it means to).
          const own = await postJson(server, c.rpc, JSON.stringify(c.body(c.idOf())), a.token);
          expect(own.status).toBe(200);
          // A check records its answer; a mock change records the registered certificate's new status as its
          // new list is installed (the list's change is what events are made from, docs/events.md).
          const ownWrites = ["/CheckCertificateStatus", "/CheckUserCertificateStatus", "/SetMockCertificateStatus"].some((rpc) => c.rpc.endsWith(rpc)) ? 1 : 0;

          expect(await countStatuses(server, a.account.id)).toBe(countA + ownWrites);
          const createdByOwn = c.rpc.endsWith("/CreateMockCertificate") ? 1 : 0;
          expect((await mockOf(server.domain).listCertificates(a.account.id)).length).toBe(certificatesA + createdByOwn);
          // And B never got anything of its own either.
          expect(await countStatuses(server, b.account.id)).toBe(0);
          expect(await mockOf(server.domain).listCertificates(b.account.id)).toEqual([]);
          if (c.rpc.endsWith("/SetMockCertificateStatus")) {
            await setupA.mock.setMockCertificateStatus({ certificateId: owned.certificate!.id, status: Status.GOOD });
          }
        });
      }
    });
  });
}
