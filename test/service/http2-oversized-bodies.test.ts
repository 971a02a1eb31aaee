import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { RawClient, type RawRequest } from "../support/raw-client.ts";
import { envelope } from "../support/rpc-envelopes.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const sqlite = (await databaseTargets()).find((t) => t.name === "sqlite")!;
const procedurePath = "/service.verify.v2.ServerInfoService/GetServerInfo";
const maxBodyBytes = 2048;
/** Far past the limit and past HTTP/2's default stream window (65,535 bytes): the client is still sending when the answer comes. */
const oversize = 300_000;

/** Each shape of oversized body, without and with a declared length. */
const shapes: { name: string; request: Omit<RawRequest, "transport"> }[] = [
  {
    name: "Connect JSON, no Content-Length",
    request: { method: "POST", path: procedurePath, headers: { "content-type": "application/json" }, body: Buffer.from(`{${" ".repeat(oversize)}}`) },
  },
  {
    name: "Connect JSON with its Content-Length",
    request: {
      method: "POST",
      path: procedurePath,
      headers: { "content-type": "application/json", "content-length": String(oversize + 2) },
      body: Buffer.from(`{${" ".repeat(oversize)}}`),
    },
  },
  {
    name: "gRPC, one message",
    request: { method: "POST", path: procedurePath, headers: { "content-type": "application/grpc", te: "trailers" }, body: envelope(Buffer.alloc(oversize)) },
  },
  {
    name: "PAR form",
    request: {
      method: "POST",
      path: "/api/oidc/v1/par",
      headers: { "content-type": "application/x-www-form-urlencoded", "content-length": String(oversize + 2) },
      body: Buffer.from(`a=${"b".repeat(oversize)}`),
    },
  },
  {
    name: "PAR form, no Content-Length",
    request: { method: "POST", path: "/api/oidc/v1/par", headers: { "content-type": "application/x-www-form-urlencoded" }, body: Buffer.from(`a=${"b".repeat(oversize)}`) },
  },
  {
    name: "sign-in page form",
    request: {
      method: "POST",
      path: "/auth/login?interaction=x",
      headers: { "content-type": "application/x-www-form-urlencoded", "content-length": String(oversize + 2) },
      body: Buffer.from(`a=${"b".repeat(oversize)}`),
    },
  },
];

interface StreamOutcome {
  status: number;
  grpcStatus: string | undefined;
  body: string;
  /** The stream's RST_STREAM code as the client saw it close (0: NO_ERROR, or none). */
  rstCode: number;
}

/** An HTTP error status, or gRPC's status 8 (RESOURCE_EXHAUSTED) in an HTTP 200. */
function isError(outcome: StreamOutcome): boolean {
  return outcome.status >= 400 || outcome.grpcStatus === "8";
}

/** One request on the given session, resolved when the stream has closed, whatever closed it. */
function exchange(session: http2.ClientHttp2Session, request: Omit<RawRequest, "transport">): Promise<StreamOutcome> {
  return new Promise((resolve, reject) => {
    const headers: http2.OutgoingHttpHeaders = { ":method": request.method, ":path": request.path, ...request.headers };
    const stream = session.request(headers);
    const timer = setTimeout(() => reject(new Error(`${request.path}: the stream did not close within 10 s (status ${status})`)), 10_000);
    let status = 0;
    let grpcStatus: string | undefined;
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      status = Number(h[":status"]);
      grpcStatus ??= h["grpc-status"] as string | undefined;
    });
    stream.on("trailers", (t) => (grpcStatus ??= t["grpc-status"] as string | undefined));
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("error", reject);
    stream.on("close", () => clearTimeout(timer));
    stream.on("close", () => resolve({ status, grpcStatus, body: Buffer.concat(chunks).toString("utf8"), rstCode: stream.rstCode ?? 0 }));
    stream.end(request.body);
  });
}

describe(`oversized bodies over h2c (maxBodyBytes ${maxBodyBytes})`, () => {
  let scratch: ScratchDatabase;
  let server: TestServer;
  let http1: RawClient;

  beforeAll(async () => {
    scratch = await sqlite.create();
    server = await startTestServer(scratch.url, { maxBodyBytes, sweepIntervalSeconds: 0 });
    http1 = new RawClient(server.url, 10_000);
  });

  afterAll(async () => {
    http1?.close();
    await server?.close();
    await scratch?.drop();
  });

  it("answers each oversized stream with the error HTTP/1.1 gets and keeps the connection for the streams after it", async () => {
    // Node's client counts the body it could not send against its own session memory (10 MB by default).
    const session = http2.connect(server.url, { maxSessionMemory: 1000 });
    const goaways: number[] = [];
    session.on("goaway", (code) => goaways.push(code));
    session.on("error", () => undefined);
    try {
      for (const shape of shapes) {
        // Without a length HTTP/1.1 sends the body chunked (HTTP/2 has no chunking: its frames carry the body).
        const http1Headers = "content-length" in shape.request.headers ? shape.request.headers : { ...shape.request.headers, "transfer-encoding": "chunked" };
        const overHttp1 = await http1.send({ ...shape.request, headers: http1Headers, transport: "http1" });
        const overHttp2 = await exchange(session, shape.request);
        expect({ shape: shape.name, status: overHttp2.status, body: overHttp2.body, grpcStatus: overHttp2.grpcStatus }).toEqual({
          shape: shape.name,
          status: overHttp1.status,
          body: overHttp1.body.toString("utf8"),
          grpcStatus: overHttp1.trailers["grpc-status"] ?? overHttp1.headers["grpc-status"],
        });
        expect(isError(overHttp2), shape.name).toBe(true);
        // The server asked the client to stop sending, without an error (RFC 9113 §8.1).
        expect(overHttp2.rstCode, shape.name).toBe(http2.constants.NGHTTP2_NO_ERROR);
        // A stream opened after it on the same connection, with a body, is answered.
        const after = await exchange(session, { method: "POST", path: procedurePath, headers: { "content-type": "application/json" }, body: Buffer.from(`{${" ".repeat(1000)}}`) });
        expect(after.status, `after ${shape.name}`).toBe(200);
        expect(JSON.parse(after.body)).toMatchObject({ name: "shomei" });
      }
      // Again, many at once on the one connection.
      const many = await Promise.all(Array.from({ length: 40 }, (_, i) => exchange(session, shapes[i % shapes.length]!.request)));
      expect(many.map((o) => isError(o) && o.rstCode === 0)).toEqual(Array(40).fill(true));
      const last = await exchange(session, { method: "POST", path: procedurePath, headers: { "content-type": "application/json" }, body: Buffer.from("{}") });
      expect(last.status).toBe(200);
      expect(goaways).toEqual([]);
      expect(session.closed).toBe(false);
    } finally {
      session.destroy();
    }
  });
});
