/**
 * The parent's side of the load generator: one forked process for the whole
 * run (bench/load/generator.ts), a job at a time, and the resident memory of
 * the measured server sampled from /proc while its job runs.
 */
import { fork, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { LoadJob, LoadResult } from "./job.ts";

export interface Measurement extends LoadResult {
  /** The highest VmRSS of the server process seen during the job, in MB (NaN when it could not be read). */
  rssMb: number;
  /** CPU time the server process (all its threads) spent during the job, in ms (NaN when it could not be read). */
  cpuMs: number;
  /** CPU time PostgreSQL's processes spent during the job, in ms, when asked for (NaN otherwise). */
  databaseCpuMs: number;
}

/** Clock ticks a second of /proc/<pid>/stat's times: 100 on every Linux this runs on (USER_HZ). */
const ticksPerSecond = 100;

/** User and system CPU time of a process so far, in ms, or NaN when /proc does not say. */
export function cpuTimeMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces: the fields after it start past its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
  } catch {
    return Number.NaN;
  }
}

/** CPU time so far of every PostgreSQL server process on the machine, in ms, by process id. */
export function postgresCpuTimes(): Map<number, number> {
  const times = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() !== "postgres") continue;
    } catch {
      continue;
    }
    const ms = cpuTimeMs(Number(entry));
    if (Number.isFinite(ms)) times.set(Number(entry), ms);
  }
  return times;
}

/**
 * PostgreSQL's CPU time between two readings of postgresCpuTimes (the run's
 * database work: the bench's PostgreSQL serves nothing else while it runs):
 * what each process spent since the first reading, or since it started. A
 * backend whose connection closed meanwhile is not counted; subtracting
 * totals instead would take its whole life's time off the interval.
 */
export function postgresCpuSpentMs(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

/** VmRSS of a process in MB, or NaN when /proc does not say (not Linux, or the process is gone). */
export function residentMb(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

export class LoadGenerator {
  private child: ChildProcess | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (r: LoadResult) => void; reject: (e: Error) => void }>();

  /** The generator's process id (once started). */
  get pid(): number {
    if (this.child?.pid === undefined) throw new Error("the load generator is not started");
    return this.child.pid;
  }

  async start(): Promise<void> {
    const child = fork(fileURLToPath(new URL("./generator.ts", import.meta.url)), [], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      child.once("message", () => resolve());
      child.once("exit", (code) => reject(new Error(`the load generator exited with ${code}`)));
    });
    child.on("message", (message: { id: number; result?: LoadResult; error?: string }) => {
      const waiting = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error !== undefined) waiting?.reject(new Error(message.error));
      else waiting?.resolve(message.result!);
    });
    child.on("error", (error) => console.error(`the load generator: ${error.message}`));
    child.on("exit", (code) => {
      for (const waiting of this.pending.values()) waiting.reject(new Error(`the load generator exited with ${code}`));
      this.pending.clear();
    });
  }

  /**
   * Runs one job against the server with process id `pid`; fails when any
   * request did not answer as expected, or (unless it is a warm-up) none answered.
   */
  async measure(job: LoadJob, pid?: number, warmUp = false, withPostgres = false): Promise<Measurement> {
    if (!this.child) throw new Error("the load generator is not started");
    const sample = () => (pid === undefined ? Number.NaN : residentMb(pid));
    const cpu = () => (pid === undefined ? Number.NaN : cpuTimeMs(pid));
    const databaseCpuBefore = withPostgres ? postgresCpuTimes() : undefined;
    const cpuBefore = cpu();
    let rssMb = sample();
    const sampler = setInterval(() => {
      const now = sample();
      if (Number.isFinite(now) && !(now <= rssMb)) rssMb = now;
    }, 250);
    const id = this.nextId++;
    try {
      const result = await new Promise<LoadResult>((resolve, reject) => {
        if (!this.child?.connected) throw new Error("the load generator has exited");
        this.pending.set(id, { resolve, reject });
        this.child.send({ id, job });
      });
      if (result.failed > 0) throw new Error(`${job.name}: ${result.failed} of ${result.ok + result.failed} requests failed, the first with ${result.firstFailure}`);
      if (result.ok === 0 && !warmUp) throw new Error(`${job.name}: no request answered`);
      return { ...result, rssMb, cpuMs: cpu() - cpuBefore, databaseCpuMs: databaseCpuBefore ? postgresCpuSpentMs(databaseCpuBefore, postgresCpuTimes()) : Number.NaN };
    } finally {
      clearInterval(sampler);
    }
  }

  stop(): void {
    this.child?.kill("SIGTERM");
    this.child = undefined;
  }
}
