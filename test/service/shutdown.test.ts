import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import http2 from "node:http2";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { settings } from "../../src/config/schema.ts";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const procedurePath = "/service.verify.v2.ServerInfoService/GetServerInfo";

interface Cli {
  child: ChildProcess;
  port: number;
  /** JSON log lines written on stdout so far. */
  logs(): Record<string, unknown>[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ChildProcess>();
const tempDirs: string[] = [];

afterAll(() => {
  for (const child of running) child.kill("SIGKILL");
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

/** `shomei serve --mode mock` as operators run it, on a free port and a scratch SQLite file. */
async function startCli(extraEnv: Record<string, string> = {}): Promise<Cli> {
  const dir = mkdtempSync(path.join(tmpdir(), "shomei-cli-"));
  tempDirs.push(dir);
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const { env: variable } of Object.values(settings)) delete env[variable];
  delete env.SHOMEI_CONFIG;
  Object.assign(env, {
    PORT: "0",
    HOST: "127.0.0.1",
    DATABASE_URL: `sqlite:${path.join(dir, "x.db")}`,
    // Long enough that a request cut short can only mean shutdown did not wait for it.
    SHOMEI_SHUTDOWN_TIMEOUT_MS: "120000",
    // mock mode writes its demo data here; keep it out of the working directory.
    SHOMEI_DATA_DIR: dir,
    // The tests below read the request lines.
    SHOMEI_ACCESS_LOG: "true",
    ...extraEnv,
  });
  const child = spawn(process.execPath, ["bin/shomei.js", "serve", "--mode", "mock"], { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    }),
  );
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const port = await new Promise<number>((resolve, reject) => {
    const onData = () => {
      const match = /listening on http:\/\/127\.0\.0\.1:(\d+) /.exec(stderr);
      if (match) {
        child.stderr!.off("data", onData);
        resolve(Number(match[1]));
      }
    };
    child.stderr!.on("data", onData);
    void exited.then(({ code, signal }) => reject(new Error(`shomei exited (${code ?? signal}) before listening:\n${stderr}\n${stdout}`)));
  });
  const logs = () =>
    stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { child, port, logs, exited };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (condition()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** Resolves with the error code of a fresh connection attempt, or "connected". */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve("connected");
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

/** Reads HTTP/1.1 responses off a raw socket: interim ones (100 Continue) and final Content-Length framed ones. */
class Http1Reader {
  private buffer = "";
  private waiters: (() => void)[] = [];
  closed = false;

  constructor(readonly socket: net.Socket) {
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      this.buffer += chunk;
      this.wake();
    });
    socket.on("close", () => {
      this.closed = true;
      this.wake();
    });
    socket.on("error", () => undefined);
  }

  async next(): Promise<{ status: number; headers: Record<string, string>; body: string }> {
    for (;;) {
      const end = this.buffer.indexOf("\r\n\r\n");
      if (end >= 0) {
        const [statusLine = "", ...lines] = this.buffer.slice(0, end).split("\r\n");
        const headers = Object.fromEntries(
          lines.map((l) => [l.slice(0, l.indexOf(":")).trim().toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]),
        );
        const status = Number(statusLine.split(" ")[1]);
        const length = Number(headers["content-length"] ?? 0);
        if (this.buffer.length >= end + 4 + length) {
          const body = this.buffer.slice(end + 4, end + 4 + length);
          this.buffer = this.buffer.slice(end + 4 + length);
          return { status, headers, body };
        }
      }
      if (this.closed) throw new Error(`connection closed with ${JSON.stringify(this.buffer)} unread`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  async closedByPeer(): Promise<void> {
    while (!this.closed) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }
}

function connectRaw(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: "127.0.0.1", port }, () => resolve(socket));
    socket.once("error", reject);
  });
}

/** A Connect JSON body padded with whitespace, so it can be sent in two halves. */
const slowBody = `{${" ".repeat(2000)}}`;
const firstHalf = slowBody.slice(0, 1000);
const secondHalf = slowBody.slice(1000);

describe("graceful shutdown of the real CLI", () => {
  it("on SIGTERM: refuses new connections, finishes in-flight HTTP/1.1 and HTTP/2 requests, exits 0", async () => {
    const cli = await startCli();
    const h1 = new Http1Reader(await connectRaw(cli.port));
    const session = http2.connect(`http://127.0.0.1:${cli.port}`);
    session.on("error", () => undefined);
    try {
      // HTTP/1.1: headers and half the body. 100 Continue proves the request reached the handler.
      h1.socket.write(
        `POST ${procedurePath} HTTP/1.1\r\nHost: 127.0.0.1:${cli.port}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(slowBody)}\r\nX-Request-Id: slow-h1\r\nExpect: 100-continue\r\n\r\n`,
      );
      const interim = await h1.next();
      expect(interim.status).toBe(100);
      h1.socket.write(firstHalf);

      // HTTP/2 (prior knowledge): the same, on a stream.
      const stream = session.request({
        ":method": "POST",
        ":path": procedurePath,
        "content-type": "application/json",
        "x-request-id": "slow-h2",
        expect: "100-continue",
      });
      let h2Body = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => (h2Body += chunk));
      const h2Response = new Promise<http2.IncomingHttpHeaders>((resolve) => stream.once("response", resolve));
      const h2Ended = new Promise<void>((resolve, reject) => {
        stream.once("end", resolve);
        stream.once("error", reject);
      });
      await new Promise<void>((resolve) => stream.once("continue", resolve));
      stream.write(firstHalf);

      cli.child.kill("SIGTERM");
      await until(() => cli.logs().some((l) => l.msg === "shutting down: finishing in-flight requests"), "the shutdown log line");

      // The listener is closed from the moment shutdown starts, while requests are still in flight.
      expect(await tryConnect(cli.port)).toBe("ECONNREFUSED");
      expect(cli.child.exitCode).toBeNull();

      h1.socket.write(secondHalf);
      const response = await h1.next();
      expect(response.status).toBe(200);
      expect(response.headers["connection"]).toBe("close");
      expect(response.headers["x-request-id"]).toBe("slow-h1");
      expect(JSON.parse(response.body)).toMatchObject({ name: "shomei", mode: "MODE_MOCK" });
      await h1.closedByPeer();

      stream.end(secondHalf);
      const headers = await h2Response;
      await h2Ended;
      expect(headers[":status"]).toBe(200);
      expect(JSON.parse(h2Body)).toMatchObject({ name: "shomei", mode: "MODE_MOCK" });

      expect(await cli.exited).toEqual({ code: 0, signal: null });
      const logs = cli.logs();
      const requests = logs.filter((l) => l.msg === "request");
      expect(requests.find((l) => l.requestId === "slow-h1")).toMatchObject({ status: 200, protocol: "HTTP/1.1" });
      expect(requests.find((l) => l.requestId === "slow-h2")).toMatchObject({ status: 200, protocol: "HTTP/2.0" });
      expect(logs.filter((l) => l.level === "warn" || l.level === "error")).toEqual([]);
      expect(logs.at(-1)).toMatchObject({ msg: "stopped" });
    } finally {
      h1.socket.destroy();
      session.destroy();
      cli.child.kill("SIGKILL");
    }
  });

  it("on SIGTERM: connections opened just before the signal have their first request answered, none is reset", async () => {
    const cli = await startCli();
    // TCP connections made before the signal; their first bytes (HTTP/1.1 requests, HTTP/2 prefaces) follow it.
    const raw = await Promise.all(Array.from({ length: 6 }, () => connectRaw(cli.port)));
    const forHttp2 = await Promise.all(Array.from({ length: 2 }, () => connectRaw(cli.port)));
    const readers = raw.map((socket) => new Http1Reader(socket));
    const sessions: http2.ClientHttp2Session[] = [];
    const request = (id: string) =>
      `POST ${procedurePath} HTTP/1.1\r\nHost: 127.0.0.1:${cli.port}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nX-Request-Id: ${id}\r\n\r\n{}`;
    const h2Call = (socket: net.Socket, id: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const session = http2.connect(`http://127.0.0.1:${cli.port}`, { createConnection: () => socket });
        sessions.push(session);
        session.on("error", reject);
        const stream = session.request({ ":method": "POST", ":path": procedurePath, "content-type": "application/json", "x-request-id": id });
        let status = 0;
        let body = "";
        stream.setEncoding("utf8");
        stream.on("response", (headers) => (status = Number(headers[":status"])));
        stream.on("data", (chunk: string) => (body += chunk));
        stream.on("end", () => resolve({ status, body }));
        stream.on("error", reject);
        stream.end("{}");
      });
    try {
      cli.child.kill("SIGTERM");
      // Half of the requests leave at once (they may even overtake the signal), half once shutdown has visibly begun.
      readers.slice(0, 3).forEach((reader, i) => reader.socket.write(request(`early-${i}`)));
      const early = h2Call(forHttp2[0]!, "early-h2");
      await until(() => cli.logs().some((l) => l.msg === "shutting down: finishing in-flight requests"), "the shutdown log line");
      readers.slice(3).forEach((reader, i) => reader.socket.write(request(`late-${i}`)));
      const late = h2Call(forHttp2[1]!, "late-h2");

      for (const [index, reader] of readers.entries()) {
        const response = await reader.next();
        expect(response.status).toBe(200);
        expect(JSON.parse(response.body)).toMatchObject({ name: "shomei" });
        // A request that arrived once shutdown had begun is told that the connection ends with it.
        if (index >= 3) expect(response.headers["connection"]).toBe("close");
        await reader.closedByPeer();
      }
      for (const answer of await Promise.all([early, late])) {
        expect(answer.status).toBe(200);
        expect(JSON.parse(answer.body)).toMatchObject({ name: "shomei" });
      }
      expect(await cli.exited).toEqual({ code: 0, signal: null });
      // Only this test's requests: in mock mode the server also fetches its own CRL over HTTP.
      const ours = cli.logs().filter((l) => l.msg === "request" && /^(early|late)-/.test(String(l.requestId)));
      expect(ours.map((l) => l.status)).toEqual(Array(8).fill(200));
    } finally {
      for (const socket of [...raw, ...forHttp2]) socket.destroy();
      for (const session of sessions) session.destroy();
      cli.child.kill("SIGKILL");
    }
  });

