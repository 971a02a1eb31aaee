import http from "node:http";
import type { AddressInfo } from "node:net";
import { HTTP, type CloudEvent } from "cloudevents";
import { Webhook } from "standardwebhooks";

/** One request a receiver got. */
export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** How a path answers its n-th request (from 1): a status, or "hang" to never answer. */
export type Answer = (n: number) => number | "hang" | { status: number; location?: string; body?: string };

/**
 * A webhook receiver on loopback: records every request by path and answers
 * as told (200 unless a path was given an answer).
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  private readonly answers = new Map<string, Answer>();
  private readonly waiters: (() => void)[] = [];
  private server!: http.Server;
  baseUrl = "";

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const path = req.url ?? "/";
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
        this.received.push({ path, headers, body: Buffer.concat(chunks).toString("utf8") });
        const n = this.received.filter((r) => r.path === path).length;
        for (const wake of this.waiters.splice(0)) wake();
        const answer = this.answers.get(path)?.(n) ?? 200;
        if (answer === "hang") return;
        const { status, location, body } = typeof answer === "number" ? { status: answer, location: undefined, body: undefined } : answer;
        res.writeHead(status, location ? { location } : {}).end(body ?? "ok");
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  url(path: string): string {
    return this.baseUrl + path;
  }

  answer(path: string, answer: Answer): void {
    this.answers.set(path, answer);
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  /** Waits until `path` got `count` requests (or throws after timeoutMs). */
  async waitFor(path: string, count: number, timeoutMs = 15_000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.at(path).length < count) {
      if (Date.now() > deadline) throw new Error(`${path}: ${this.at(path).length} of ${count} requests after ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
    return this.at(path);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Verifies a request with the standardwebhooks package (throws when no signature matches) and parses it with cloudevents. */
export function verifiedEvent(secret: string, request: Received): CloudEvent<Record<string, unknown>> {
  new Webhook(secret).verify(request.body, request.headers);
  return HTTP.toEvent({ headers: request.headers, body: request.body }) as CloudEvent<Record<string, unknown>>;
}
