import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

type Behaviour = "serve" | "error500" | "silent";

interface Published {
  der: Buffer;
  etag: string;
  lastModified: string;
  behaviour: Behaviour;
}

/**
 * A loopback HTTP server publishing CRLs, the way a CA's distribution point
 * does: ETag and Last-Modified, 304 to a matching If-None-Match. It counts
 * requests and body bytes sent per path, and can be told to answer 500 or
 * not at all.
 */
export class CrlHttpServer {
  private readonly published = new Map<string, Published>();
  readonly requests = new Map<string, number>();
  readonly bodyBytes = new Map<string, number>();
  readonly notModified = new Map<string, number>();
  private server: Server | undefined;
  private base = "";

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const path = req.url ?? "/";
      this.requests.set(path, (this.requests.get(path) ?? 0) + 1);
      const list = this.published.get(path);
      if (!list) return void res.writeHead(404).end();
      if (list.behaviour === "silent") return; // never answers; the client's timeout ends it
      if (list.behaviour === "error500") return void res.writeHead(500).end("unavailable");
      if (req.headers["if-none-match"] === list.etag) {
        this.notModified.set(path, (this.notModified.get(path) ?? 0) + 1);
        return void res.writeHead(304, { etag: list.etag }).end();
      }
      this.bodyBytes.set(path, (this.bodyBytes.get(path) ?? 0) + list.der.length);
      res.writeHead(200, { "content-type": "application/pkix-crl", etag: list.etag, "last-modified": list.lastModified, "content-length": list.der.length });
      res.end(list.der);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  url(path: string): string {
    return `${this.base}${path}`;
  }

  publish(path: string, der: Buffer): void {
    this.published.set(path, {
      der,
      etag: `"${createHash("sha256").update(der).digest("hex").slice(0, 16)}"`,
      lastModified: new Date().toUTCString(),
      behaviour: "serve",
    });
  }

  behave(path: string, behaviour: Behaviour): void {
    this.published.get(path)!.behaviour = behaviour;
  }

  count(path: string): { requests: number; bodyBytes: number; notModified: number } {
    return { requests: this.requests.get(path) ?? 0, bodyBytes: this.bodyBytes.get(path) ?? 0, notModified: this.notModified.get(path) ?? 0 };
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
