import { randomBytes, randomUUID } from "node:crypto";
import net from "node:net";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CertificateService } from "../../gen/service/verify/v2/certificate_service_pb.ts";
import { databaseTargets, postgresUrl, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const targets = await databaseTargets();
const procedurePath = "/service.verify.v2.ServerInfoService/GetServerInfo";
const stackTrace = /\n\s+at .+:\d+:\d+|node_modules|\.ts:\d+/;

/**
 * A TCP relay between the server and PostgreSQL, so a test can break the
 * network the way a failover or a partition does: "refuse" resets every
 * connection (open ones included) and refuses new ones, "blackhole" accepts
 * connections and never answers, and `stall` holds what the server sends on
 * open connections, so that a query can be caught in flight.
 */
class TcpRelay {
  private mode: "pass" | "refuse" | "blackhole" = "pass";
  private stalled = false;
  private onStalledData: (() => void) | undefined;
  private readonly sockets = new Set<net.Socket>();
  private constructor(
    private readonly server: net.Server,
    private readonly upstream: { host: string; port: number },
  ) {
    server.on("connection", (client) => this.accept(client));
  }

  static async start(upstream: { host: string; port: number }): Promise<TcpRelay> {
    const server = net.createServer();
    const relay = new TcpRelay(server, upstream);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return relay;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  cut(mode: "refuse" | "blackhole"): void {
    this.mode = mode;
    this.stalled = false;
    for (const socket of this.sockets) socket.destroy();
  }

  /** Stops forwarding what the server sends; resolves once it has sent something (a query) that is now held. */
  stall(): Promise<void> {
    this.stalled = true;
    return new Promise((resolve) => (this.onStalledData = resolve));
  }

  restore(): void {
    this.mode = "pass";
    this.stalled = false;
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private track(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  }

  private accept(client: net.Socket): void {
    this.track(client);
    if (this.mode === "refuse") {
      client.destroy();
      return;
    }
    if (this.mode === "blackhole") return;
    const upstream = net.connect(this.upstream);
    this.track(upstream);
    client.once("close", () => upstream.destroy());
    upstream.once("close", () => client.destroy());
    client.on("data", (chunk: Buffer) => {
      if (!this.stalled) {
        upstream.write(chunk);
        return;
      }
      this.onStalledData?.();
      this.onStalledData = undefined;
    });
    upstream.pipe(client);
  }
}

async function getJson(server: TestServer, path: string): Promise<{ status: number; body: unknown; text: string; headers: Headers }> {
  const response = await fetch(server.url + path);
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body, text, headers: response.headers };
}

const unavailable = { status: "unavailable", checks: { database: "unreachable" } };
const ready = { status: "ready", checks: { database: "ok" } };

/** An API account with a token, so that calls reach the database through authentication and the handler. */
async function apiCaller(server: TestServer): Promise<{ getCertificate: () => Promise<unknown> }> {
  const name = `outage-${randomBytes(4).toString("hex")}`;
  await server.domain.accounts.create(name, "active");
  const { token } = await server.domain.accounts.createToken(name, "outage test");
  const client = createClient(CertificateService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }));
  const getCertificate = () =>
    client.getCertificate({ certificateId: randomUUID() }, { headers: { Authorization: `Bearer ${token}` } }).then(
      () => undefined,
      (reason: unknown) => reason,
    );
  // While the database answers: authenticated, looked up, not found.
  const error = await getCertificate();
  expect(error).toBeInstanceOf(ConnectError);
  expect((error as ConnectError).code).toBe(Code.NotFound);
  expect((await fetch(`${server.url}/mock/ca.crl`)).status).toBe(200);
  return { getCertificate };
}

