import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http2 from "node:http2";
import https from "node:https";
import { tmpdir } from "node:os";
import path from "node:path";
import tls from "node:tls";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createClient, type Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
  Http2SessionManager,
} from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Mode, ServerInfoService, type GetServerInfoResponse } from "../../gen/service/verify/v2/server_info_pb.ts";
import { version } from "../../src/version.ts";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const sqlite = (await databaseTargets()).find((t) => t.name === "sqlite")!;
const procedurePath = "/service.verify.v2.ServerInfoService/GetServerInfo";

/** Calls GetServerInfo with a fresh request id and checks the answer; returns the id to find the server's log line. */
async function expectServerInfo(transport: Transport): Promise<string> {
  const requestId = `proto-${randomUUID()}`;
  const before = Date.now();
  const response = await createClient(ServerInfoService, transport).getServerInfo({}, { headers: { "x-request-id": requestId } });
  const after = Date.now();
  expectServerInfoResponse(response, before, after);
  return requestId;
}

function expectServerInfoResponse(response: GetServerInfoResponse, before: number, after: number): void {
  expect(response.name).toBe("shomei");
  expect(response.version).toBe(version);
  expect(response.mode).toBe(Mode.MOCK);
  expect(response.serverTime).toBeDefined();
  // Same machine, same clock: the server's time lies between sending and receiving.
  const serverTime = timestampDate(response.serverTime!).getTime();
  expect(serverTime).toBeGreaterThanOrEqual(before);
  expect(serverTime).toBeLessThanOrEqual(after);
}

/** The one request log line for an id. The line is written when the response closes, which may trail the client by a tick. */
async function requestLog(server: TestServer, requestId: string): Promise<Record<string, unknown>> {
  const matching = () => server.logs.filter((l) => l.msg === "request" && l.requestId === requestId);
  for (let i = 0; i < 200 && matching().length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  const lines = matching();
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function h2Get(session: http2.ClientHttp2Session, requestPath: string, headers: http2.OutgoingHttpHeaders = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":method": "GET", ":path": requestPath, ...headers });
    let body = "";
    let responseHeaders: http2.IncomingHttpHeaders & http2.IncomingHttpStatusHeader = {};
    stream.setEncoding("utf8");
    stream.on("response", (h) => (responseHeaders = h));
    stream.on("data", (chunk: string) => (body += chunk));
    stream.on("end", () => resolve({ status: Number(responseHeaders[":status"]), headers: responseHeaders, body }));
    stream.on("error", reject);
  });
}

function connectH2(authority: string, options: http2.SecureClientSessionOptions = {}): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(authority, options);
    session.once("connect", () => {
      session.off("error", reject);
      resolve(session);
    });
    session.once("error", reject);
  });
}

