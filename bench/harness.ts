/**
 * What the benchmarks share: starting a process and waiting for it to say it
 * is ready, the load generator, and the baseline every ratio is taken
 * against (a bare node:http JSON handler on port 18190).
 */
import { spawn, type ChildProcess } from "node:child_process";
import http from "node:http";

export const seconds = Number(process.env.BENCH_SECONDS ?? 5);
export const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);

export interface Scenario {
  name: string;
  port: number;
  method: "GET" | "POST";
  path: string;
  headers?: Record<string, string>;
  /** The same body every time, or one per request. */
  body?: string | (() => string);
}

export function start(command: string, args: string[], env: Record<string, string>, ready: RegExp): Promise<{ child: ChildProcess; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready.test(output)) resolve({ child, output });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`${command} exited with ${code}:\n${output}`)));
  });
}

export async function load(s: Scenario): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const deadline = Date.now() + seconds * 1000;
  let done = 0;
  let failed = 0;
  let firstFailure = "";
  const one = () =>
    new Promise<void>((resolve) => {
      const req = http.request({ host: "127.0.0.1", port: s.port, method: s.method, path: s.path, headers: s.headers, agent }, (res) => {
        const ok = res.statusCode! >= 200 && res.statusCode! < 300;
        let body = "";
        if (ok) res.resume();
        else res.on("data", (chunk: Buffer) => (body += chunk.toString()));
        res.on("end", () => {
          if (ok) done++;
          else {
            failed++;
            firstFailure ||= `HTTP ${res.statusCode} ${body.slice(0, 300)}`;
          }
          resolve();
        });
      });
      req.on("error", (error) => {
        failed++;
        firstFailure ||= error.message;
        resolve();
      });
      req.end(typeof s.body === "function" ? s.body() : s.body);
    });
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < deadline) await one();
    }),
  );
  agent.destroy();
  if (failed) throw new Error(`${s.name}: ${failed} requests failed, the first with ${firstFailure}`);
  return done / seconds;
}

export const baselineSource = `require("node:http").createServer((q, r) => { q.resume(); q.on("end", () => { const b = JSON.stringify({ name: "shomei", ok: true }); r.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(b) }); r.end(b); }); }).listen(18190, "127.0.0.1", () => console.log("ready"));`;

