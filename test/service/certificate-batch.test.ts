import { randomUUID } from "node:crypto";
import { timestampMs, type Timestamp } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { Http2SessionManager } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CertificateStatus_CheckMethod as CheckMethod,
  CertificateStatus_CheckPurpose as CheckPurpose,
  CertificateStatus_Status as Status,
  Certificate_Type as CertificateType,
  CrlReason,
  type CertificateStatus,
} from "../../gen/service/verify/v2/certificate_pb.ts";
import type { BatchCheckError } from "../../gen/service/verify/v2/certificate_service_pb.ts";
import { ErrorReason } from "../../gen/service/verify/v2/errors_pb.ts";
import type { CreateMockCertificateResponse } from "../../gen/service/verify/v2/mock_service_pb.ts";
import { newId } from "../../src/domain/ids.ts";
import { CertificatesRepository } from "../../src/storage/certificates-repository.ts";
import {
  bearer,
  certificateServicePath,
  clients,
  countStatuses,
  createTenant,
  errorInfosOf,
  expectRpcError,
  postJson,
  protocols,
  setupClients,
  type Clients,
  type Tenant,
} from "../support/certificate-rpc.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const targets = await databaseTargets();

const ms = (t: Timestamp | undefined): number => {
  expect(t).toBeDefined();
  return timestampMs(t!);
};

/** What a batch item says, compactly: the status name of a result, or its error as data. */
function outcome(item: { certificate?: { id: string }; certificateStatus?: CertificateStatus; error?: BatchCheckError }) {
  if (item.error) {
    expect(item.certificate).toBeUndefined();
    expect(item.certificateStatus).toBeUndefined();
    return { code: item.error.code, message: item.error.message, reason: ErrorReason[item.error.reason] };
  }
  expect(item.certificateStatus!.checkPurpose).toBe(CheckPurpose.LIVENESS_CHECK);
  return { certificate: item.certificate!.id, status: Status[item.certificateStatus!.status], method: CheckMethod[item.certificateStatus!.checkMethod] };
}