/** What every target must show while its database cannot be reached. */
async function expectCleanOutage(server: TestServer, caller: { getCertificate: () => Promise<unknown> }): Promise<void> {
  // Requests that need the database fail cleanly and say "retry", whatever protocol they came by.
  const [rpcError, crl] = await Promise.all([caller.getCertificate(), getJson(server, "/mock/ca.crl")]);
  expect(rpcError).toBeInstanceOf(ConnectError);
  expect((rpcError as ConnectError).code).toBe(Code.Unavailable);
  expect((rpcError as ConnectError).rawMessage).toBe("the service is temporarily unavailable, retry later");
  expect(crl.status).toBe(503);
  expect(crl.headers.get("retry-after")).toBe("5");
  expect(crl.body).toEqual({ error: "temporarily_unavailable", error_description: "the service is temporarily unavailable, retry later" });

  const readiness = await getJson(server, "/readyz");
  expect(readiness.status).toBe(503);
  expect(readiness.body).toEqual(unavailable);
  expect(readiness.headers.get("cache-control")).toBe("no-store");
  expect(readiness.text).not.toMatch(stackTrace);

  // Liveness does not depend on the database: restarting the process would not help.
  const liveness = await getJson(server, "/healthz");
  expect(liveness.status).toBe(200);
  expect(liveness.body).toEqual({ status: "ok" });

  // Requests that need no database are still answered.
  const rpc = await fetch(server.url + procedurePath, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
  expect(rpc.status).toBe(200);
  expect(((await rpc.json()) as { name: string }).name).toBe("shomei");
  const missing = await getJson(server, "/no-such-route");
  expect(missing.status).toBe(404);
  expect(missing.body).toEqual({ error: "not_found", error_description: "no route for GET /no-such-route" });

  // An outage is a warning for operators, not a crash or an unexpected error.
  const logs = server.logs;
  expect(logs.some((l) => l.level === "warn" && l.msg === "readiness check: database unreachable")).toBe(true);
  expect(logs.filter((l) => l.level === "error" || l.level === "fatal")).toEqual([]);
  expect(logs.filter((l) => l.msg === "request" && l.path === "/readyz").map((l) => l.status)).toContain(503);
}

/**
 * On every target, the server's own database handle is closed under it (for an
 * embedded SQLite file the only way `select 1` can stop answering). PostgreSQL
 * is also reached through a relay that the tests cut, stall and restore, and
 * has its sessions terminated by the database itself.
 */
for (const t of targets) {
  describe.skipIf(!!t.unavailable)(targetTitle(t), () => {
    let scratch: ScratchDatabase;
    const servers: TestServer[] = [];
    const start = async (url: string) => {
      const server = await startTestServer(url);
      servers.push(server);
      return server;
    };

    beforeAll(async () => {
      scratch = await t.create();
    });

    afterAll(async () => {
      for (const server of servers.splice(0)) await server.close();
      await scratch?.drop();
    });

    it("/readyz answers 200 while the database answers", async () => {
      const server = await start(scratch.url);
      const readiness = await getJson(server, "/readyz");
      expect(readiness.status).toBe(200);
      expect(readiness.body).toEqual(ready);
    });

    it("/readyz answers 503 once the server's database connection is closed under it, and shutdown still works", async () => {
      const server = await start(scratch.url);
      expect((await getJson(server, "/readyz")).status).toBe(200);
      const caller = await apiCaller(server);
      await server.database.close();
      await expectCleanOutage(server, caller);
      await expect(server.close()).resolves.toBeUndefined();
    });

    if (t.name === "postgres") describePostgresNetworkFailures(() => scratch, start);
  });
}

/** Failures only a networked database has: the link drops, hangs, or the database ends sessions itself. */
function describePostgresNetworkFailures(scratch: () => ScratchDatabase, start: (url: string) => Promise<TestServer>): void {
  let relay: TcpRelay;

  beforeAll(async () => {
    const upstream = new URL(scratch().url);
    relay = await TcpRelay.start({ host: upstream.hostname, port: Number(upstream.port || 5432) });
  });

  afterAll(async () => {
    await relay?.close();
  });

  const throughRelay = () => {
    const url = new URL(scratch().url);
    url.hostname = "127.0.0.1";
    url.port = String(relay.port);
    return url.toString();
  };

  it("/readyz answers 503 while connections to PostgreSQL are reset and refused, and 200 again once it is back", async () => {
    const server = await start(throughRelay());
    try {
      expect((await getJson(server, "/readyz")).body).toEqual(ready);
      const caller = await apiCaller(server);
      relay.cut("refuse");
      await expectCleanOutage(server, caller);
      // Still unavailable on a second look: nothing was cached as healthy.
      expect((await getJson(server, "/readyz")).status).toBe(503);
      relay.restore();
      const readiness = await getJson(server, "/readyz");
      expect(readiness.status).toBe(200);
      expect(readiness.body).toEqual(ready);
      const error = await caller.getCertificate();
      expect((error as ConnectError).code).toBe(Code.NotFound);
    } finally {
      relay.restore();
      await server.close();
    }
  });

  it("fails a request whose query is in flight when the connection drops, and keeps running", async () => {
    const server = await start(throughRelay());
    try {
      const caller = await apiCaller(server);
      const queryHeld = relay.stall();
      const pending = caller.getCertificate();
      await queryHeld;
      relay.cut("refuse");
      const error = await pending;
      expect(error).toBeInstanceOf(ConnectError);
      expect((error as ConnectError).code).toBe(Code.Unavailable);
      expect((error as ConnectError).rawMessage).toBe("the service is temporarily unavailable, retry later");
      relay.restore();
      expect((await getJson(server, "/readyz")).body).toEqual(ready);
      expect(((await caller.getCertificate()) as ConnectError).code).toBe(Code.NotFound);
      expect(server.logs.filter((l) => l.level === "error" || l.level === "fatal")).toEqual([]);
    } finally {
      relay.restore();
      await server.close();
    }
  });

  it("/readyz answers 503 instead of hanging, and requests fail cleanly, when PostgreSQL stops answering", async () => {
    const server = await start(throughRelay());
    try {
      expect((await getJson(server, "/readyz")).body).toEqual(ready);
      const caller = await apiCaller(server);
      relay.cut("blackhole");
      await expectCleanOutage(server, caller);
    } finally {
      // Pending connection attempts fail now rather than at the pool's connect timeout.
      relay.restore();
      await server.close();
    }
  });

  it("keeps serving, and becomes ready again, after PostgreSQL terminates its sessions", async () => {
    const applicationName = `shomei_test_${randomBytes(6).toString("hex")}`;
    const url = new URL(scratch().url);
    url.searchParams.set("application_name", applicationName);
    const server = await start(url.toString());
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    try {
      expect((await getJson(server, "/readyz")).body).toEqual(ready);
      const terminated = await admin.query<{ terminated: boolean }>(
        "select pg_terminate_backend(pid) as terminated from pg_stat_activity where application_name = $1",
        [applicationName],
      );
      expect(terminated.rows.length).toBeGreaterThanOrEqual(1);
      expect(terminated.rows.every((r) => r.terminated)).toBe(true);

      // The pool may hand out a terminated session once before it notices; every answer must still be clean,
      // and the server must get back to ready on its own.
      const answers: unknown[] = [];
      for (let i = 0; i < 20; i++) {
        const readiness = await getJson(server, "/readyz");
        expect([200, 503]).toContain(readiness.status);
        expect(readiness.body).toEqual(readiness.status === 200 ? ready : unavailable);
        answers.push(readiness.body);
        if (readiness.status === 200) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(answers.at(-1)).toEqual(ready);
      expect((await getJson(server, "/healthz")).status).toBe(200);
      expect(server.logs.filter((l) => l.level === "error" || l.level === "fatal")).toEqual([]);
    } finally {
      await admin.end();
      await server.close();
    }
  });
}
