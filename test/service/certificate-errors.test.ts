import { randomUUID } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.ts";
import {
  CertificateStatus_CheckMethod as CheckMethod,
  CertificateStatus_Status as Status,
  Certificate_Type as CertificateType,
  CrlReason,
} from "../../gen/service/verify/v2/certificate_pb.ts";
import { CheckCertificateStatusRequestSchema } from "../../gen/service/verify/v2/certificate_service_pb.ts";
import type { CreateMockCertificateResponse } from "../../gen/service/verify/v2/mock_service_pb.ts";
import { Mode, ServerInfoService } from "../../gen/service/verify/v2/server_info_pb.ts";
import {
  certificateServicePath,
  clients,
  countStatuses,
  createTenant,
  errorInfosOf,
  expectRpcError,
  mockServicePath,
  post,
  postJson,
  setupClients,
  stackTracePattern,
  type Clients,
  type Tenant,
} from "../support/certificate-rpc.ts";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { mockOf } from "../../src/app/mock/installed-mock.ts";

const sqlite = (await databaseTargets()).find((t) => t.name === "sqlite")!;
const maxBodyBytes = 4096;

/** Connect binary over HTTP/1.1 with the Authorization header given verbatim (or none). */
function withAuthorization(server: TestServer, authorization: string | undefined): Clients {
  const transport = createConnectTransport({
    baseUrl: server.url,
    httpVersion: "1.1",
    useBinaryFormat: true,
    interceptors: [
      (next) => (req) => {
        if (authorization !== undefined) req.header.set("Authorization", authorization);
        return next(req);
      },
    ],
  });
  return clients(transport);
}

