import { randomUUID } from "node:crypto";
import net from "node:net";
import { create } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GetServerInfoRequestSchema, ServerInfoService } from "../../gen/service/verify/v2/server_info_pb.ts";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const sqlite = (await databaseTargets()).find((t) => t.name === "sqlite")!;
const procedurePath = "/service.verify.v2.ServerInfoService/GetServerInfo";
const sanePattern = /^[A-Za-z0-9._:-]{1,128}$/;

interface RawReply {
  statusLine: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * Writes bytes on a fresh TCP connection. `reply` resolves once one whole
 * response (Content-Length framed) has arrived, `closed` once the server has
 * closed the connection.
 */
function rawExchange(port: number, payload: string): { reply: Promise<RawReply>; closed: Promise<void>; socket: net.Socket } {
  const socket = net.connect({ host: "127.0.0.1", port });
  let received = Buffer.alloc(0);
  let settle: ((reply: RawReply) => void) | undefined;
  let fail: ((error: Error) => void) | undefined;
  const reply = new Promise<RawReply>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  const parse = (atEnd: boolean) => {
    const headerEnd = received.indexOf("\r\n\r\n");
    if (headerEnd < 0) {
      if (atEnd) fail?.(new Error(`connection closed before a response: ${JSON.stringify(received.toString("latin1"))}`));
      return;
    }
    const [statusLine = "", ...lines] = received.subarray(0, headerEnd).toString("latin1").split("\r\n");
    const headers = Object.fromEntries(
      lines.map((line) => {
        const colon = line.indexOf(":");
        return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
      }),
    );
    const body = received.subarray(headerEnd + 4);
    const length = headers["content-length"] === undefined ? undefined : Number(headers["content-length"]);
    if ((length !== undefined && body.length >= length) || atEnd) {
      settle?.({ statusLine, headers, body: body.subarray(0, length ?? body.length).toString("utf8") });
    }
  };
  socket.on("data", (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    parse(false);
  });
  const closed = new Promise<void>((resolve) =>
    socket.once("close", () => {
      parse(true);
      resolve();
    }),
  );
  // A server that answers and closes before reading everything may reset the connection; the reply read so far counts.
  socket.on("error", () => undefined);
  socket.write(payload);
  return { reply, closed, socket };
}

/** The one request log line for an id. The line is written when the response closes, which may trail the client by a tick. */
async function requestLog(server: TestServer, requestId: string): Promise<Record<string, unknown>> {
  const matching = () => server.logs.filter((l) => l.msg === "request" && l.requestId === requestId);
  for (let i = 0; i < 200 && matching().length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  const lines = matching();
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

async function metricsText(server: TestServer): Promise<string> {
  const response = await fetch(`${server.url}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}

/** The value of one exact series (name and labels as Prometheus renders them), or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(series + " "));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

function rpcPost(server: TestServer, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(server.url + procedurePath, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body,
  });
}

const stackTrace = /\n\s+at .+:\d+:\d+|node_modules|\.ts:\d+/;

describe("HTTP behaviour", () => {
  let scratch: ScratchDatabase;
  let server: TestServer;

  beforeAll(async () => {
    scratch = await sqlite.create();
    server = await startTestServer(scratch.url);
  });

  afterAll(async () => {
    await server?.close();
    await scratch?.drop();
  });

  describe("not found", () => {
    it("answers an unknown route with a JSON 404", async () => {
      const response = await fetch(`${server.url}/no/such/route`);
      expect(response.status).toBe(404);
      expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(await response.json()).toEqual({ error: "not_found", error_description: "no route for GET /no/such/route" });
    });

    it("answers a browser with an HTML page and no stack trace", async () => {
      const response = await fetch(`${server.url}/no/such/page`, { headers: { Accept: "text/html,application/xhtml+xml,*/*;q=0.8" } });
      expect(response.status).toBe(404);
      expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const body = await response.text();
      expect(body).toMatch(/^<!doctype html>/);
      expect(body).toContain("<h1>Page not found</h1>");
      expect(body).toContain("There is no page at this address.");
      expect(body).not.toMatch(stackTrace);
    });

    it("answers JSON under /api/ even when the client prefers HTML", async () => {
      const response = await fetch(`${server.url}/api/v1/nothing`, { headers: { Accept: "text/html" } });
      expect(response.status).toBe(404);
      expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(await response.json()).toEqual({ error: "not_found", error_description: "no route for GET /api/v1/nothing" });
    });

    it("answers a call to a procedure it does not have as Connect does: 404, code unimplemented", async () => {
      const response = await fetch(`${server.url}/service.verify.v2.ServerInfoService/NoSuchMethod`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: "{}",
      });
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({
        code: "unimplemented",
        message: "this server has no procedure /service.verify.v2.ServerInfoService/NoSuchMethod",
      });
      // The same path asked for as a page is an unknown route, as any other.
      const page = await fetch(`${server.url}/service.verify.v2.ServerInfoService/NoSuchMethod`);
      expect(page.status).toBe(404);
      expect(((await page.json()) as { error: string }).error).toBe("not_found");
    });
  });

  describe("RPC errors", () => {
    it("refuses a content type no RPC protocol uses with HTTP 415", async () => {
      const response = await rpcPost(server, "{}", { "Content-Type": "text/plain" });
      expect(response.status).toBe(415);
      expect(response.headers.get("x-request-id")).toMatch(sanePattern);
      // Saying which content types an RPC takes, not an empty body.
      expect(await response.json()).toMatchObject({ code: "invalid_argument", message: expect.stringMatching(/application\/json or application\/proto/) });
    });

    it("an HTTP/1.0 call without Host is refused in words, not with an empty 400", async () => {
      const { reply, socket } = rawExchange(server.port, `POST ${procedurePath} HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`);
      const answer = await reply;
      socket.destroy();
      expect(answer.statusLine).toMatch(/^HTTP\/1\.[01] 400 /);
      expect(JSON.parse(answer.body)).toEqual({ code: "invalid_argument", message: "the request names no host (Host or :authority)" });
    });

    it("a request over the size limit keeps its code and says the limit, not connect's option", async () => {
      const response = await rpcPost(server, JSON.stringify({ padding: "x".repeat(2 * 1024 * 1024) }), { "Content-Type": "application/json" });
      const body = (await response.json()) as { code: string; message: string };
      expect(body.code).toBe("resource_exhausted");
      expect(body.message).toMatch(/^the request message is larger than this server's limit of \d+ bytes$/);
    });

    it("rejects a JSON request with an unknown field as invalid_argument", async () => {
      const response = await rpcPost(server, JSON.stringify({ noSuchField: 1 }));
      expect(response.status).toBe(400);
      const body = (await response.json()) as { code: string; message: string };
      expect(body.code).toBe("invalid_argument");
      expect(body.message).toContain("noSuchField");
      expect(body.message).not.toMatch(stackTrace);
    });

    it("rejects malformed JSON as invalid_argument", async () => {
      const response = await rpcPost(server, '{"unterminated": ');
      expect(response.status).toBe(400);
      const body = (await response.json()) as { code: string; message: string };
      expect(body.code).toBe("invalid_argument");
      expect(body.message).not.toMatch(stackTrace);
    });
  });

  describe("malformed HTTP", () => {
    it("answers bytes that are not HTTP with a JSON 400 and closes the connection", async () => {
      const { reply, closed, socket } = rawExchange(server.port, "NOT HTTP AT ALL\r\n\r\n");
      try {
        const response = await reply;
        await closed;
        expect(response.statusLine).toBe("HTTP/1.1 400 Bad Request");
        expect(response.headers["content-type"]).toBe("application/json");
        expect(response.headers["connection"]).toBe("close");
        expect(JSON.parse(response.body)).toEqual({ error: "bad_request", error_description: "the request is not valid HTTP" });
      } finally {
        socket.destroy();
      }
    });

    it("answers oversized request headers with a JSON 431 and closes the connection", async () => {
      const { reply, closed, socket } = rawExchange(
        server.port,
        `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Padding: ${"a".repeat(20_000)}\r\n\r\n`,
      );
      try {
        const response = await reply;
        await closed;
        expect(response.statusLine).toBe("HTTP/1.1 431 Request Header Fields Too Large");
        expect(JSON.parse(response.body)).toEqual({ error: "headers_too_large", error_description: "the request headers are too large" });
      } finally {
        socket.destroy();
      }
    });

    it("keeps serving after a malformed request", async () => {
      const { closed, socket } = rawExchange(server.port, "\x00\x01\x02garbage\r\n\r\n");
      await closed;
      socket.destroy();
      const response = await fetch(`${server.url}/healthz`);
      expect(response.status).toBe(200);
    });
  });

  describe("security headers", () => {
    const csp = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
    it.each([
      ["the home page", "/", "text/html"],
      ["a not-found page", "/no/such/page", "text/html"],
      ["discovery", "/.well-known/openid-configuration", "application/json"],
    ])("%s carries a CSP without scripts and may not be framed", async (_name, target, accept) => {
      const response = await fetch(server.url + target, { headers: { accept } });
      expect(response.headers.get("content-security-policy")).toBe(csp);
      expect(response.headers.get("x-frame-options")).toBe("DENY");
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    });

    it("a cleartext server whose public URL is http sends no HSTS", async () => {
      expect((await fetch(`${server.url}/healthz`)).headers.get("strict-transport-security")).toBeNull();
    });
  });

  describe("operations endpoints", () => {
    it("/healthz answers 200 ok", async () => {
      const response = await fetch(`${server.url}/healthz`);
      expect(response.status).toBe(200);
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(await response.json()).toEqual({ status: "ok" });
    });

    it("/readyz answers 200 with the database ok", async () => {
      const response = await fetch(`${server.url}/readyz`);
      expect(response.status).toBe(200);
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(await response.json()).toEqual({ status: "ready", checks: { database: "ok" } });
    });

    it("/metrics counts requests by method, route pattern and status, with durations", async () => {
      const series = 'shomei_http_requests_total{method="GET",route="/healthz",status="200"}';
      const before = sample(await metricsText(server), series) ?? 0;
      for (let i = 0; i < 3; i++) expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      const text = await metricsText(server);
      expect(sample(text, series)).toBe(before + 3);
      expect(text).toMatch(/^shomei_http_request_duration_seconds_bucket\{le="0\.001",method="GET",route="\/healthz"\} \d+$/m);
      const total = sample(text, 'shomei_http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/healthz"}');
      expect(total).toBe(sample(text, 'shomei_http_request_duration_seconds_count{method="GET",route="/healthz"}'));
      expect(total).toBeGreaterThanOrEqual(before + 3);
      expect(text).toContain("# TYPE shomei_process_cpu_user_seconds_total counter");
    });

    it("/metrics labels RPCs by procedure", async () => {
      expect((await rpcPost(server, "{}")).status).toBe(200);
      expect((await rpcPost(server, "{bad")).status).toBe(400);
      const text = await metricsText(server);
      expect(sample(text, `shomei_http_requests_total{method="POST",route="${procedurePath}",status="200"}`)).toBeGreaterThanOrEqual(1);
      expect(sample(text, `shomei_http_requests_total{method="POST",route="${procedurePath}",status="400"}`)).toBeGreaterThanOrEqual(1);
    });

    it("/metrics labels unknown routes 'unmatched', never with the requested path", async () => {
      const token = `probe${randomUUID().replace(/-/g, "")}`;
      const series = 'shomei_http_requests_total{method="GET",route="unmatched",status="404"}';
      const before = sample(await metricsText(server), series) ?? 0;
      expect((await fetch(`${server.url}/${token}`)).status).toBe(404);
      expect((await fetch(`${server.url}/deeper/${token}/path`)).status).toBe(404);
      const text = await metricsText(server);
      expect(sample(text, series)).toBe(before + 2);
      expect(text).not.toContain(token);
    });
  });

  describe("request ids", () => {
    const responses: [string, () => Promise<Response>][] = [
      ["an Express route", () => fetch(`${server.url}/healthz`)],
      ["a 404", () => fetch(`${server.url}/nope`)],
      ["an RPC", () => rpcPost(server, "{}")],
      ["an RPC error", () => rpcPost(server, "{bad")],
      ["a refused RPC content type", () => rpcPost(server, "{}", { "Content-Type": "text/plain" })],
    ];
    for (const [name, send] of responses) {
      it(`returns X-Request-Id on ${name}`, async () => {
        const response = await send();
        await response.arrayBuffer();
        expect(response.headers.get("x-request-id")).toMatch(sanePattern);
      });
    }

    it("gives each request its own id", async () => {
      const a = (await fetch(`${server.url}/healthz`)).headers.get("x-request-id");
      const b = (await fetch(`${server.url}/healthz`)).headers.get("x-request-id");
      expect(a).toMatch(sanePattern);
      expect(b).toMatch(sanePattern);
      expect(a).not.toBe(b);
    });

    it("echoes a sane incoming id, on Express routes and RPCs, and logs it", async () => {
      const incoming = `req-42.${randomUUID()}:A`;
      const response = await fetch(`${server.url}/healthz`, { headers: { "X-Request-Id": incoming } });
      expect(response.headers.get("x-request-id")).toBe(incoming);
      expect(await requestLog(server, incoming)).toMatchObject({ path: "/healthz", status: 200 });

      const rpcId = `rpc-${randomUUID()}`;
      expect((await rpcPost(server, "{}", { "X-Request-Id": rpcId })).headers.get("x-request-id")).toBe(rpcId);
    });

    const invalid: [string, string][] = [
      ["with spaces", "not a valid id"],
      ["300 characters long", "a".repeat(300)],
      ["with punctuation that could break log parsers", 'id"}{"injected":"1'],
      ["with a slash", "../../etc/passwd"],
    ];
    for (const [name, incoming] of invalid) {
      it(`replaces an incoming id ${name}`, async () => {
        const response = await fetch(`${server.url}/healthz`, { headers: { "X-Request-Id": incoming } });
        const id = response.headers.get("x-request-id");
        expect(id).toMatch(sanePattern);
        expect(id).not.toBe(incoming);
        expect(await requestLog(server, id!)).toMatchObject({ path: "/healthz", status: 200 });
        expect(server.rawLogs()).not.toContain(incoming);
      });
    }
  });

  describe("request logs", () => {
    it("writes exactly one line per request with id, method, path, status and duration", async () => {
      const cases: [RequestInit & { path: string }, Record<string, unknown>][] = [
        [{ path: "/healthz" }, { method: "GET", path: "/healthz", route: "/healthz", status: 200 }],
        [{ path: "/missing" }, { method: "GET", path: "/missing", route: "unmatched", status: 404 }],
        [
          { path: procedurePath, method: "POST", body: "{}", headers: { "Content-Type": "application/json" } },
          { method: "POST", path: procedurePath, route: procedurePath, status: 200, contentType: "application/json" },
        ],
      ];
      for (const [{ path, headers, ...init }, expected] of cases) {
        const requestId = `log-${randomUUID()}`;
        const response = await fetch(server.url + path, { ...init, headers: { ...(headers as Record<string, string>), "X-Request-Id": requestId } });
        await response.arrayBuffer();
        const line = await requestLog(server, requestId);
        expect(line).toMatchObject({ level: "info", msg: "request", requestId, protocol: "HTTP/1.1", ...expected });
        expect(typeof line.durationMs).toBe("number");
        expect(line.durationMs as number).toBeGreaterThanOrEqual(0);
      }
    });

    it("never logs query strings or request headers", async () => {
      const secret = `SECRETVALUE123${randomUUID().slice(0, 8)}`;
      const ids = Array.from({ length: 4 }, () => `secret-${randomUUID()}`);
      const requests = [
        fetch(`${server.url}/healthz?code=${secret}&state=xyz`, { headers: { "X-Request-Id": ids[0]! } }),
        fetch(`${server.url}/callback?code=${secret}`, {
          headers: { "X-Request-Id": ids[1]!, Accept: "text/html", Authorization: `Bearer ${secret}`, Cookie: `session=${secret}` },
        }),
        fetch(`${server.url}${procedurePath}?code=${secret}`, {
          method: "POST",
          headers: { "X-Request-Id": ids[2]!, "Content-Type": "application/json", Authorization: `Bearer ${secret}` },
          body: "{}",
        }),
        fetch(`${server.url}${procedurePath}?connect=v1&encoding=json&message=%7B%7D&code=${secret}`, { headers: { "X-Request-Id": ids[3]! } }),
      ];
      for (const response of await Promise.all(requests)) await response.arrayBuffer();
      const paths: string[] = [];
      for (const id of ids) paths.push((await requestLog(server, id)).path as string);
      expect(paths).toEqual(["/healthz", "/callback", procedurePath, procedurePath]);
      expect(server.rawLogs()).not.toContain(secret);
    });
  });
});

describe("the access log's default (SHOMEI_ACCESS_LOG off)", () => {
  let scratch: ScratchDatabase;
  let server: TestServer;

  beforeAll(async () => {
    scratch = await sqlite.create();
    server = await startTestServer(scratch.url, { accessLog: false });
  });

  afterAll(async () => {
    await server?.close();
    await scratch?.drop();
  });

  it("writes no line per request at info, yet still measures each request and logs the rest", async () => {
    const before = server.logs.length;
    expect(before).toBeGreaterThan(0);
    for (const path of ["/healthz", "/no-such-page", "/.well-known/openid-configuration"]) await (await fetch(server.url + path)).arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.logs.slice(before).filter((l) => l.msg === "request")).toEqual([]);
    expect(await metricsText(server)).toMatch(/shomei_http_requests_total\{[^}]*route="\/healthz"[^}]*\} [1-9]/);
  });
});

describe("body limit (maxBodyBytes 2048)", () => {
  let scratch: ScratchDatabase;
  let server: TestServer;
  const managers: Http2SessionManager[] = [];

  beforeAll(async () => {
    scratch = await sqlite.create();
    server = await startTestServer(scratch.url, { maxBodyBytes: 2048 });
  });

  afterAll(async () => {
    for (const manager of managers) manager.abort();
    await server?.close();
    await scratch?.drop();
  });

  /** A GetServerInfoRequest padded with an unknown field, so that its binary encoding is about `bytes` long. */
  function paddedRequest(bytes: number) {
    const request = create(GetServerInfoRequestSchema);
    request.$unknown = [{ no: 15, wireType: WireType.LengthDelimited, data: new BinaryWriter().bytes(new Uint8Array(bytes)).finish() }];
    return request;
  }

  it("answers a declared Content-Length over the limit with a JSON 413 naming the limit", async () => {
    const response = await fetch(`${server.url}/healthz`, { method: "POST", body: "x".repeat(4096) });
    expect(response.status).toBe(413);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(response.headers.get("x-request-id")).toMatch(sanePattern);
    expect(await response.json()).toEqual({
      error: "request_too_large",
      error_description: "the request body exceeds the limit of 2048 bytes",
    });
  });

  it("lets a body under the limit through to routing", async () => {
    const response = await fetch(`${server.url}/healthz`, { method: "POST", body: "x".repeat(1024) });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: "not_found", error_description: "no route for POST /healthz" });
  });

  it("refuses on the declared length alone, without waiting for the body", async () => {
    const { reply, socket } = rawExchange(
      server.port,
      "POST /anything HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\nContent-Length: 100000000\r\n\r\n",
    );
    try {
      const response = await reply;
      expect(response.statusLine).toBe("HTTP/1.1 413 Payload Too Large");
      expect(JSON.parse(response.body)).toEqual({
        error: "request_too_large",
        error_description: "the request body exceeds the limit of 2048 bytes",
      });
    } finally {
      socket.destroy();
    }
  });

  it("answers a browser with a 413 page", async () => {
    const response = await fetch(`${server.url}/form`, { method: "POST", body: "x".repeat(4096), headers: { Accept: "text/html" } });
    expect(response.status).toBe(413);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const body = await response.text();
    expect(body).toContain("<h1>Request too large</h1>");
    expect(body).not.toMatch(stackTrace);
  });

  const rpcTransports: [string, () => Transport][] = [
    ["Connect over HTTP/1.1", () => createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" })],
    [
      "gRPC over HTTP/2",
      () => {
        const manager = new Http2SessionManager(server.url);
        managers.push(manager);
        return createGrpcTransport({ baseUrl: server.url, sessionManager: manager });
      },
    ],
  ];
  for (const [name, transport] of rpcTransports) {
    it(`answers an RPC body over the limit with resource_exhausted (${name})`, async () => {
      const client = createClient(ServerInfoService, transport());
      const error = await client.getServerInfo(paddedRequest(4096)).then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(error).toBeInstanceOf(ConnectError);
      expect((error as ConnectError).code).toBe(Code.ResourceExhausted);
      // The same client still gets answers under the limit.
      expect((await client.getServerInfo(paddedRequest(512))).name).toBe("shomei");
    });
  }

  it("answers a chunked RPC body over the limit with resource_exhausted", async () => {
    const chunk = new TextEncoder().encode(`{"a":"${"x".repeat(4096)}"}`);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(chunk);
        controller.close();
      },
    });
    const response = await fetch(server.url + procedurePath, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(429);
    expect(((await response.json()) as { code: string }).code).toBe("resource_exhausted");
  });
});