describe("cleartext port: HTTP/1.1 and HTTP/2 (prior knowledge) on the same port", () => {
  let scratch: ScratchDatabase;
  let server: TestServer;
  const managers: Http2SessionManager[] = [];
  const h2 = () => {
    const manager = new Http2SessionManager(server.url);
    managers.push(manager);
    return manager;
  };

  beforeAll(async () => {
    scratch = await sqlite.create();
    server = await startTestServer(scratch.url);
  });

  afterAll(async () => {
    for (const manager of managers) manager.abort();
    await server?.close();
    await scratch?.drop();
  });

  const cases: { name: string; transport: () => Transport; protocol: string; contentType: string | undefined; method?: string }[] = [
    {
      name: "Connect JSON over HTTP/1.1",
      transport: () => createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", useBinaryFormat: false }),
      protocol: "HTTP/1.1",
      contentType: "application/json",
    },
    {
      name: "Connect binary over HTTP/1.1",
      transport: () => createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", useBinaryFormat: true }),
      protocol: "HTTP/1.1",
      contentType: "application/proto",
    },
    {
      name: "Connect GET (side-effect-free method) over HTTP/1.1",
      transport: () => createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", useHttpGet: true }),
      protocol: "HTTP/1.1",
      contentType: undefined,
      method: "GET",
    },
    {
      name: "gRPC-Web over HTTP/1.1",
      transport: () => createGrpcWebTransport({ baseUrl: server.url, httpVersion: "1.1" }),
      protocol: "HTTP/1.1",
      contentType: "application/grpc-web+proto",
    },
    {
      name: "gRPC over HTTP/2 cleartext",
      transport: () => createGrpcTransport({ baseUrl: server.url, sessionManager: h2() }),
      protocol: "HTTP/2.0",
      contentType: "application/grpc+proto",
    },
    {
      name: "Connect binary over HTTP/2 cleartext",
      transport: () => createConnectTransport({ baseUrl: server.url, httpVersion: "2", sessionManager: h2() }),
      protocol: "HTTP/2.0",
      contentType: "application/proto",
    },
    {
      name: "Connect JSON over HTTP/2 cleartext",
      transport: () => createConnectTransport({ baseUrl: server.url, httpVersion: "2", sessionManager: h2(), useBinaryFormat: false }),
      protocol: "HTTP/2.0",
      contentType: "application/json",
    },
  ];

  for (const c of cases) {
    it(`GetServerInfo: ${c.name}`, async () => {
      const requestId = await expectServerInfo(c.transport());
      // The server saw the protocol and encoding the case names, not a fallback.
      const log = await requestLog(server, requestId);
      expect(log).toMatchObject({
        method: c.method ?? "POST",
        path: procedurePath,
        route: procedurePath,
        status: 200,
        protocol: c.protocol,
      });
      expect(log.contentType).toBe(c.contentType);
    });
  }

  it("answers a plain JSON POST, as curl sends it", async () => {
    const before = Date.now();
    const response = await fetch(server.url + procedurePath, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: "{}",
    });
    const after = Date.now();
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    // Never kept by a cache: an RPC's answer may hold secrets or personal data.
    expect(response.headers.get("cache-control")).toBe("no-store");
    const body = (await response.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["mode", "name", "serverTime", "version"]);
    expect(body).toMatchObject({ name: "shomei", version, mode: "MODE_MOCK" });
    const serverTime = Date.parse(body.serverTime as string);
    expect(serverTime).toBeGreaterThanOrEqual(before);
    expect(serverTime).toBeLessThanOrEqual(after);
  });

  it("every RPC answer is no-store: the router's, an error, gRPC", async () => {
    const refused = await fetch(server.url + procedurePath, { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"unknown":1}' });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("cache-control")).toBe("no-store");
    const grpcWeb = await fetch(server.url + procedurePath, { method: "POST", headers: { "Content-Type": "application/grpc-web+proto" }, body: new Uint8Array(5) });
    expect(grpcWeb.status).toBe(200);
    expect(grpcWeb.headers.get("cache-control")).toBe("no-store");
  });

  it("serves Express routes over HTTP/2 cleartext (prior knowledge)", async () => {
    const session = await connectH2(server.url);
    try {
      const requestId = `h2c-${randomUUID()}`;
      const health = await h2Get(session, "/healthz", { "x-request-id": requestId });
      expect(health.status).toBe(200);
      expect(health.headers["content-type"]).toBe("application/json; charset=utf-8");
      expect(health.headers["x-request-id"]).toBe(requestId);
      expect(JSON.parse(health.body)).toEqual({ status: "ok" });
      expect(await requestLog(server, requestId)).toMatchObject({ route: "/healthz", status: 200, protocol: "HTTP/2.0" });

      // Express's own error handling works on the HTTP/2 request objects too.
      const missing = await h2Get(session, "/no-such-page", { accept: "application/json" });
      expect(missing.status).toBe(404);
      expect(JSON.parse(missing.body)).toEqual({ error: "not_found", error_description: "no route for GET /no-such-page" });
      const page = await h2Get(session, "/no-such-page", { accept: "text/html" });
      expect(page.status).toBe(404);
      expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(page.body).toContain("<h1>Page not found</h1>");
    } finally {
      session.destroy();
    }
  });
});

