import { fromBinary, toBinary, create, type DescMessage } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Certificate_Type as CertificateType } from "../../gen/service/verify/v2/certificate_pb.ts";
import {
  CheckCertificateStatusRequestSchema,
  CheckCertificateStatusResponseSchema,
  GetCertificateRequestSchema,
  ListCertificateStatusesRequestSchema,
  ListCertificateStatusesResponseSchema,
} from "../../gen/service/verify/v2/certificate_service_pb.ts";
import { dpopNonceSlotMs } from "../../src/app/compose-oidc.ts";
import { DpopNonces } from "../../src/domain/oidc/dpop/nonce.ts";
import { CertificateHandler } from "../../src/rpc/services/certificate.ts";
import { clientCredentialsToken, registerApiClient } from "../support/api-oauth.ts";
import { dpopKey, dpopProof, type DpopKey } from "../support/dpop.ts";
import { certificateServicePath, countStatuses, createTenant, setupClients, type Tenant } from "../support/certificate-rpc.ts";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { RawClient, type HttpTransport, type RawReply } from "../support/raw-client.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Plain Connect unary calls to the certificate procedures skip connect-node's
 * router (src/server/connect-protocol/unary-fast-path.ts). Each request here is sent as is
 * (taking the fast path) and again with a header that sends it down the full
 * Connect handler (a generous `connect-timeout-ms`, which changes nothing
 * else): status, headers and body bytes must be the same. A check writes a
 * new status record each time, so its record id and time are the only bytes
 * allowed to differ.
 */

const sqlite = (await databaseTargets()).find((t) => t.name === "sqlite")!;
const slow = { "connect-timeout-ms": "600000" };

/** Which kind of context each handler call got: the fast path's own, or Connect's. */
const contexts: string[] = [];
for (const method of ["checkCertificateStatus", "getCertificate", "listCertificateStatuses", "getCertificateStatus"] as const) {
  const original = CertificateHandler.prototype[method] as (this: CertificateHandler, req: never, context: HandlerContext) => Promise<unknown>;
  vi.spyOn(CertificateHandler.prototype, method).mockImplementation(function (this: CertificateHandler, req: never, context: HandlerContext) {
    contexts.push(context.constructor.name === "LazyContext" ? "fast" : "slow");
    return original.call(this, req, context);
  } as never);
}