describe("certificate service errors (sqlite, mock mode)", () => {
  let scratch: ScratchDatabase;
  let server: TestServer;
  let acme: Tenant;
  let other: Tenant;
  let api: Clients;
  let cert: CreateMockCertificateResponse;
  let otherCert: CreateMockCertificateResponse;

  beforeAll(async () => {
    scratch = await sqlite.create();
    server = await startTestServer(scratch.url, { mode: "mock", maxBodyBytes });
    acme = await createTenant(server, "acme");
    other = await createTenant(server, "other");
    api = setupClients(server, acme.token);
    [cert, otherCert] = await Promise.all([
      api.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE }),
      setupClients(server, other.token).mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE }),
    ]);
  });

  afterAll(async () => {
    await server?.close();
    await scratch?.drop();
  });

  /** Runs a failing call and checks that no status record appeared for any account. */
  async function writesNothing(work: () => Promise<unknown>): Promise<void> {
    const before = [await countStatuses(server, acme.account.id), await countStatuses(server, other.account.id)];
    await work();
    expect([await countStatuses(server, acme.account.id), await countStatuses(server, other.account.id)]).toEqual(before);
  }

  describe("invalid_argument INVALID_FIELD, naming the field", () => {
    it("missing certificateId", async () => {
      await writesNothing(async () => {
        await expectRpcError(api.certificates.checkCertificateStatus({}), Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", "certificate_id");
        await expectRpcError(api.certificates.getCertificate({}), Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", "certificate_id");
        await expectRpcError(api.certificates.listCertificateStatuses({}), Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", "certificate_id");
        await expectRpcError(api.mock.setMockCertificateStatus({ status: Status.GOOD }), Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", "certificate_id");
      });
    });

    it("a certificateId that is not a UUID", async () => {
      await writesNothing(async () => {
        for (const certificateId of ["abc", `${cert.certificate!.id}x`, cert.certificate!.id.replace(/-/g, ""), ` ${cert.certificate!.id}`]) {
          await expectRpcError(api.certificates.checkCertificateStatus({ certificateId }), Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", "certificate_id");
        }
        await expectRpcError(api.certificates.getCertificate({ certificateId: "abc" }), Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", "certificate_id");
        await expectRpcError(api.certificates.listCertificateStatuses({ certificateId: "abc" }), Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", "certificate_id");
      });
    });

    it("missing or malformed userId and certificateStatusId", async () => {
      await writesNothing(async () => {
        await expectRpcError(api.certificates.checkUserCertificateStatus({}), Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", "user_id");
        await expectRpcError(api.certificates.checkUserCertificateStatus({ userId: "nobody" }), Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", "user_id");
        await expectRpcError(api.certificates.getCertificateStatus({}), Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", "certificate_status_id");
        await expectRpcError(
          api.certificates.getCertificateStatus({ certificateStatusId: "1" }),
          Code.InvalidArgument,
          "ERROR_REASON_INVALID_FIELD",
          "certificate_status_id",
        );
      });
    });

    it("a certificateType outside the enum, a pageSize outside 0–100", async () => {
      await writesNothing(async () => {
        await expectRpcError(
          api.certificates.checkUserCertificateStatus({ userId: cert.user!.id, certificateType: 99 as CertificateType }),
          Code.InvalidArgument,
          "ERROR_REASON_INVALID_FIELD",
          "certificate_type",
        );
        for (const pageSize of [101, -1]) {
          await expectRpcError(
            api.certificates.listCertificateStatuses({ certificateId: cert.certificate!.id, pageSize }),
            Code.InvalidArgument,
            "ERROR_REASON_INVALID_FIELD",
            "page_size",
          );
        }
      });
    });
  });

  describe("invalid_argument CHECK_METHOD_UNSUPPORTED", () => {
    it("check_method 99 over the binary protocol", async () => {
      await writesNothing(async () => {
        await expectRpcError(
          api.certificates.checkCertificateStatus({ certificateId: cert.certificate!.id, checkMethod: 99 as CheckMethod }),
          Code.InvalidArgument,
          "ERROR_REASON_CHECK_METHOD_UNSUPPORTED",
          "check_method",
        );
        await expectRpcError(
          api.certificates.checkUserCertificateStatus({ userId: cert.user!.id, checkMethod: 99 as CheckMethod }),
          Code.InvalidArgument,
          "ERROR_REASON_CHECK_METHOD_UNSUPPORTED",
          "check_method",
        );
      });
    });

    it("check_method 99 as a JSON number", async () => {
      await writesNothing(async () => {
        const reply = await postJson(
          server,
          `${certificateServicePath}/CheckCertificateStatus`,
          JSON.stringify({ certificateId: cert.certificate!.id, checkMethod: 99 }),
          acme.token,
        );
        expect(reply.status).toBe(400);
        const body = JSON.parse(reply.text) as { code: string; details?: { type: string; value: string }[] };
        expect(body.code).toBe("invalid_argument");
        expect(errorInfosOf(body).map((i) => [i.reason, i.metadata])).toEqual([["ERROR_REASON_CHECK_METHOD_UNSUPPORTED", { field: "check_method" }]]);
      });
    });
  });

  it("invalid_argument INVALID_PAGE_TOKEN: a page token not from this listing", async () => {
    await expectRpcError(
      api.certificates.listCertificateStatuses({ certificateId: cert.certificate!.id, pageToken: "bm90IGEgdG9rZW4" }),
      Code.InvalidArgument,
      "ERROR_REASON_INVALID_PAGE_TOKEN",
      "page_token",
    );
  });

  describe("failed_precondition CHECK_METHOD_UNSUPPORTED: a method the certificate's source does not offer", () => {
    let crlOnly: CreateMockCertificateResponse;

    beforeAll(async () => {
      crlOnly = await api.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_USER_AUTHENTICATION });
      const set = await api.mock.setMockCertificateStatus({
        certificateId: crlOnly.certificate!.id,
        status: Status.GOOD,
        offeredCheckMethods: [CheckMethod.CRL],
      });
      expect(set.offeredCheckMethods).toEqual([CheckMethod.CRL]);
    });

    it("asking for OCSP of a certificate whose source offers only CRL, by certificate and by user; nothing written", async () => {
      await writesNothing(async () => {
        for (const call of [
          () => api.certificates.checkCertificateStatus({ certificateId: crlOnly.certificate!.id, checkMethod: CheckMethod.OCSP }),
          () => api.certificates.checkUserCertificateStatus({ userId: crlOnly.user!.id, checkMethod: CheckMethod.OCSP }),
        ]) {
          const error = await call().then(
            () => undefined,
            (e: unknown) => ConnectError.from(e),
          );
          expect(error?.code).toBe(Code.FailedPrecondition);
          expect(error?.rawMessage).toContain("does not offer OCSP; it offers CRL");
          expect(error?.findDetails(ErrorInfoSchema).map((i) => [i.reason, i.domain, i.metadata])).toEqual([
            ["ERROR_REASON_CHECK_METHOD_UNSUPPORTED", "verify.shomei", { field: "check_method" }],
          ]);
        }
      });
    });

    it("the offered method, or no preference, answers with CRL", async () => {
      const preferred = await api.certificates.checkCertificateStatus({ certificateId: crlOnly.certificate!.id, checkMethod: CheckMethod.CRL });
      const chosen = await api.certificates.checkCertificateStatus({ certificateId: crlOnly.certificate!.id });
      expect([preferred.certificateStatus!.checkMethod, chosen.certificateStatus!.checkMethod]).toEqual([CheckMethod.CRL, CheckMethod.CRL]);
    });

    it("a certificate whose source offers only OCSP answers OCSP when the caller has no preference", async () => {
      const ocspOnly = await api.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_USER_AUTHENTICATION });
      await api.mock.setMockCertificateStatus({ certificateId: ocspOnly.certificate!.id, status: Status.GOOD, offeredCheckMethods: [CheckMethod.OCSP] });
      const answer = await api.certificates.checkCertificateStatus({ certificateId: ocspOnly.certificate!.id });
      expect(answer.certificateStatus!.checkMethod).toBe(CheckMethod.OCSP);
    });

    it("offered_check_methods with UNSPECIFIED is invalid_argument naming the field", async () => {
      await expectRpcError(
        api.mock.setMockCertificateStatus({ certificateId: crlOnly.certificate!.id, status: Status.GOOD, offeredCheckMethods: [CheckMethod.UNSPECIFIED] }),
        Code.InvalidArgument,
        "ERROR_REASON_INVALID_FIELD",
        "offered_check_methods",
      );
    });
  });

  describe("not_found", () => {
    it("an unknown certificate, user or status record", async () => {
      await writesNothing(async () => {
        const unknown = randomUUID();
        await expectRpcError(api.certificates.checkCertificateStatus({ certificateId: unknown }), Code.NotFound, "ERROR_REASON_CERTIFICATE_NOT_FOUND");
        await expectRpcError(api.certificates.getCertificate({ certificateId: unknown }), Code.NotFound, "ERROR_REASON_CERTIFICATE_NOT_FOUND");
        await expectRpcError(api.certificates.listCertificateStatuses({ certificateId: unknown }), Code.NotFound, "ERROR_REASON_CERTIFICATE_NOT_FOUND");
        await expectRpcError(api.certificates.checkUserCertificateStatus({ userId: unknown }), Code.NotFound, "ERROR_REASON_USER_NOT_FOUND");
        await expectRpcError(api.certificates.getCertificateStatus({ certificateStatusId: unknown }), Code.NotFound, "ERROR_REASON_CERTIFICATE_STATUS_NOT_FOUND");
        await expectRpcError(
          api.mock.setMockCertificateStatus({ certificateId: unknown, status: Status.REVOKED }),
          Code.NotFound,
          "ERROR_REASON_CERTIFICATE_NOT_FOUND",
        );
      });
    });

    it("another account's certificate answers exactly like an unknown one", async () => {
      await writesNothing(async () => {
        const foreign = await expectRpcError(
          api.certificates.checkCertificateStatus({ certificateId: otherCert.certificate!.id }),
          Code.NotFound,
          "ERROR_REASON_CERTIFICATE_NOT_FOUND",
        );
        const unknown = await expectRpcError(api.certificates.checkCertificateStatus({ certificateId: randomUUID() }), Code.NotFound, "ERROR_REASON_CERTIFICATE_NOT_FOUND");
        expect(foreign.rawMessage).toBe(unknown.rawMessage);
      });
    });
  });

  describe("unauthenticated and permission_denied", () => {
    const call = (clientsFor: Clients) => clientsFor.certificates.checkCertificateStatus({ certificateId: cert.certificate!.id });

    it("no Authorization header: TOKEN_MISSING, on both services", async () => {
      await writesNothing(async () => {
        const anonymous = withAuthorization(server, undefined);
        await expectRpcError(call(anonymous), Code.Unauthenticated, "ERROR_REASON_TOKEN_MISSING");
        await expectRpcError(anonymous.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE }), Code.Unauthenticated, "ERROR_REASON_TOKEN_MISSING");
        // ServerInfoService needs no token.
        const info = await createClient(ServerInfoService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" })).getServerInfo({});
        expect(info.mode).toBe(Mode.MOCK);
      });
    });

    for (const authorization of ["Token x", "Bearer", "Bearer a b", "Basic YWNtZTpzZWNyZXQ=", "Bearer\tshm_000000000000_x"]) {
      it(`Authorization: ${JSON.stringify(authorization)} is TOKEN_MALFORMED`, async () => {
        await writesNothing(() => expectRpcError(call(withAuthorization(server, authorization)), Code.Unauthenticated, "ERROR_REASON_TOKEN_MALFORMED"));
      });
    }

    it("the scheme is case-insensitive: lowercase bearer with a valid token works", async () => {
      for (const scheme of ["bearer", "BEARER"]) {
        const before = await countStatuses(server, acme.account.id);
        const response = await call(withAuthorization(server, `${scheme} ${acme.token}`));
        expect(response.certificate!.id).toBe(cert.certificate!.id);
        expect(await countStatuses(server, acme.account.id)).toBe(before + 1);
      }
    });

    it("an unknown token is TOKEN_INVALID", async () => {
      // Well-formed but never issued; a known prefix with a wrong secret; not a shomei token at all.
      const wrongSecret = acme.token.slice(0, 17) + (acme.token[17] === "A" ? "B" : "A") + acme.token.slice(18);
      for (const token of [`shm_0123456789ab_${"A".repeat(43)}`, wrongSecret, "not-a-token"]) {
        await writesNothing(() => expectRpcError(call(withAuthorization(server, `Bearer ${token}`)), Code.Unauthenticated, "ERROR_REASON_TOKEN_INVALID"));
      }
    });

    it("a revoked token is TOKEN_INVALID", async () => {
      const { token, summary } = await server.domain.accounts.createToken("acme", "to be revoked");
      const holder = withAuthorization(server, `Bearer ${token}`);
      expect((await call(holder)).certificate!.id).toBe(cert.certificate!.id);
      await server.domain.accounts.revokeToken(summary.prefix);
      await writesNothing(() => expectRpcError(call(holder), Code.Unauthenticated, "ERROR_REASON_TOKEN_INVALID"));
      // The account's other tokens still work.
      expect((await call(withAuthorization(server, `Bearer ${acme.token}`))).certificate!.id).toBe(cert.certificate!.id);
    });

    it("an account whose API use has not been started: permission_denied API_USE_NOT_STARTED", async () => {
      const account = await server.domain.accounts.create("newcomer");
      expect(account.apiStatus).toBe("not_started");
      const { token } = await server.domain.accounts.createToken("newcomer", "early");
      const newcomer = withAuthorization(server, `Bearer ${token}`);
      await writesNothing(async () => {
        await expectRpcError(call(newcomer), Code.PermissionDenied, "ERROR_REASON_API_USE_NOT_STARTED");
        await expectRpcError(newcomer.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE }), Code.PermissionDenied, "ERROR_REASON_API_USE_NOT_STARTED");
      });
      expect(await mockOf(server.domain).listCertificates(account.id)).toEqual([]);
    });

    it("a suspended account: permission_denied API_USE_SUSPENDED", async () => {
      const paused = await createTenant(server, "paused");
      const holder = withAuthorization(server, `Bearer ${paused.token}`);
      const own = await holder.mock.createMockCertificate({ type: CertificateType.JPKI_MOBILE_DIGITAL_SIGNATURE });
      await server.domain.accounts.setApiStatus("paused", "suspended");
      await writesNothing(async () => {
        await expectRpcError(
          holder.certificates.checkCertificateStatus({ certificateId: own.certificate!.id }),
          Code.PermissionDenied,
          "ERROR_REASON_API_USE_SUSPENDED",
        );
        expect(await countStatuses(server, paused.account.id)).toBe(0);
      });
      // Started again, the same token works.
      await server.domain.accounts.setApiStatus("paused", "active");
      expect((await holder.certificates.checkCertificateStatus({ certificateId: own.certificate!.id })).certificate!.id).toBe(own.certificate!.id);
    });
  });

  describe("MockService request errors", () => {
    it("SetMockCertificateStatus without a status, or with revocation fields on STATUS_GOOD, names the field", async () => {
      const id = cert.certificate!.id;
      await expectRpcError(api.mock.setMockCertificateStatus({ certificateId: id }), Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", "status");
      await expectRpcError(
        api.mock.setMockCertificateStatus({ certificateId: id, status: Status.UNSPECIFIED }),
        Code.InvalidArgument,
        "ERROR_REASON_INVALID_FIELD",
        "status",
      );
      await expectRpcError(
        api.mock.setMockCertificateStatus({ certificateId: id, status: Status.GOOD, revokedReason: CrlReason.KEY_COMPROMISE }),
        Code.InvalidArgument,
        "ERROR_REASON_INVALID_FIELD",
        "revoked_reason",
      );
      // Presence counts, not the value: an explicit CRL_REASON_UNSPECIFIED on a good status is refused too.
      await expectRpcError(
        api.mock.setMockCertificateStatus({ certificateId: id, status: Status.GOOD, revokedReason: CrlReason.UNSPECIFIED }),
        Code.InvalidArgument,
        "ERROR_REASON_INVALID_FIELD",
        "revoked_reason",
      );
      await expectRpcError(
        api.mock.setMockCertificateStatus({ certificateId: id, status: Status.GOOD, revokedAt: timestampFromMs(Date.UTC(2026, 0, 1)) }),
        Code.InvalidArgument,
        "ERROR_REASON_INVALID_FIELD",
        "revoked_at",
      );
      await expectRpcError(
        api.mock.setMockCertificateStatus({ certificateId: id, status: Status.REVOKED, revokedReason: 7 as CrlReason }),
        Code.InvalidArgument,
        "ERROR_REASON_INVALID_FIELD",
        "revoked_reason",
      );
      // None of them changed what checks report.
      expect(await mockOf(server.domain).currentStatus(id)).toBe("good");
    });

    it("CreateMockCertificate without a type, or with a foreign, unknown or malformed userId", async () => {
      const countCertificates = async () => (await mockOf(server.domain).listCertificates(acme.account.id)).length;
      const before = await countCertificates();
      await expectRpcError(api.mock.createMockCertificate({}), Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", "type");
      await expectRpcError(api.mock.createMockCertificate({ type: 99 as CertificateType }), Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", "type");
      await expectRpcError(
        api.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE, userId: otherCert.user!.id }),
        Code.NotFound,
        "ERROR_REASON_USER_NOT_FOUND",
      );
      await expectRpcError(
        api.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE, userId: randomUUID() }),
        Code.NotFound,
        "ERROR_REASON_USER_NOT_FOUND",
      );
      await expectRpcError(
        api.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE, userId: "someone" }),
        Code.InvalidArgument,
        "ERROR_REASON_INVALID_FIELD",
        "user_id",
      );
      await expectRpcError(
        api.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE, commonName: "x".repeat(65) }),
        Code.InvalidArgument,
        "ERROR_REASON_INVALID_FIELD",
        "common_name",
      );
      expect(await countCertificates()).toBe(before);
      expect((await mockOf(server.domain).listCertificates(other.account.id)).map((c) => c.id)).toEqual([otherCert.certificate!.id]);
    });
  });

  describe("bad input over plain HTTP: the right error, nothing written", () => {
    const procedure = `${certificateServicePath}/CheckCertificateStatus`;

    /** Sends, checks status and Connect code (and the ErrorInfo when the service, not the protocol, refused), and that nothing was written. */
    async function expectRefused(
      send: () => Promise<{ status: number; text: string; contentType: string | null }>,
      status: number,
      code: string | null,
      info?: { reason: string; field?: string } | null,
    ): Promise<void> {
      await writesNothing(async () => {
        const reply = await send();
        expect(reply.text).not.toMatch(stackTracePattern);
        expect(reply.status).toBe(status);
        if (code === null) return;
        expect(reply.contentType).toBe("application/json");
        const body = JSON.parse(reply.text) as { code: string; message?: string; details?: { type: string; value: string }[] };
        expect(body.code).toBe(code);
        const infos = errorInfosOf(body).map((i) => ({ reason: i.reason, metadata: i.metadata }));
        expect(infos).toEqual(info ? [{ reason: info.reason, metadata: info.field ? { field: info.field } : {} }] : []);
      });
    }

    it("an empty body", async () => {
      await expectRefused(() => postJson(server, procedure, "", acme.token), 400, "invalid_argument", null);
    });

    it("a body that is not JSON", async () => {
      await expectRefused(() => postJson(server, procedure, `{"certificateId": "${cert.certificate!.id}"`, acme.token), 400, "invalid_argument", null);
    });

    it("{} is a missing certificate_id", async () => {
      await expectRefused(() => postJson(server, procedure, "{}", acme.token), 400, "invalid_argument", {
        reason: "ERROR_REASON_INVALID_FIELD",
        field: "certificate_id",
      });
    });

    it("an unknown field, even next to a valid certificateId", async () => {
      await expectRefused(
        () => postJson(server, procedure, JSON.stringify({ certificateId: cert.certificate!.id, certificateType: "TYPE_JPKI_CARD_DIGITAL_SIGNATURE" }), acme.token),
        400,
        "invalid_argument",
        null,
      );
      await expectRefused(() => postJson(server, procedure, JSON.stringify({ certificate_id_: cert.certificate!.id }), acme.token), 400, "invalid_argument", null);
    });

    it('a field of the wrong type: {"certificateId": 5}', async () => {
      await expectRefused(() => postJson(server, procedure, '{"certificateId": 5}', acme.token), 400, "invalid_argument", null);
      await expectRefused(() => postJson(server, procedure, JSON.stringify({ certificateId: [cert.certificate!.id] }), acme.token), 400, "invalid_argument", null);
    });

    it("an unknown enum name", async () => {
      await expectRefused(
        () => postJson(server, procedure, JSON.stringify({ certificateId: cert.certificate!.id, checkMethod: "CHECK_METHOD_CARRIER_PIGEON" }), acme.token),
        400,
        "invalid_argument",
        null,
      );
    });

    it("a body over maxBodyBytes is resource_exhausted", async () => {
      const padding = "x".repeat(maxBodyBytes * 4);
      const body = JSON.stringify({ certificateId: cert.certificate!.id, padding });
      expect(Buffer.byteLength(body)).toBeGreaterThan(maxBodyBytes);
      await expectRefused(() => postJson(server, procedure, body, acme.token), 429, "resource_exhausted", null);
      // The same over the binary protocol: a valid request padded with an unknown field.
      const binary = toBinary(CheckCertificateStatusRequestSchema, create(CheckCertificateStatusRequestSchema, { certificateId: cert.certificate!.id }));
      const unknownField = Buffer.concat([Buffer.from([0x7a, 0x80, 0x40]), Buffer.alloc(0x2000, 1)]); // field 15, length-delimited, 8192 bytes
      await expectRefused(
        () =>
          post(server.url + procedure, Buffer.concat([binary, unknownField]), {
            "Content-Type": "application/proto",
            Authorization: `Bearer ${acme.token}`,
          }),
        429,
        null,
      );
    });

    it("Content-Type: text/plain is 415", async () => {
      await expectRefused(
        () => postJson(server, procedure, JSON.stringify({ certificateId: cert.certificate!.id }), acme.token, { "Content-Type": "text/plain" }),
        415,
        null,
      );
    });

    it("errors of the service itself carry no stack trace either", async () => {
      for (const [path, body, token] of [
        [procedure, JSON.stringify({ certificateId: randomUUID() }), acme.token],
        [procedure, JSON.stringify({ certificateId: "nope" }), acme.token],
        [procedure, JSON.stringify({ certificateId: randomUUID() }), undefined],
        [`${mockServicePath}/CreateMockCertificate`, "{}", acme.token],
        [`${mockServicePath}/SetMockCertificateStatus`, JSON.stringify({ certificateId: cert.certificate!.id, status: "STATUS_UNKNOWN", revokedReason: "CRL_REASON_SUPERSEDED" }), acme.token],
      ] as const) {
        const reply = await postJson(server, path, body, token);
        expect(reply.status).toBeGreaterThanOrEqual(400);
        expect(reply.text).not.toMatch(stackTracePattern);
        expect(reply.text).not.toMatch(/^\s+at /m);
      }
    });
  });
});