const notFound = { code: "not_found", message: "no certificate with this id", reason: "CERTIFICATE_NOT_FOUND" };
const userNotFound = { code: "not_found", message: "no user with this id", reason: "USER_NOT_FOUND" };
const unavailable = {
  code: "unavailable",
  message: "no revocation source is available for this certificate's issuer",
  reason: "SOURCE_UNAVAILABLE",
};
const malformed = (field: string, index: number, problem = "must be a UUID") => ({
  code: "invalid_argument",
  message: `${field}[${index}] ${problem}`,
  reason: "INVALID_FIELD",
});

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let scratch: ScratchDatabase;
    let server: TestServer;
    let h2: Http2SessionManager;
    let a: Tenant;
    let b: Tenant;
    let setupA: Clients;
    /** User 1: a card signature certificate, then a newer mobile user-authentication one. */
    let good: CreateMockCertificateResponse;
    let newer: CreateMockCertificateResponse;
    /** User 2: revoked for key compromise. */
    let revoked: CreateMockCertificateResponse;
    /** User 3: its source offers CRL only. */
    let crlOnly: CreateMockCertificateResponse;
    /** Tenant b's certificate and user. */
    let foreign: CreateMockCertificateResponse;
    /** A certificate no revocation source covers (as a verified one from an unconfigured issuer would be). */
    let unsourcedId: string;

    const batchUrl = `${certificateServicePath}/BatchCheckCertificateStatus`;

    beforeAll(async () => {
      scratch = await target.create();
      server = await startTestServer(scratch.url, { mode: "mock" });
      h2 = new Http2SessionManager(server.url);
      a = await createTenant(server, "tenant-a");
      b = await createTenant(server, "tenant-b");
      setupA = setupClients(server, a.token);
      [good, revoked, crlOnly, foreign] = await Promise.all([
        setupA.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE }),
        setupA.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_USER_AUTHENTICATION }),
        setupA.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE }),
        setupClients(server, b.token).mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE }),
      ]);
      newer = await setupA.mock.createMockCertificate({ type: CertificateType.JPKI_MOBILE_USER_AUTHENTICATION, userId: good.user!.id });
      expect(ms(newer.certificate!.createdAt)).toBeGreaterThan(ms(good.certificate!.createdAt));
      await setupA.mock.setMockCertificateStatus({
        certificateId: revoked.certificate!.id,
        status: Status.REVOKED,
        revokedReason: CrlReason.KEY_COMPROMISE,
      });
      await setupA.mock.setMockCertificateStatus({
        certificateId: crlOnly.certificate!.id,
        status: Status.GOOD,
        offeredCheckMethods: [CheckMethod.CRL],
      });
      const repository = new CertificatesRepository(server.database);
      const row = (await repository.findCertificate(a.account.id, good.certificate!.id))!;
      const user = { id: newId(), accountId: a.account.id, createdAt: row.createdAt };
      await repository.insertUser(user);
      unsourcedId = newId();
      await repository.insertCertificate({ ...row, id: unsourcedId, userId: user.id, origin: "verified", fingerprintSha256: "f".repeat(64), trustAnchor: null });
    }, 60_000);

    afterAll(async () => {
      h2?.abort();
      await server?.close();
      await scratch?.drop();
    });

    for (const protocol of protocols) {
      it(`${protocol.name}: mixed good, revoked, unknown, malformed, foreign and unsourced ids, answered in order, one record per success`, async () => {
        const api = clients(protocol.transport(server.url, [bearer(a.token)], h2));
        const g = good.certificate!.id;
        const countA = await countStatuses(server, a.account.id);
        const countB = await countStatuses(server, b.account.id);
        const ids = [g, revoked.certificate!.id, randomUUID(), "not-a-uuid", foreign.certificate!.id, g.toUpperCase(), "", unsourcedId, g];

        const response = await api.certificates.batchCheckCertificateStatus({ certificateIds: ids });

        // Each position answers for the id exactly as sent.
        expect(response.results.map((r) => r.certificateId)).toEqual(ids);
        const crl = { status: "GOOD", method: "CRL" };
        expect(response.results.map(outcome)).toEqual([
          { certificate: g, ...crl },
          { certificate: revoked.certificate!.id, status: "REVOKED", method: "CRL" },
          notFound,
          malformed("certificate_ids", 3),
          notFound, // another account's certificate answers exactly like an unknown one
          { certificate: g, ...crl },
          malformed("certificate_ids", 6, "is required"),
          unavailable,
          { certificate: g, ...crl },
        ]);
        expect(response.results[1]!.certificateStatus!.revokedReason).toBe(CrlReason.KEY_COMPROMISE);

        // One record per successful position, each its own, and they are the ones returned.
        expect(await countStatuses(server, a.account.id)).toBe(countA + 4);
        expect(await countStatuses(server, b.account.id)).toBe(countB);
        const goodIds = [0, 5, 8].map((i) => response.results[i]!.certificateStatus!.id);
        expect(new Set(goodIds).size).toBe(3);
        const goodHistory = await api.certificates.listCertificateStatuses({ certificateId: g, pageSize: 3 });
        expect(goodHistory.certificateStatuses.map((s) => s.id).sort()).toEqual([...goodIds].sort());
        const revokedHistory = await api.certificates.listCertificateStatuses({ certificateId: revoked.certificate!.id, pageSize: 1 });
        expect(revokedHistory.certificateStatuses[0]).toEqual(response.results[1]!.certificateStatus);
      });
    }

    it("checkMethod applies to every item; a certificate whose source does not offer it fails alone, as failed_precondition", async () => {
      const api = setupA;
      const count = await countStatuses(server, a.account.id);
      const response = await api.certificates.batchCheckCertificateStatus({
        certificateIds: [good.certificate!.id, crlOnly.certificate!.id, revoked.certificate!.id],
        checkMethod: CheckMethod.OCSP,
      });
      expect(response.results.map(outcome)).toEqual([
        { certificate: good.certificate!.id, status: "GOOD", method: "OCSP" },
        {
          code: "failed_precondition",
          message: "the revocation source of this certificate does not offer OCSP; it offers CRL",
          reason: "CHECK_METHOD_UNSUPPORTED",
        },
        { certificate: revoked.certificate!.id, status: "REVOKED", method: "OCSP" },
      ]);
      expect(await countStatuses(server, a.account.id)).toBe(count + 2);
    });

    it("1,000 ids are accepted and answered position by position; 1,001 and none are refused and write nothing", async () => {
      const api = setupA;
      const kinds = [good.certificate!.id, revoked.certificate!.id, "unknown", crlOnly.certificate!.id];
      const ids = Array.from({ length: 1000 }, (_, i) => (i % 4 === 2 ? randomUUID() : kinds[i % 4]!));
      const count = await countStatuses(server, a.account.id);

      const response = await api.certificates.batchCheckCertificateStatus({ certificateIds: ids });
      expect(response.results).toHaveLength(1000);
      expect(response.results.map((r) => r.certificateId)).toEqual(ids);
      expect(response.results.map((r) => (r.error ? r.error.code : Status[r.certificateStatus!.status]))).toEqual(
        ids.map((_, i) => ["GOOD", "REVOKED", "not_found", "GOOD"][i % 4]),
      );
      expect(new Set(response.results.filter((r) => !r.error).map((r) => r.certificateStatus!.id)).size).toBe(750);
      expect(await countStatuses(server, a.account.id)).toBe(count + 750);

      await expectRpcError(
        api.certificates.batchCheckCertificateStatus({ certificateIds: [...ids, good.certificate!.id] }),
        Code.InvalidArgument,
        "ERROR_REASON_INVALID_FIELD",
        "certificate_ids",
      ).then((e) => expect(e.rawMessage).toBe("certificate_ids holds 1001 ids; at most 1000 are allowed per call"));
      await expectRpcError(
        api.certificates.batchCheckCertificateStatus({ certificateIds: [] }),
        Code.InvalidArgument,
        "ERROR_REASON_INVALID_FIELD",
        "certificate_ids",
      ).then((e) => expect(e.rawMessage).toBe("certificate_ids must hold at least one id"));
      expect(await countStatuses(server, a.account.id)).toBe(count + 750);
    });

    it("refuses the whole call for an unknown check method or certificate type, and without a token", async () => {
      const count = await countStatuses(server, a.account.id);
      const ids = [good.certificate!.id];
      await expectRpcError(
        setupA.certificates.batchCheckCertificateStatus({ certificateIds: ids, checkMethod: 9 as CheckMethod }),
        Code.InvalidArgument,
        "ERROR_REASON_CHECK_METHOD_UNSUPPORTED",
        "check_method",
      );
      await expectRpcError(
        setupA.certificates.batchCheckUserCertificateStatus({ userIds: [good.user!.id], certificateType: 99 as CertificateType }),
        Code.InvalidArgument,
        "ERROR_REASON_INVALID_FIELD",
        "certificate_type",
      );
      const anonymous = clients(protocols[0]!.transport(server.url, [], h2));
      await expectRpcError(anonymous.certificates.batchCheckCertificateStatus({ certificateIds: ids }), Code.Unauthenticated, "ERROR_REASON_TOKEN_MISSING");
      expect(await countStatuses(server, a.account.id)).toBe(count);
    });

    it("BatchCheckUserCertificateStatus over gRPC: each user's latest certificate, or the latest of a type; bad users fail alone", async () => {
      const api = clients(protocols.find((p) => p.name.startsWith("gRPC over"))!.transport(server.url, [bearer(a.token)], h2));
      const u1 = good.user!.id;
      const u2 = revoked.user!.id;
      const count = await countStatuses(server, a.account.id);
      const ids = [u1, u2, randomUUID(), "x", foreign.user!.id, u1.toUpperCase()];

      const latest = await api.certificates.batchCheckUserCertificateStatus({ userIds: ids });
      expect(latest.results.map((r) => r.userId)).toEqual(ids);
      expect(latest.results.map((r) => (r.error ? outcome(r) : { user: r.user!.id, ...outcome(r) }))).toEqual([
        { user: u1, certificate: newer.certificate!.id, status: "GOOD", method: "CRL" },
        { user: u2, certificate: revoked.certificate!.id, status: "REVOKED", method: "CRL" },
        userNotFound,
        malformed("user_ids", 3),
        userNotFound,
        { user: u1, certificate: newer.certificate!.id, status: "GOOD", method: "CRL" },
      ]);
      expect(ms(latest.results[0]!.user!.createdAt)).toBe(ms(good.user!.createdAt));
      expect(await countStatuses(server, a.account.id)).toBe(count + 3);

      const ofType = await api.certificates.batchCheckUserCertificateStatus({
        userIds: [u1, u2],
        certificateType: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE,
        checkMethod: CheckMethod.OCSP,
      });
      expect(ofType.results.map(outcome)).toEqual([
        { certificate: good.certificate!.id, status: "GOOD", method: "OCSP" },
        { code: "not_found", message: "the user has no certificate of type jpki_card_digital_signature", reason: "USER_NOT_FOUND" },
      ]);
      const history = await api.certificates.listCertificateStatuses({ certificateId: good.certificate!.id, pageSize: 1 });
      expect(history.certificateStatuses[0]).toEqual(ofType.results[0]!.certificateStatus);
      expect(await countStatuses(server, a.account.id)).toBe(count + 4);
    });

    it("BatchCheckUserCertificateStatus: 1,000 user ids accepted, 1,001 and none refused", async () => {
      const count = await countStatuses(server, a.account.id);
      const ids = Array.from({ length: 1000 }, (_, i) => (i % 2 ? revoked.user!.id : randomUUID()));
      const response = await setupA.certificates.batchCheckUserCertificateStatus({ userIds: ids });
      expect(response.results.map((r) => r.userId)).toEqual(ids);
      expect(response.results.map((r) => r.error?.code ?? Status[r.certificateStatus!.status])).toEqual(
        ids.map((_, i) => (i % 2 ? "REVOKED" : "not_found")),
      );
      expect(await countStatuses(server, a.account.id)).toBe(count + 500);

      await expectRpcError(
        setupA.certificates.batchCheckUserCertificateStatus({ userIds: [...ids, randomUUID()] }),
        Code.InvalidArgument,
        "ERROR_REASON_INVALID_FIELD",
        "user_ids",
      ).then((e) => expect(e.rawMessage).toBe("user_ids holds 1001 ids; at most 1000 are allowed per call"));
      await expectRpcError(
        setupA.certificates.batchCheckUserCertificateStatus({ userIds: [] }),
        Code.InvalidArgument,
        "ERROR_REASON_INVALID_FIELD",
        "user_ids",
      ).then((e) => expect(e.rawMessage).toBe("user_ids must hold at least one id"));
      expect(await countStatuses(server, a.account.id)).toBe(count + 500);
    });

    describe("plain JSON, as curl sends it", () => {
      it("exactly the documented shape: results with certificateId and either certificate and certificateStatus, or error", async () => {
        const unknown = randomUUID();
        const reply = await postJson(server, batchUrl, JSON.stringify({ certificateIds: [good.certificate!.id, unknown] }), a.token);
        expect(reply.status).toBe(200);
        expect(reply.contentType).toBe("application/json");
        const body = JSON.parse(reply.text) as { results: Record<string, unknown>[] };
        expect(Object.keys(body)).toEqual(["results"]);
        expect(Object.keys(body.results[0]!).sort()).toEqual(["certificate", "certificateId", "certificateStatus"]);
        expect(body.results[0]!.certificateId).toBe(good.certificate!.id);
        expect(body.results[0]!.certificateStatus).toMatchObject({ status: "STATUS_GOOD", checkPurpose: "CHECK_PURPOSE_LIVENESS_CHECK" });
        expect(body.results[1]).toEqual({
          certificateId: unknown,
          error: { code: "not_found", message: "no certificate with this id", reason: "ERROR_REASON_CERTIFICATE_NOT_FOUND" },
        });
      });

      it("each per-item error is the code, message and reason the single call answers for the same id", async () => {
        const cases: { id: string; checkMethod?: string }[] = [
          { id: randomUUID() },
          { id: foreign.certificate!.id },
          { id: unsourcedId },
          { id: crlOnly.certificate!.id, checkMethod: "CHECK_METHOD_OCSP" },
        ];
        for (const c of cases) {
          const method = c.checkMethod ? { checkMethod: c.checkMethod } : {};
          const single = await postJson(server, `${certificateServicePath}/CheckCertificateStatus`, JSON.stringify({ certificateId: c.id, ...method }), a.token);
          const singleBody = JSON.parse(single.text) as { code: string; message: string; details?: { type: string; value: string }[] };
          const batch = await postJson(server, batchUrl, JSON.stringify({ certificateIds: [c.id], ...method }), a.token);
          const item = (JSON.parse(batch.text) as { results: { error: unknown }[] }).results[0]!;
          expect(item.error).toEqual({ code: singleBody.code, message: singleBody.message, reason: errorInfosOf(singleBody)[0]!.reason });
        }
      });

      it("a refused call is a Connect error with HTTP 400", async () => {
        const reply = await postJson(server, batchUrl, JSON.stringify({ certificateIds: [] }), a.token);
        expect(reply.status).toBe(400);
        const body = JSON.parse(reply.text) as { code: string; message: string; details?: { type: string; value: string }[] };
        expect({ code: body.code, message: body.message, reason: errorInfosOf(body)[0]!.reason }).toEqual({
          code: "invalid_argument",
          message: "certificate_ids must hold at least one id",
          reason: "ERROR_REASON_INVALID_FIELD",
        });
      });
    });
  });
}