describe("the unary fast path answers exactly as the full Connect handler", () => {
  let scratch: ScratchDatabase;
  let server: TestServer;
  let tenant: Tenant;
  let certificateId: string;
  let statusId: string;
  let client: RawClient;

  beforeAll(async () => {
    scratch = await sqlite.create();
    server = await startTestServer(scratch.url);
    tenant = await createTenant(server, "fast");
    const created = await setupClients(server, tenant.token).mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE });
    certificateId = created.certificate!.id;
    // Enough history for a listing larger than the compression threshold.
    for (let i = 0; i < 30; i++) {
      const checked = await setupClients(server, tenant.token).certificates.checkCertificateStatus({ certificateId });
      statusId = checked.certificateStatus!.id;
    }
    client = new RawClient(server.url, 10_000);
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    client?.close();
    await server?.close();
    await scratch?.drop();
  });

  function send(transport: HttpTransport, procedure: string, body: Buffer, headers: Record<string, string>): Promise<RawReply> {
    return client.send({
      transport,
      method: "POST",
      path: `${certificateServicePath}/${procedure}`,
      headers: { "content-length": String(body.byteLength), authorization: `Bearer ${tenant.token}`, ...headers },
      body,
    });
  }

  /** Everything a client sees, less what differs on every response whatever the path. */
  function visible(reply: RawReply) {
    const { date: _date, "x-request-id": _id, ...headers } = reply.headers;
    return { status: reply.status, headers, body: reply.body.toString("base64") };
  }

  async function both(transport: HttpTransport, procedure: string, body: Buffer, headers: Record<string, string>) {
    contexts.length = 0;
    const fast = await send(transport, procedure, body, headers);
    const fastContexts = [...contexts];
    contexts.length = 0;
    const full = await send(transport, procedure, body, { ...headers, ...slow });
    return { fast, full, fastContexts, fullContexts: [...contexts] };
  }

  const json = (value: unknown) => Buffer.from(JSON.stringify(value));
  const binary = <T extends DescMessage>(schema: T, init: object) => Buffer.from(toBinary(schema, create(schema, init as never)));

  const readOnly: [string, string, () => Buffer, Record<string, string>][] = [
    ["GetCertificate, JSON", "GetCertificate", () => json({ certificateId }), { "content-type": "application/json" }],
    ["GetCertificate, binary", "GetCertificate", () => binary(GetCertificateRequestSchema, { certificateId }), { "content-type": "application/proto" }],
    ["GetCertificateStatus, JSON", "GetCertificateStatus", () => json({ certificateStatusId: statusId }), { "content-type": "application/json" }],
    ["ListCertificateStatuses, JSON", "ListCertificateStatuses", () => json({ certificateId, pageSize: 5 }), { "content-type": "application/json" }],
    [
      "ListCertificateStatuses, JSON, gzip accepted and the answer over 1 KiB",
      "ListCertificateStatuses",
      () => json({ certificateId, pageSize: 12 }),
      { "content-type": "application/json", "accept-encoding": "gzip" },
    ],
  ];

  for (const transport of ["http1", "h2c"] as const) {
    it.each(readOnly)(`${transport}: %s gives the same bytes`, async (_name, procedure, body, headers) => {
      const { fast, full, fastContexts, fullContexts } = await both(transport, procedure, body(), headers);
      expect(fast.status).toBe(200);
      expect(visible(fast)).toEqual(visible(full));
      expect(fastContexts).toEqual(["fast"]);
      expect(fullContexts).toEqual(["slow"]);
    });
  }

  it("the gzip case really is compressed, and decompresses to the listing", async () => {
    const { fast } = await both("http1", "ListCertificateStatuses", json({ certificateId, pageSize: 12 }), {
      "content-type": "application/json",
      "accept-encoding": "gzip",
    });
    expect(fast.headers["content-encoding"]).toBe("gzip");
    const listing = JSON.parse(gunzipSync(fast.body).toString("utf8")) as { certificateStatuses: unknown[] };
    expect(listing.certificateStatuses).toHaveLength(12);
  });

  it("CheckCertificateStatus, JSON: the same answer but for the new record's id and time; one record each", async () => {
    const before = await countStatuses(server, tenant.account.id);
    const { fast, full, fastContexts } = await both("http1", "CheckCertificateStatus", json({ certificateId }), { "content-type": "application/json" });
    expect(fastContexts).toEqual(["fast"]);
    expect(await countStatuses(server, tenant.account.id)).toBe(before + 2);
    const normalise = (reply: RawReply) => {
      const body = JSON.parse(reply.body.toString("utf8")) as { certificateStatus: { id: string; createdAt: string } };
      expect(body.certificateStatus.id).toMatch(/^[0-9a-f-]{36}$/);
      body.certificateStatus.id = "ID";
      body.certificateStatus.createdAt = "TIME";
      const { date: _date, "x-request-id": _id, "content-length": length, ...headers } = reply.headers;
      return { status: reply.status, headers, body, length: Number(length) - reply.body.byteLength };
    };
    expect(normalise(fast)).toEqual(normalise(full));
    expect(normalise(fast).length).toBe(0);
  });

  it("CheckCertificateStatus, binary: the same message but for the new record's id and time", async () => {
    const { fast, full, fastContexts } = await both("h2c", "CheckCertificateStatus", binary(CheckCertificateStatusRequestSchema, { certificateId }), {
      "content-type": "application/proto",
    });
    expect(fastContexts).toEqual(["fast"]);
    expect(fast.headers["content-type"]).toBe("application/proto");
    expect(full.headers["content-type"]).toBe("application/proto");
    const decode = (reply: RawReply) => {
      const message = fromBinary(CheckCertificateStatusResponseSchema, reply.body);
      message.certificateStatus!.id = "ID";
      message.certificateStatus!.createdAt = undefined;
      return message;
    };
    expect(decode(fast)).toEqual(decode(full));
    expect(fast.body.byteLength).toBe(full.body.byteLength);
  });

  const failures: [string, string, () => Buffer, Record<string, string>][] = [
    ["an unknown certificate", "CheckCertificateStatus", () => json({ certificateId: "00000000-0000-4000-8000-000000000000" }), { "content-type": "application/json" }],
    ["a certificate id that is not a UUID", "CheckCertificateStatus", () => json({ certificateId: "nope" }), { "content-type": "application/json" }],
    ["a page size out of range", "ListCertificateStatuses", () => json({ certificateId, pageSize: 1000 }), { "content-type": "application/json" }],
    ["an unknown JSON field", "CheckCertificateStatus", () => json({ certificateId, colour: "red" }), { "content-type": "application/json" }],
    ["a body that is not JSON", "CheckCertificateStatus", () => Buffer.from("{"), { "content-type": "application/json" }],
    ["an empty JSON body", "CheckCertificateStatus", () => Buffer.alloc(0), { "content-type": "application/json" }],
    ["bytes that are not protobuf", "CheckCertificateStatus", () => Buffer.from([0x00]), { "content-type": "application/proto" }],
    ["a wrong token", "CheckCertificateStatus", () => json({ certificateId }), { "content-type": "application/json", authorization: "Bearer shm_0123456789ab_" + "A".repeat(43) }],
    ["no token", "CheckCertificateStatus", () => json({ certificateId }), { "content-type": "application/json", authorization: "" }],
    ["an unknown enum name", "CheckCertificateStatus", () => json({ certificateId, checkMethod: "CHECK_METHOD_CARRIER_PIGEON" }), { "content-type": "application/json" }],
  ];

  for (const transport of ["http1", "h2c"] as const) {
    it.each(failures)(`${transport}: %s is answered with the same error and writes nothing`, async (_name, procedure, body, headers) => {
      const before = await countStatuses(server, tenant.account.id);
      const { fast, full } = await both(transport, procedure, body(), headers);
      expect(fast.status).toBeGreaterThanOrEqual(400);
      expect(fast.status).toBeLessThan(500);
      expect(fast.headers["content-type"]).toBe("application/json");
      expect(visible(fast)).toEqual(visible(full));
      expect(await countStatuses(server, tenant.account.id)).toBe(before);
    });
  }

  describe("gRPC over h2c", () => {
    const grpcSlow = { "grpc-timeout": "60S" };
    const envelope = (message: Uint8Array, flags = 0) => {
      const out = Buffer.alloc(5 + message.byteLength);
      out[0] = flags;
      out.writeUInt32BE(message.byteLength, 1);
      out.set(message, 5);
      return out;
    };
    const grpc = (procedure: string, body: Buffer, headers: Record<string, string> = {}) =>
      client.send({
        transport: "h2c",
        method: "POST",
        path: `${certificateServicePath}/${procedure}`,
        headers: { "content-type": "application/grpc", te: "trailers", authorization: `Bearer ${tenant.token}`, ...headers },
        body,
      });
    const seen = (reply: RawReply) => {
      const { date: _date, "x-request-id": _id, ...headers } = reply.headers;
      return { status: reply.status, headers, trailers: reply.trailers, body: reply.body.toString("base64") };
    };
    async function grpcBoth(procedure: string, body: Buffer, headers: Record<string, string> = {}) {
      contexts.length = 0;
      const fast = await grpc(procedure, body, headers);
      const fastContexts = [...contexts];
      contexts.length = 0;
      const full = await grpc(procedure, body, { ...headers, ...grpcSlow });
      return { fast, full, fastContexts, fullContexts: [...contexts] };
    }

    it.each([
      ["GetCertificate", "GetCertificate", () => envelope(binary(GetCertificateRequestSchema, { certificateId })), {}],
      ["GetCertificate, +proto", "GetCertificate", () => envelope(binary(GetCertificateRequestSchema, { certificateId })), { "content-type": "application/grpc+proto" }],
      [
        "ListCertificateStatuses, gzip accepted and the answer over 1 KiB",
        "ListCertificateStatuses",
        () => envelope(binary(ListCertificateStatusesRequestSchema, { certificateId, pageSize: 30 })),
        { "grpc-accept-encoding": "gzip" },
      ],
    ] as [string, string, () => Buffer, Record<string, string>][])("%s gives the same head, bytes and trailers", async (_name, procedure, body, headers) => {
      const { fast, full, fastContexts, fullContexts } = await grpcBoth(procedure, body(), headers);
      expect(fast.trailers["grpc-status"]).toBe("0");
      expect(seen(fast)).toEqual(seen(full));
      expect(fastContexts).toEqual(["fast"]);
      expect(fullContexts).toEqual(["slow"]);
    });

    it("the gzip case really is compressed", async () => {
      const reply = await grpc("ListCertificateStatuses", envelope(binary(ListCertificateStatusesRequestSchema, { certificateId, pageSize: 30 })), {
        "grpc-accept-encoding": "gzip",
      });
      expect(reply.headers["grpc-encoding"]).toBe("gzip");
      expect(reply.body[0]).toBe(1);
      const listing = fromBinary(ListCertificateStatusesResponseSchema, gunzipSync(reply.body.subarray(5)));
      expect(listing.certificateStatuses).toHaveLength(30);
    });

    it("CheckCertificateStatus: the same message but for the new record's id and time", async () => {
      const { fast, full, fastContexts } = await grpcBoth("CheckCertificateStatus", envelope(binary(CheckCertificateStatusRequestSchema, { certificateId })));
      expect(fastContexts).toEqual(["fast"]);
      expect(fast.trailers).toEqual(full.trailers);
      const decode = (reply: RawReply) => {
        const message = fromBinary(CheckCertificateStatusResponseSchema, reply.body.subarray(5));
        message.certificateStatus!.id = "ID";
        message.certificateStatus!.createdAt = undefined;
        return message;
      };
      expect(decode(fast)).toEqual(decode(full));
      // One uncompressed message and nothing after it. (The lengths of the two bodies may differ: a timestamp's nanos take fewer bytes in some milliseconds.)
      expect(fast.body[0]).toBe(0);
      expect(fast.body.readUInt32BE(1)).toBe(fast.body.byteLength - 5);
    });

    it.each([
      ["an unknown certificate", () => envelope(binary(CheckCertificateStatusRequestSchema, { certificateId: "00000000-0000-4000-8000-000000000000" })), {}],
      ["a certificate id that is not a UUID", () => envelope(binary(CheckCertificateStatusRequestSchema, { certificateId: "nope" })), {}],
      ["bytes that are not protobuf", () => envelope(Buffer.from([0x00])), {}],
      ["an envelope flagged compressed", () => envelope(binary(CheckCertificateStatusRequestSchema, { certificateId }), 1), {}],
      ["an envelope longer than the body", () => envelope(binary(CheckCertificateStatusRequestSchema, { certificateId })).subarray(0, 20), {}],
      ["two envelopes", () => Buffer.concat([envelope(binary(CheckCertificateStatusRequestSchema, { certificateId })), envelope(Buffer.alloc(0))]), {}],
      ["a wrong token", () => envelope(binary(CheckCertificateStatusRequestSchema, { certificateId })), { authorization: "Bearer shm_0123456789ab_" + "A".repeat(43) }],
    ] as [string, () => Buffer, Record<string, string>][])("%s: the same status and trailers, nothing written", async (_name, body, headers) => {
      const before = await countStatuses(server, tenant.account.id);
      const { fast, full } = await grpcBoth("CheckCertificateStatus", body(), headers);
      expect(fast.trailers["grpc-status"]).not.toBe("0");
      expect(seen(fast)).toEqual(seen(full));
      expect(await countStatuses(server, tenant.account.id)).toBe(before);
    });
  });

  it("a suspended account gets the same permission_denied both ways", async () => {
    const paused = await createTenant(server, "fast-paused");
    const own = await setupClients(server, paused.token).mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE });
    await server.domain.accounts.setApiStatus("fast-paused", "suspended");
    const { fast, full } = await both("http1", "CheckCertificateStatus", json({ certificateId: own.certificate!.id }), {
      "content-type": "application/json",
      authorization: `Bearer ${paused.token}`,
    });
    expect(fast.status).toBe(403);
    expect(JSON.parse(fast.body.toString("utf8"))).toMatchObject({ code: "permission_denied" });
    expect(visible(fast)).toEqual(visible(full));
  });

  it("a token revoked while its lookup is cached is refused on the next call", async () => {
    const { token, summary } = await server.domain.accounts.createToken("fast", "short-lived");
    const call = () => send("http1", "GetCertificate", json({ certificateId }), { "content-type": "application/json", authorization: `Bearer ${token}` });
    expect((await call()).status).toBe(200);
    expect((await call()).status).toBe(200);
    await server.domain.accounts.revokeToken(summary.prefix);
    const refused = await call();
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body.toString("utf8"))).toMatchObject({ code: "unauthenticated" });
  });

  it("requests outside the plain form are left to the full handler", async () => {
    const body = json({ certificateId });
    const variants: Record<string, string>[] = [
      { "content-type": "application/json; charset=utf-8" },
      { "content-type": "application/json", "connect-protocol-version": "2" },
      { "content-type": "application/json", "content-encoding": "identity" },
    ];
    for (const headers of variants) {
      contexts.length = 0;
      const reply = await send("http1", "GetCertificate", body, headers);
      expect(reply.status).toBe(200);
      expect(contexts).toEqual(["slow"]);
    }
  });

  // Inside the outer block: its handler spies (contexts) last until its afterAll.
  describe("DPoP nonces: the fast path answers as the full Connect handler", () => {
    let nonceScratch: ScratchDatabase;
    let nonceServer: TestServer;
    let nonceClient: RawClient;
    let certificateId: string;
    let key: DpopKey;
    let token: string;

    beforeAll(async () => {
      nonceScratch = await sqlite.create();
      nonceServer = await startTestServer(nonceScratch.url, { dpopRequireNonce: true });
      const tenant = await createTenant(nonceServer, "fast-nonce");
      certificateId = (await setupClients(nonceServer, tenant.token).mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE })).certificate!.id;
      key = await dpopKey();
      token = await clientCredentialsToken(nonceServer, await registerApiClient(nonceServer, tenant.token, { dpopBoundAccessTokens: true }), { dpop: key });
      nonceClient = new RawClient(nonceServer.url, 10_000);
    });
    afterAll(async () => {
      nonceClient?.close();
      await nonceServer?.close();
      await nonceScratch?.drop();
    });

    /** GetCertificate with a new proof (a proof is used once), carrying the nonce when one is given. */
    async function getCertificate(transport: HttpTransport, grpc: boolean, nonce: string | undefined, headers: Record<string, string>): Promise<RawReply> {
      const path = `${certificateServicePath}/GetCertificate`;
      const message = toBinary(GetCertificateRequestSchema, create(GetCertificateRequestSchema, { certificateId }));
      const body = grpc ? Buffer.concat([Buffer.from([0, 0, 0, 0, message.byteLength]), message]) : Buffer.from(JSON.stringify({ certificateId }));
      const proof = await dpopProof(key, { htu: `${nonceServer.config.baseUrl}${path}`, accessToken: token, ...(nonce !== undefined ? { nonce } : {}) });
      const kind: Record<string, string> = grpc ? { "content-type": "application/grpc", te: "trailers" } : { "content-type": "application/json", "content-length": String(body.byteLength) };
      return nonceClient.send({ transport, method: "POST", path, headers: { ...kind, authorization: `DPoP ${token}`, dpop: proof, ...headers }, body });
    }

    async function both(transport: HttpTransport, grpc: boolean, nonce: string | undefined) {
      contexts.length = 0;
      const fast = await getCertificate(transport, grpc, nonce, {});
      const fastContexts = [...contexts];
      contexts.length = 0;
      const full = await getCertificate(transport, grpc, nonce, grpc ? { "grpc-timeout": "60S" } : slow);
      const fullContexts = [...contexts];
      const seen = (reply: RawReply) => {
        const { date: _date, "x-request-id": _id, ...headers } = reply.headers;
        return { status: reply.status, headers, trailers: reply.trailers, body: reply.body.toString("base64") };
      };
      return { fast: seen(fast), full: seen(full), fastContexts, fullContexts };
    }

    const previousNonce = () => new DpopNonces(nonceServer.domain.oidc.secretKey, dpopNonceSlotMs).current(Date.now() - dpopNonceSlotMs);

    for (const [name, transport, grpc] of [["Connect JSON, http1", "http1", false], ["Connect JSON, h2c", "h2c", false], ["gRPC, h2c", "h2c", true]] as const) {
      it(`${name}: use_dpop_nonce carries the same DPoP-Nonce and challenge both ways`, async () => {
        const { fast, full } = await both(transport, grpc, undefined);
        const answered = { ...fast.headers, ...fast.trailers };
        expect(answered["dpop-nonce"]).toMatch(/^[0-9a-z]+\.[A-Za-z0-9_-]{43}$/);
        expect(answered["www-authenticate"]).toMatch(/^DPoP realm="shomei", error="use_dpop_nonce"/);
        expect(fast).toEqual(full);
      });

      it(`${name}: a proof with the slot before's nonce gets the same answer and fresh DPoP-Nonce both ways`, async () => {
        const { fast, full, fastContexts, fullContexts } = await both(transport, grpc, previousNonce());
        expect(fast.status).toBe(200);
        expect(fast.headers["dpop-nonce"]).toBe(new DpopNonces(nonceServer.domain.oidc.secretKey, dpopNonceSlotMs).current(Date.now()));
        expect(fast).toEqual(full);
        expect(fastContexts).toEqual(["fast"]);
        expect(fullContexts).toEqual(["slow"]);
      });
    }
  });
});