  it("on SIGTERM after 1,000 oversized bodies over h2c: no request is left in flight, exits within a second", async () => {
    // A shutdown timeout the test can outwait: a request left in flight shows as an exit after it, with a warning.
    const cli = await startCli({ SHOMEI_MAX_BODY_BYTES: "1024", SHOMEI_SHUTDOWN_TIMEOUT_MS: "5000" });
    // Node's client counts the body it could not send against its own session memory (10 MB by default).
    const session = http2.connect(`http://127.0.0.1:${cli.port}`, { maxSessionMemory: 1000 });
    session.on("error", () => undefined);
    const shapes = [
      { path: procedurePath, "content-type": "application/json" },
      { path: procedurePath, "content-type": "application/grpc" },
      { path: "/api/oidc/v1/token", "content-type": "application/x-www-form-urlencoded" },
    ];
    const oversized = (n: number) =>
      new Promise<number>((resolve, reject) => {
        const { path: requestPath, ...headers } = shapes[n % shapes.length]!;
        const stream = session.request({ ":method": "POST", ":path": requestPath, ...headers });
        let status = 0;
        stream.on("response", (h) => (status = Number(h[":status"])));
        stream.resume();
        stream.on("error", reject);
        // Answered is enough: whether the stream also closed is the server's business, seen at shutdown.
        stream.on("end", () => resolve(status));
        // From just over the limit to past the stream's flow-control window: some are read whole, some cut off.
        stream.end(Buffer.alloc(1025 + ((n * 7919) % 150_000), 0x20));
      });
    try {
      let next = 0;
      const statuses: number[] = [];
      await Promise.all(
        Array.from({ length: 12 }, async () => {
          while (next < 1000) statuses.push(await oversized(next++));
        }),
      );
      expect(statuses.filter((status) => status === 0)).toEqual([]);
      session.destroy();
      const signalled = Date.now();
      cli.child.kill("SIGTERM");
      expect(await cli.exited).toEqual({ code: 0, signal: null });
      expect(Date.now() - signalled).toBeLessThan(1000);
      expect(cli.logs().filter((l) => l.level === "warn" || l.level === "error")).toEqual([]);
    } finally {
      session.destroy();
      cli.child.kill("SIGKILL");
    }
  });

