/**
 * HTTP/1.1 load with autocannon: `connections` keep-alive connections, each
 * with one request in flight, until the job's Control says stop. Checks
 * every answer (status, redirect target, refresh token chains).
 */
import autocannon from "autocannon";
import type { HttpJob, LoadJob } from "./job.ts";
import { fail, newTally, type Control, type Tally } from "./tally.ts";

/** How often autocannon samples, and so how soon a job stops when told, in ms. */
const sampleMs = 50;

/** A JSON object, or an empty one when the body is not JSON (the caller then counts a failure). */
function parseObject(body: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Sends `job` until `control.done`; resolves when its connections have closed. */
export function runHttp(job: HttpJob & LoadJob, control: Control, tally: Tally = newTally()): Promise<Tally> {
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
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: job.url,
        connections: job.connections,
        // The job ends when control.done says so; autocannon acts on stop() only when it next samples (every second by
        // default, every sampleMs here).
        duration: 3600,
        sampleInt: sampleMs,
        headers: job.headers ?? {},
        requests: [request],
        initialContext: {},
      },
      (error: unknown, result: autocannon.Result) => {
        if (error) return reject(error instanceof Error ? error : new Error(String(error)));
        if (result.errors > 0) fail(tally, `${result.errors} connection errors or timeouts`);
        resolve(tally);
      },
    );
    instance.on("response", (_client, _status, _bytes, ms) => tally.latencies.push(control.latency(ms, performance.now())));
    void control.done.then(() => instance.stop());
  });
}
