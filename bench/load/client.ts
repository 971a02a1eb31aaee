/**
 * The parent's side of the load generator: one forked process for the whole
 * run (bench/load/generator.ts), a job at a time or two taking turns, and
 * the resident memory of the measured servers sampled from /proc while the
 * jobs run.
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { LoadJob, LoadResult, TurnResult, TurnsJob, WarmUpJob, WarmUpResult } from "./job.ts";
import { cpuTimeMs, postgresCpuSpentMs, postgresCpuTimes, residentMb } from "./proc.ts";

export interface Measurement extends LoadResult {
  /** The highest VmRSS of the server process seen during the job, in MB (NaN when it could not be read). */
  rssMb: number;
  /** CPU time the server process (all its threads) spent during the job, in ms (NaN when it could not be read). */
  cpuMs: number;
  /** CPU time PostgreSQL's processes spent during the job, in ms, when asked for (NaN otherwise). */
  databaseCpuMs: number;
}

export class LoadGenerator {
  private child: ChildProcess | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (answer: unknown) => void; reject: (e: Error) => void }>();

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
    child.on("message", (message: { id: number; result?: unknown; error?: string }) => {
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

  /** Sends the generator a message and waits for its answer. */
  private ask<T>(message: { job: LoadJob } | { turns: TurnsJob } | { warmUp: WarmUpJob }): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      if (!this.child?.connected) throw new Error("the load generator has exited");
      this.pending.set(id, { resolve: resolve as (answer: unknown) => void, reject });
      this.child.send({ id, ...message });
    });
  }

  /**
   * Runs one job against the server with process id `pid`; fails when any
   * request did not answer as expected, or none answered.
   */
  async measure(job: LoadJob, pid?: number, withPostgres = false): Promise<Measurement> {
    if (!this.child) throw new Error("the load generator is not started");
    const cpu = () => (pid === undefined ? Number.NaN : cpuTimeMs(pid));
    const databaseCpuBefore = withPostgres ? postgresCpuTimes() : undefined;
    const cpuBefore = cpu();
    const memory = new PeakMemory(pid === undefined ? [] : [pid]);
    try {
      const result = await this.ask<LoadResult>({ job });
      check(job, result, false);
      return { ...result, rssMb: memory.peak[0] ?? Number.NaN, cpuMs: cpu() - cpuBefore, databaseCpuMs: databaseCpuBefore ? postgresCpuSpentMs(databaseCpuBefore, postgresCpuTimes()) : Number.NaN };
    } finally {
      memory.stop();
    }
  }

  /**
   * Runs `warmUp.job` until its server is warm (bench/load/warm-up.ts);
   * fails when any request did not answer as expected. Slices without
   * answers come back as Infinity.
   */
  async warmUp(warmUp: WarmUpJob): Promise<WarmUpResult> {
    if (!this.child) throw new Error("the load generator is not started");
    const result = await this.ask<WarmUpResult>({ warmUp });
    check(warmUp.job, result, true);
    // Infinity crosses the process boundary as null (JSON).
    return { ...result, cpuUsPerAnswer: result.cpuUsPerAnswer.map((us: number | null) => us ?? Number.POSITIVE_INFINITY) };
  }

  /**
   * Runs two jobs at once, their servers taking turns on their CPU
   * (bench/load/turns.ts); fails as `measure` does when either side does.
   */
  async measureInTurns(turns: TurnsJob): Promise<[Measurement, Measurement]> {
    if (!this.child) throw new Error("the load generator is not started");
    const memory = new PeakMemory(turns.pids);
    try {
      const results = await this.ask<[TurnResult, TurnResult]>({ turns });
      return results.map((result, side) => {
        check(turns.jobs[side]!, result, false);
        // NaN crosses the process boundary as null (JSON).
        const number = (value: number | null) => value ?? Number.NaN;
        return { ...result, p99: number(result.p99), cpuMs: number(result.cpuMs), databaseCpuMs: number(result.databaseCpuMs), rssMb: memory.peak[side]! };
      }) as [Measurement, Measurement];
    } finally {
      memory.stop();
    }
  }

  stop(): void {
    this.child?.kill("SIGTERM");
    this.child = undefined;
  }
}

/** Fails when any request of `job` did not answer as expected, or (unless it is a warm-up) none answered. */
function check(job: LoadJob, result: LoadResult, warmUp: boolean): void {
  if (result.failed > 0) throw new Error(`${job.name}: ${result.failed} of ${result.ok + result.failed} requests failed, the first with ${result.firstFailure}`);
  if (result.ok === 0 && !warmUp) throw new Error(`${job.name}: no request answered`);
}

/** The highest VmRSS of each process seen from now until stop(), sampled every 250 ms, in MB (NaN when unreadable). */
class PeakMemory {
  readonly peak: number[];
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pids: readonly number[]) {
    this.peak = pids.map(residentMb);
    this.timer = setInterval(() => this.sample(), 250);
  }

  private sample(): void {
    this.pids.forEach((pid, i) => {
      const now = residentMb(pid);
      if (Number.isFinite(now) && !(now <= this.peak[i]!)) this.peak[i] = now;
    });
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