describe("production mode (sqlite)", () => {
  let scratch: ScratchDatabase;
  let production: TestServer | undefined;
  let acme: Tenant;
  let cert: CreateMockCertificateResponse;

  beforeAll(async () => {
    scratch = await sqlite.create();
    // A mock-mode server stores a certificate (revoked, in the mock state), then goes away.
    const mock = await startTestServer(scratch.url, { mode: "mock" });
    try {
      acme = await createTenant(mock, "acme");
      const api = setupClients(mock, acme.token);
      cert = await api.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE });
      await api.mock.setMockCertificateStatus({ certificateId: cert.certificate!.id, status: Status.REVOKED, revokedReason: CrlReason.KEY_COMPROMISE });
      expect((await api.certificates.checkCertificateStatus({ certificateId: cert.certificate!.id })).certificateStatus!.status).toBe(Status.REVOKED);
    } finally {
      await mock.close();
    }
    production = await startTestServer(scratch.url, { mode: "production" });
  });

  afterAll(async () => {
    await production?.close();
    await scratch?.drop();
  });

  it("says it runs in production mode", async () => {
    const info = await createClient(ServerInfoService, createConnectTransport({ baseUrl: production!.url, httpVersion: "1.1" })).getServerInfo({});
    expect(info.mode).toBe(Mode.PRODUCTION);
  });

  it("MockService answers unimplemented MOCK_ENVIRONMENT_DISABLED", async () => {
    const api = setupClients(production!, acme.token);
    await expectRpcError(
      api.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE }),
      Code.Unimplemented,
      "ERROR_REASON_MOCK_ENVIRONMENT_DISABLED",
    );
    await expectRpcError(
      api.mock.setMockCertificateStatus({ certificateId: cert.certificate!.id, status: Status.GOOD }),
      Code.Unimplemented,
      "ERROR_REASON_MOCK_ENVIRONMENT_DISABLED",
    );
    // Still behind authentication: without a token the caller learns nothing about the mode.
    await expectRpcError(
      withAuthorization(production!, undefined).mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE }),
      Code.Unauthenticated,
      "ERROR_REASON_TOKEN_MISSING",
    );
    // Over plain HTTP: 501 with the reason.
    const reply = await postJson(production!, `${mockServicePath}/CreateMockCertificate`, '{"type":"TYPE_JPKI_CARD_DIGITAL_SIGNATURE"}', acme.token);
    expect(reply.status).toBe(501);
    const body = JSON.parse(reply.text) as { code: string; details?: { type: string; value: string }[] };
    expect(body.code).toBe("unimplemented");
    expect(errorInfosOf(body).map((i) => i.reason)).toEqual(["ERROR_REASON_MOCK_ENVIRONMENT_DISABLED"]);
  });

  it("a certificate of the mock CA has no source: unavailable SOURCE_UNAVAILABLE, never the mock's status, nothing written", async () => {
    const api = setupClients(production!, acme.token);
    const before = await countStatuses(production!, acme.account.id);
    expect(before).toBe(1);
    await expectRpcError(
      api.certificates.checkCertificateStatus({ certificateId: cert.certificate!.id }),
      Code.Unavailable,
      "ERROR_REASON_SOURCE_UNAVAILABLE",
    );
    await expectRpcError(
      api.certificates.checkCertificateStatus({ certificateId: cert.certificate!.id, checkMethod: CheckMethod.OCSP }),
      Code.Unavailable,
      "ERROR_REASON_SOURCE_UNAVAILABLE",
    );
    await expectRpcError(api.certificates.checkUserCertificateStatus({ userId: cert.user!.id }), Code.Unavailable, "ERROR_REASON_SOURCE_UNAVAILABLE");
    const reply = await postJson(production!, `${certificateServicePath}/CheckCertificateStatus`, JSON.stringify({ certificateId: cert.certificate!.id }), acme.token);
    expect(reply.status).toBe(503);
    expect(reply.text).not.toContain("STATUS_");
    expect(await countStatuses(production!, acme.account.id)).toBe(before);
    // What was stored stays readable: the certificate and the record the mock server wrote.
    expect((await api.certificates.getCertificate({ certificateId: cert.certificate!.id })).certificate!.id).toBe(cert.certificate!.id);
    const history = await api.certificates.listCertificateStatuses({ certificateId: cert.certificate!.id });
    expect(history.certificateStatuses.map((s) => s.status)).toEqual([Status.REVOKED]);
  });
});

describe("unavailable without a reason: the database is gone (sqlite)", () => {
  let scratch: ScratchDatabase;
  let server: TestServer | undefined;

  afterAll(async () => {
    await server?.close();
    await scratch?.drop();
  });

  it("answers unavailable with no ErrorInfo and no internals", async () => {
    scratch = await sqlite.create();
    server = await startTestServer(scratch.url, { mode: "mock" });
    const acme = await createTenant(server, "acme");
    const api = setupClients(server, acme.token);
    await server.database.close();
    const error = await expectRpcError(api.certificates.checkCertificateStatus({ certificateId: randomUUID() }), Code.Unavailable, null);
    expect(error.rawMessage).toBe("the service is temporarily unavailable, retry later");
    const reply = await postJson(server, `${certificateServicePath}/GetCertificate`, JSON.stringify({ certificateId: randomUUID() }), acme.token);
    expect(reply.status).toBe(503);
    expect(JSON.parse(reply.text)).toEqual({ code: "unavailable", message: "the service is temporarily unavailable, retry later" });
    expect(ConnectError.from(error).details).toEqual([]);
  });
});
