import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** What the server answers at one path. */
export type JwksAnswer =
  | { keys: unknown[] }
  | { status: number; body: string; headers?: Record<string, string> }
  | { bytes: number };

/**
 * A client's key server on loopback: each path answers what the test set
 * (a key set, any status and body, or a body of n bytes), and counts the
 * requests it got, so a test sees how often shomei fetched.
 */
export class JwksServer {
  private readonly answers = new Map<string, JwksAnswer>();
  private readonly hits = new Map<string, number>();
  private server: Server | undefined;
  private port = 0;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
      const answer = this.answers.get(path);
      if (!answer) return void res.writeHead(404).end();
      if ("keys" in answer) return void res.writeHead(200, { "content-type": "application/jwk-set+json" }).end(JSON.stringify({ keys: answer.keys }));
      if ("bytes" in answer) {
        // Streamed without Content-Length, so only reading can tell its size.
        res.writeHead(200, { "content-type": "application/json" });
        const chunk = Buffer.alloc(8192, 0x20);
        for (let sent = 0; sent < answer.bytes; sent += chunk.length) res.write(chunk.subarray(0, Math.min(chunk.length, answer.bytes - sent)));
        return void res.end();
      }
      res.writeHead(answer.status, answer.headers).end(answer.body);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  set(path: string, answer: JwksAnswer): void {
    this.answers.set(path, answer);
  }

  requests(path: string): number {
    return this.hits.get(path) ?? 0;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
