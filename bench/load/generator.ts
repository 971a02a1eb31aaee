/**
 * The load generator: a process of its own (forked by bench/load/client.ts),
 * so that generating load never shares an event loop with a measured server
 * or with the benchmark's own bookkeeping. HTTP/1.1 load is autocannon's;
 * gRPC needs HTTP/2, which autocannon does not speak, so it is a small loop
 * over node:http2 that keeps `connections` calls in flight, multiplexed over
 * a few sessions as gRPC clients do. The same code loads both sides of every
 * comparison.
 */
import http2 from "node:http2";
import autocannon from "autocannon";
import { percentile } from "../stats.ts";
import type { Http2Job, HttpJob, LoadJob, LoadResult } from "./job.ts";

/** How often autocannon samples, and so how closely a job keeps to its length, in ms. */
const sampleMs = 50;

/** Concurrent gRPC calls per HTTP/2 session. */
const streamsPerSession = 8;

interface Tally {
  ok: number;
  failed: number;
  firstFailure?: string;
}

function fail(tally: Tally, why: string): void {
  tally.failed++;
  tally.firstFailure ??= why;
}

/** A JSON object, or an empty one when the body is not JSON (the caller then counts a failure). */
function parseObject(body: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

async function runHttp(job: HttpJob & LoadJob): Promise<LoadResult> {
  const tally: Tally = { ok: 0, failed: 0 };
  const expected = job.expectStatus ?? 200;
  const bodies = job.bodies ?? [];
  // Refresh tokens ready to be sent: a chain's answer puts its successor here before its connection builds the next request.
  const ready = [...(job.chain?.tokens ?? [])];
  let primers = job.chain ? job.connections : 0;
  let turn = 0;
  const request: autocannon.Request = {
    method: job.method,
    setupRequest: (req) => {
      if (job.chain) {
        // autocannon builds every connection's first request before any is sent and then sends whichever was built
        // last on all of them: that would reuse one token everywhere. So each connection's first request reads the
        // discovery document instead and is not counted.
        if (primers > 0) {
          primers--;
          return { ...req, method: "GET", path: job.chain.primerPath, body: undefined };
        }
        // With none ready (chains broke), the request fails and is counted.
        const token = ready.shift() ?? "none-ready";
        return { ...req, body: job.chain.template.replace("{token}", encodeURIComponent(token)) };
      }
      return bodies.length > 0 ? { ...req, body: bodies[turn++ % bodies.length]! } : req;
    },
    onResponse: (status, body, _context, headers) => {
      const location = Object.entries(headers ?? {}).find(([name]) => name.toLowerCase() === "location")?.[1];
      if (job.chain && status === 200) {
        const next = parseObject(body) as { refresh_token?: string; token_endpoint?: string };
        if (next.refresh_token) {
          ready.push(next.refresh_token);
          tally.ok++;
        } else if (!next.token_endpoint) fail(tally, `HTTP 200 without a refresh_token: ${body.slice(0, 300)}`);
      } else if (status !== expected) fail(tally, `HTTP ${status} ${body.slice(0, 300)}`);
      else if (job.expectLocation && !String(location ?? "").includes(job.expectLocation)) fail(tally, `HTTP ${status} to ${String(location)}`);
      else tally.ok++;
    },
  };
  const started = performance.now();
  const result = await autocannon({
    url: job.url,
    connections: job.connections,
    duration: job.seconds,
    // autocannon looks at its clock only when it samples (every second by default): a half-second job would run a whole one.
    sampleInt: sampleMs,
    headers: job.headers ?? {},
    requests: [request],
    initialContext: {},
  });
  const seconds = (performance.now() - started) / 1000;
  if (result.errors > 0) fail(tally, `${result.errors} connection errors or timeouts`);
  return { seconds, rate: tally.ok / seconds, p99: result.latency.p99, ok: tally.ok, failed: tally.failed, ...(tally.firstFailure ? { firstFailure: tally.firstFailure } : {}) };
}

async function runGrpc(job: Http2Job & LoadJob): Promise<LoadResult> {
  const tally: Tally = { ok: 0, failed: 0 };
  const frames = job.frames.map((frame) => Buffer.from(frame, "base64"));
  const sessions = Array.from({ length: Math.max(1, Math.ceil(job.connections / streamsPerSession)) }, () => http2.connect(job.origin));
  await Promise.all(sessions.map((session) => new Promise((resolve, reject) => session.once("connect", resolve).once("error", reject))));
  const latencies: number[] = [];
  let turn = 0;
  const call = (session: http2.ClientHttp2Session) =>
    new Promise<void>((resolve) => {
      const started = performance.now();
      const stream = session.request({
        ":method": "POST",
        ":path": job.path,
        "content-type": "application/grpc+proto",
        te: "trailers",
        ...job.headers,
      });
      let status = 0;
      let grpcStatus: string | undefined;
      let grpcMessage = "";
      stream.on("response", (headers) => {
        status = Number(headers[":status"]);
        if (headers["grpc-status"] !== undefined) grpcStatus = String(headers["grpc-status"]);
        grpcMessage = String(headers["grpc-message"] ?? "");
      });
      stream.on("trailers", (trailers) => {
        grpcStatus = String(trailers["grpc-status"]);
        grpcMessage = String(trailers["grpc-message"] ?? "");
      });
      stream.on("data", () => undefined);
      stream.on("error", (error: Error) => fail(tally, error.message));
      stream.on("close", () => {
        latencies.push(performance.now() - started);
        if (status === 200 && grpcStatus === "0") tally.ok++;
        else if (!stream.rstCode) fail(tally, `HTTP ${status} grpc-status ${grpcStatus} ${decodeURIComponent(grpcMessage)}`);
        resolve();
      });
      stream.end(frames[turn++ % frames.length]);
    });
  const started = performance.now();
  const deadline = started + job.seconds * 1000;
  await Promise.all(
    Array.from({ length: job.connections }, async (_, i) => {
      const session = sessions[i % sessions.length]!;
      while (performance.now() < deadline) await call(session);
    }),
  );
  for (const session of sessions) session.close();
  const seconds = (performance.now() - started) / 1000;
  return { seconds, rate: tally.ok / seconds, p99: percentile(latencies, 99), ok: tally.ok, failed: tally.failed, ...(tally.firstFailure ? { firstFailure: tally.firstFailure } : {}) };
}

process.on("message", (message: { id: number; job: LoadJob }) => {
  const { id, job } = message;
  const run = job.protocol === "grpc" ? runGrpc(job) : runHttp(job);
  run.then(
    (result) => process.send!({ id, result }),
    (error: unknown) => process.send!({ id, error: error instanceof Error ? error.message : String(error) }),
  );
});
// The benchmark ended (even by a crash): nothing is left to measure for.
process.once("disconnect", () => process.exit(0));
process.send!({ ready: true });