describe("TLS port: ALPN chooses h2 or http/1.1", () => {
  let scratch: ScratchDatabase;
  let server: TestServer;
  let certDir: string;
  let ca: Buffer;
  const managers: Http2SessionManager[] = [];
  const h2 = () => {
    const manager = new Http2SessionManager(server.url, undefined, { ca });
    managers.push(manager);
    return manager;
  };

  beforeAll(async () => {
    certDir = mkdtempSync(path.join(tmpdir(), "shomei-tls-"));
    const certFile = path.join(certDir, "cert.pem");
    const keyFile = path.join(certDir, "key.pem");
    execFileSync(
      "openssl",
      [
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", keyFile, "-out", certFile, "-days", "2", "-subj", "/CN=localhost",
        "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
      ],
      { stdio: "pipe" },
    );
    ca = readFileSync(certFile);
    scratch = await sqlite.create();
    server = await startTestServer(scratch.url, { tlsCertFile: certFile, tlsKeyFile: keyFile });
  });

  afterAll(async () => {
    for (const manager of managers) manager.abort();
    await server?.close();
    await scratch?.drop();
    if (certDir) rmSync(certDir, { recursive: true, force: true });
  });

  it("reports an https URL", () => {
    expect(server.url).toBe(`https://127.0.0.1:${server.port}`);
  });

  it("RPC responses over TLS carry HSTS too", async () => {
    const session = await connectH2(server.url, { ca });
    try {
      const reply = await new Promise<Reply>((resolve, reject) => {
        const stream = session.request({ ":method": "POST", ":path": procedurePath, "content-type": "application/json" });
        let body = "";
        let headers: http2.IncomingHttpHeaders = {};
        stream.setEncoding("utf8");
        stream.on("response", (h) => (headers = h));
        stream.on("data", (chunk: string) => (body += chunk));
        stream.on("end", () => resolve({ status: Number(headers[":status"]), headers, body }));
        stream.on("error", reject);
        stream.end("{}");
      });
      expect(reply.status).toBe(200);
      expect(reply.headers["strict-transport-security"]).toBe("max-age=31536000");
    } finally {
      session.destroy();
    }
  });

  it("GetServerInfo: gRPC over h2", async () => {
    const requestId = await expectServerInfo(createGrpcTransport({ baseUrl: server.url, sessionManager: h2() }));
    expect(await requestLog(server, requestId)).toMatchObject({ status: 200, protocol: "HTTP/2.0", contentType: "application/grpc+proto" });
  });

  it("GetServerInfo: Connect over h2", async () => {
    const requestId = await expectServerInfo(createConnectTransport({ baseUrl: server.url, httpVersion: "2", sessionManager: h2() }));
    expect(await requestLog(server, requestId)).toMatchObject({ status: 200, protocol: "HTTP/2.0", contentType: "application/proto" });
  });

  it("GetServerInfo: Connect over https HTTP/1.1", async () => {
    const transport = createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", nodeOptions: { ca }, useBinaryFormat: false });
    const requestId = await expectServerInfo(transport);
    expect(await requestLog(server, requestId)).toMatchObject({ status: 200, protocol: "HTTP/1.1", contentType: "application/json" });
  });

  it("GetServerInfo: gRPC-Web over https HTTP/1.1", async () => {
    const requestId = await expectServerInfo(createGrpcWebTransport({ baseUrl: server.url, httpVersion: "1.1", nodeOptions: { ca } }));
    expect(await requestLog(server, requestId)).toMatchObject({ status: 200, protocol: "HTTP/1.1", contentType: "application/grpc-web+proto" });
  });

  it("serves /healthz over h2", async () => {
    const session = await connectH2(server.url, { ca });
    try {
      expect(session.alpnProtocol).toBe("h2");
      const requestId = `h2-${randomUUID()}`;
      const reply = await h2Get(session, "/healthz", { "x-request-id": requestId });
      expect(reply.status).toBe(200);
      expect(reply.headers["x-request-id"]).toBe(requestId);
      expect(reply.headers["strict-transport-security"]).toBe("max-age=31536000");
      expect(JSON.parse(reply.body)).toEqual({ status: "ok" });
      expect(await requestLog(server, requestId)).toMatchObject({ route: "/healthz", status: 200, protocol: "HTTP/2.0" });
    } finally {
      session.destroy();
    }
  });

  const http1Clients = [
    { name: "a client offering ALPN http/1.1", alpnOffer: ["http/1.1"], negotiated: "http/1.1" },
    { name: "a client without ALPN", alpnOffer: undefined, negotiated: false },
  ] as const;
  for (const client of http1Clients) {
    it(`serves /healthz over https HTTP/1.1 to ${client.name}`, async () => {
      const requestId = `h1s-${randomUUID()}`;
      const options: https.RequestOptions & tls.ConnectionOptions = {
        ca,
        agent: false,
        headers: { "x-request-id": requestId },
        ...(client.alpnOffer ? { ALPNProtocols: [...client.alpnOffer] } : {}),
      };
      const { reply, alpn } = await new Promise<{ reply: Reply; alpn: string | false | null }>((resolve, reject) => {
        const req = https.request(`${server.url}/healthz`, options, (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (body += chunk));
          res.on("end", () =>
            resolve({ reply: { status: res.statusCode ?? 0, headers: res.headers, body }, alpn: (res.socket as tls.TLSSocket).alpnProtocol }),
          );
        });
        req.on("error", reject);
        req.end();
      });
      expect(alpn).toBe(client.negotiated);
      expect(reply.status).toBe(200);
      expect(reply.headers["x-request-id"]).toBe(requestId);
      expect(reply.headers["strict-transport-security"]).toBe("max-age=31536000");
      expect(JSON.parse(reply.body)).toEqual({ status: "ok" });
      expect(await requestLog(server, requestId)).toMatchObject({ route: "/healthz", status: 200, protocol: "HTTP/1.1" });
    });
  }

  it("answers malformed HTTP/1.1 inside TLS with the same JSON 400 as on the cleartext port", async () => {
    const socket = tls.connect({ host: "127.0.0.1", port: server.port, ca, ALPNProtocols: ["http/1.1"] });
    try {
      let received = "";
      socket.setEncoding("utf8");
      socket.on("data", (chunk: string) => (received += chunk));
      await new Promise<void>((resolve, reject) => {
        socket.once("secureConnect", resolve);
        socket.once("error", reject);
      });
      const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
      socket.write("NOT HTTP AT ALL\r\n\r\n");
      await closed;
      const [head, body] = received.split("\r\n\r\n", 2);
      expect(head!.split("\r\n")[0]).toBe("HTTP/1.1 400 Bad Request");
      expect(head).toMatch(/^content-type: application\/json$/im);
      expect(JSON.parse(body!)).toEqual({ error: "bad_request", error_description: "the request is not valid HTTP" });
    } finally {
      socket.destroy();
    }
  });
});
