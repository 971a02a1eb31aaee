/**
 * What the benchmarks share: starting a process and waiting for it to say it
 * is ready, stopping it, the load generator (a process of its own, see
 * bench/load/generator.ts), and the bare node:http JSON handler that the
 * path and OCSP benchmarks take their ratios against.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { moveToLoadCpus, onServerCpu } from "./cpus.ts";
import { LoadGenerator } from "./load/client.ts";

export const seconds = Number(process.env.BENCH_SECONDS ?? 3);
export const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);

/**
 * Processes each measured server runs as (BENCH_PROCESSES), a key's rounds
 * taking them in turn. Processes of the same build on the same database at
 * the same moment differ in speed by up to 10 %, each for as long as it
 * lives (fixing address randomisation and V8's seeds left them as far
 * apart), so a key measured on one process per side carried that process's
 * luck (docs/bench-method.md, Why several processes). Two, not
 * three: with three, each waits two rounds between its own, long enough on
 * this machine to start them slow (docs/bench-method.md, Idle processes start slow).
 */
export const processesPerServer = Math.max(1, Number(process.env.BENCH_PROCESSES ?? 2));

/** One process of a measured server: where it answers and its process id. */
export interface Instance {
  url: string;
  pid: number;
}

export interface Scenario {
  name: string;
  port: number;
  method: "GET" | "POST";
  path: string;
  headers?: Record<string, string>;
  /** The same body every time, or these in turn. */
  body?: string | string[];
}

/** Every process the benchmark started that is still running, other processes to end with it, and the directories it made. */
const running = new Set<ChildProcess>();
const others = new Set<() => number | undefined>();
const directories = new Set<string>();

// However the benchmark ends (a crash, Ctrl-C), the servers it started end with it rather than linger, and its
// databases go with them.
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
  for (const pidOf of others) {
    const pid = pidOf();
    if (pid === undefined) continue;
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Ended already.
    }
  }
  for (const dir of directories) rmSync(dir, { recursive: true, force: true });
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(130));

/**
 * A process the benchmark starts by other means (a test helper's), to be
 * ended with it however it ends: `pidOf` says its id once it has one, so it
 * can be named before it starts. Call what this returns once the process
 * has been stopped, so its id, which another process may take, is left alone.
 */
export function endsWithBenchmark(pidOf: () => number | undefined): () => void {
  others.add(pidOf);
  return () => others.delete(pidOf);
}

/** Starts a measured server on the servers' CPU (bench/cpus.ts) and waits until its output matches `ready`. */
export function start(command: string, args: string[], env: Record<string, string>, ready: RegExp): Promise<{ child: ChildProcess; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(...onServerCpu(command, args), { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    running.add(child);
    child.once("exit", () => running.delete(child));
    let output = "";
    let started = false;
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (!started && ready.test(output)) {
        started = true;
        resolve({ child, output });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => {
      if (!started) reject(new Error(`${command} ${args.join(" ")} exited with ${code}:\n${output}`));
    });
  });
}

/** A new directory under the system's temporary one, removed when the benchmark ends at the latest. */
export function temporaryDirectory(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  directories.add(dir);
  return dir;
}

/** SIGTERM, and SIGKILL if the process has not ended within 5 s. */
export function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

let generator: Promise<LoadGenerator> | undefined;

/** The run's one load generator process, started on first use. */
export function loadGenerator(): Promise<LoadGenerator> {
  return (generator ??= (async () => {
    const started = new LoadGenerator();
    await started.start();
    // The generator and the benchmark's own bookkeeping keep off the measured servers' CPU.
    moveToLoadCpus(started.pid);
    moveToLoadCpus(process.pid);
    return started;
  })());
}

export async function stopLoadGenerator(): Promise<void> {
  if (generator) (await generator).stop();
  generator = undefined;
}

/** Requests per second of a 2xx answer, `connections` at a time for `seconds`; fails on any other answer. */
export async function load(s: Scenario, pid?: number): Promise<number> {
  const bodies = s.body === undefined ? undefined : typeof s.body === "string" ? [s.body] : s.body;
  const job = {
    protocol: "http1" as const,
    name: s.name,
    url: `http://127.0.0.1:${s.port}${s.path}`,
    method: s.method,
    seconds,
    connections,
    ...(s.headers ? { headers: s.headers } : {}),
    ...(bodies ? { bodies } : {}),
  };
  return (await (await loadGenerator()).measure(job, pid)).rate;
}

export const baselineSource = `require("node:http").createServer((q, r) => { q.resume(); q.on("end", () => { const b = JSON.stringify({ name: "shomei", ok: true }); r.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(b) }); r.end(b); }); }).listen(18190, "127.0.0.1", () => console.log("ready"));`;