  it("on SIGINT: closes idle keep-alive connections and idle HTTP/2 sessions and exits 0 without waiting for them", async () => {
    const cli = await startCli();
    const keepAlive = new Http1Reader(await connectRaw(cli.port));
    const silent = new Http1Reader(await connectRaw(cli.port));
    const session = http2.connect(`http://127.0.0.1:${cli.port}`);
    session.on("error", () => undefined);
    const sessionClosed = new Promise<void>((resolve) => session.once("close", resolve));
    try {
      keepAlive.socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${cli.port}\r\n\r\n`);
      const first = await keepAlive.next();
      expect(first.status).toBe(200);
      expect(first.headers["connection"]).toBe("keep-alive");

      const stream = session.request({ ":path": "/healthz" });
      stream.resume();
      const h2Status = await new Promise<unknown>((resolve) => stream.once("response", (h) => resolve(h[":status"])));
      await new Promise<void>((resolve) => stream.once("end", resolve));
      expect(h2Status).toBe(200);

      cli.child.kill("SIGINT");
      expect(await cli.exited).toEqual({ code: 0, signal: null });
      await keepAlive.closedByPeer();
      await silent.closedByPeer();
      await sessionClosed;
      const logs = cli.logs();
      expect(logs.find((l) => l.msg === "shutting down: finishing in-flight requests")).toMatchObject({ signal: "SIGINT" });
      expect(logs.filter((l) => l.level === "warn" || l.level === "error")).toEqual([]);
      expect(logs.at(-1)).toMatchObject({ msg: "stopped" });
    } finally {
      keepAlive.socket.destroy();
      silent.socket.destroy();
      session.destroy();
      cli.child.kill("SIGKILL");
    }
  });
});
