import http2 from "node:http2";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Slow and greedy clients on the cleartext port: half-sent requests are timed
 * out, idle connections do not stay forever, and one address cannot hold more
 * than its share of connections. The limits are set low so that each test
 * sees them act within seconds.
 */

const sqlite = (await databaseTargets()).find((t) => t.name === "sqlite")!;

interface Outcome {
  /** What the server sent before closing, if anything. */
  received: string;
  /** Milliseconds from connecting until the server closed the connection. */
  closedAfterMs: number;
}

/** Opens a raw connection, runs `feed` on it, and resolves when the server closes it (or after `giveUpMs`). */
function rawConnection(port: number, feed: (socket: net.Socket) => void, giveUpMs = 15_000): Promise<Outcome | "still open"> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, "127.0.0.1");
    let received = "";
    const timer = setTimeout(() => {
      socket.destroy();
      resolve("still open");
    }, giveUpMs);
    socket.on("connect", () => feed(socket));
    socket.on("data", (chunk) => (received += chunk.toString("latin1")));
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ received, closedAfterMs: Date.now() - started });
    });
    socket.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "ECONNRESET") reject(error);
    });
  });
}

const connected = (port: number): Promise<net.Socket> =>
  new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => resolve(socket));
    socket.once("error", reject);
  });

/** Whether the server keeps a new connection open and answers a request on it. */
async function answers(port: number): Promise<boolean> {
  const outcome = await rawConnection(port, (socket) => socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"), 5000);
  return outcome !== "still open" && outcome.received.startsWith("HTTP/1.1 200");
}

describe("slow clients on the cleartext port", () => {
  let scratch: ScratchDatabase;
  let server: TestServer;

  beforeAll(async () => {
    scratch = await sqlite.create();
    server = await startTestServer(scratch.url, {
      headersTimeoutMs: 1000,
      requestTimeoutMs: 2000,
      keepAliveTimeoutMs: 1000,
      maxConnectionsPerAddress: 5,
    });
  });
  afterAll(async () => {
    await server?.close();
    await scratch?.drop();
  });

  it("closes a connection whose HTTP/1.1 headers never finish (408), however slowly they trickle", async () => {
    const outcome = await rawConnection(server.port, (socket) => {
      socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n");
      const drip = setInterval(() => socket.writable && socket.write("X-Slow: a\r\n"), 200);
      socket.once("close", () => clearInterval(drip));
    });
    expect(outcome).not.toBe("still open");
    expect((outcome as Outcome).received).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("closes a connection whose HTTP/1.1 body never finishes", async () => {
    const outcome = await rawConnection(server.port, (socket) => {
      socket.write("POST /api/oidc/v1/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\ngrant_type=");
      const drip = setInterval(() => socket.writable && socket.write("a"), 200);
      socket.once("close", () => clearInterval(drip));
    });
    expect(outcome).not.toBe("still open");
  });

  it("closes a connection that sends nothing at all", async () => {
    const outcome = await rawConnection(server.port, () => undefined);
    expect(outcome).not.toBe("still open");
    expect((outcome as Outcome).received).toBe("");
  });

  it("closes an idle keep-alive connection after its request", async () => {
    const outcome = await rawConnection(server.port, (socket) => socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
    expect(outcome).not.toBe("still open");
    expect((outcome as Outcome).received).toMatch(/^HTTP\/1\.1 200 /);
  });

  it("closes an HTTP/2 session that stays idle", async () => {
    const session = http2.connect(server.url);
    session.on("error", () => undefined);
    const closed = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 15_000);
      session.once("close", () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    expect(closed).toBe(true);
  });

  it("refuses a sixth connection from one address while five are open, and admits one again when one closes", async () => {
    const held = await Promise.all(Array.from({ length: 5 }, () => connected(server.port)));
    try {
      expect(await answers(server.port)).toBe(false);
      held.pop()!.destroy();
      // The server sees the close a moment later.
      let admitted = false;
      for (let i = 0; i < 50 && !admitted; i++) {
        admitted = await answers(server.port);
        if (!admitted) await new Promise((r) => setTimeout(r, 50));
      }
      expect(admitted).toBe(true);
    } finally {
      for (const socket of held) socket.destroy();
    }
  });

  it("is still healthy", async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});
