/**
 * Two servers loaded at once, taking turns on the one CPU they share: while
 * one runs, the other is stopped (SIGSTOP) and its requests wait in its
 * sockets; every `turnMs` they swap (SIGSTOP, SIGCONT). This machine's speed
 * drifts by tens of per cent within a second (docs/bench-method.md);
 * turns a tenth of a second long put both sides in the same stretch of it,
 * where slices of a second, each with its own connections, did not. Both
 * servers keep their connections for the whole round, so a turn costs no
 * reconnecting. A stopped server does no work and its requests queue as
 * under steady load (every connection keeps one request in flight), so it
 * is measured alone, as in a slice; running both at once instead would
 * change how requests queue (and favours a server that joins concurrent
 * writes).
 *
 * Each side's rate is its answers over its own turns; its latency leaves out
 * the time its server was stopped; its server's CPU time is read while both
 * are stopped, and PostgreSQL's is charged to whichever side's turn it was
 * spent in.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { TurnResult, TurnsJob } from "./job.ts";
import { cpuTimeMs, postgresCpuTimes } from "./proc.ts";
import { runJob } from "./run-job.ts";
import { newTally, result, type Control, type Tally } from "./tally.ts";
import { TurnLog, type SideIndex } from "./turn-log.ts";

const other = (side: SideIndex): SideIndex => (side === 0 ? 1 : 0);

function signal(pid: number, name: "SIGSTOP" | "SIGCONT"): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    throw new Error(`could not ${name === "SIGSTOP" ? "stop" : "resume"} server process ${pid}: ${(error as Error).message}`);
  }
}

/**
 * PostgreSQL's CPU time charged to the side whose turn it was: its
 * processes' times read at every swap. A process that starts during the
 * round (a connection opened) is found at the end, and its time shared in
 * proportion to what each side was charged.
 */
class DatabaseMeter {
  private readonly last = postgresCpuTimes();
  readonly charged: [number, number] = [0, 0];

  charge(side: SideIndex): void {
    for (const [pid, before] of this.last) {
      const now = cpuTimeMs(pid);
      if (!Number.isFinite(now)) {
        this.last.delete(pid);
        continue;
      }
      this.charged[side] += now - before;
      this.last.set(pid, now);
    }
  }

  finish(): [number, number] {
    let started = 0;
    for (const [pid, ms] of postgresCpuTimes()) if (!this.last.has(pid)) started += ms;
    const total = this.charged[0] + this.charged[1];
    const share = (side: SideIndex) => this.charged[side] + (total > 0 ? (started * this.charged[side]) / total : started / 2);
    return [share(0), share(1)];
  }
}

/** Where a side's counted part began: its server's CPU time, its answers and latencies so far, the time it had run, and PostgreSQL's CPU charged to it. */
interface Start {
  cpuMs: number;
  ok: number;
  latencies: number;
  runningMs: number;
  databaseMs: number;
}

/**
 * Runs `turns.jobs` at once, their servers taking turns, until each server
 * has had its job's `seconds` after its first `settleMs`, which are not
 * counted.
 */
export async function runInTurns(turns: TurnsJob): Promise<[TurnResult, TurnResult]> {
  const { pids, first, turnMs, jobs, settleMs } = turns;
  if (pids[0] === pids[1]) throw new Error("two sides on one process cannot take turns");
  try {
    signal(pids[0], "SIGSTOP");
    signal(pids[1], "SIGSTOP");
    const meter = turns.withPostgres ? new DatabaseMeter() : undefined;
    const tallies = [newTally(), newTally()];
    // Read while the side's server is stopped: at the start, or at the end of the turn in which it has settled.
    const startOf = (side: SideIndex, runningMs: number): Start => {
      const tally = tallies[side]!;
      return { cpuMs: cpuTimeMs(pids[side]), ok: tally.ok, latencies: tally.latencies.length, runningMs, databaseMs: meter?.charged[side] ?? 0 };
    };
    const starts: [Start | undefined, Start | undefined] = settleMs > 0 ? [undefined, undefined] : [startOf(0, 0), startOf(1, 0)];
    // A side's counted seconds start where its settling ended, at the end of a turn.
    const targetMs = (side: SideIndex) => (starts[side]?.runningMs ?? settleMs) + jobs[side].seconds * 1000;
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    signal(pids[first], "SIGCONT");
    const log = new TurnLog(first, performance.now());
    const running = jobs.map((job, side) => {
      const control: Control = { done, latency: (ms, end) => ms - log.stoppedWithin(side as SideIndex, end - ms, end) };
      return runJob(job, control, tallies[side]);
    });
    // A runner that fails early (a refused connection) is reported once the turns are over, not left unhandled.
    const settled = Promise.allSettled(running);
    try {
      for (;;) {
        const side = log.runningSide!;
        const left = targetMs(side) - log.runningMs(side, performance.now());
        if (left > 0) await sleep(Math.min(turnMs, left));
        const next = ([other(side), side] as const).find((s) => log.runningMs(s, performance.now()) < targetMs(s));
        // The other side has had all its time: this one's turn goes on.
        if (next === side) continue;
        signal(pids[side], "SIGSTOP");
        const at = performance.now();
        meter?.charge(side);
        if (!starts[side] && log.runningMs(side, at) >= settleMs) starts[side] = startOf(side, log.runningMs(side, at));
        if (next === undefined) {
          log.end(at);
          break;
        }
        signal(pids[next], "SIGCONT");
        log.switchTo(next, at);
      }
    } finally {
      finish();
    }
    const cpuAfter = pids.map(cpuTimeMs);
    const database = meter?.finish();
    // Both servers stay stopped until every connection is closed: an answer given after the last turn is not counted.
    const outcomes = await settled;
    const end = performance.now();
    return [0, 1].map((side) => {
      const outcome = outcomes[side]!;
      if (outcome.status === "rejected") throw outcome.reason instanceof Error ? outcome.reason : new Error(String(outcome.reason));
      const start = starts[side]!;
      return {
        ...result(counted(outcome.value, start), (log.runningMs(side as SideIndex, end) - start.runningMs) / 1000),
        cpuMs: cpuAfter[side]! - start.cpuMs,
        databaseCpuMs: database ? database[side]! - start.databaseMs : Number.NaN,
      };
    }) as [TurnResult, TurnResult];
  } finally {
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGCONT");
      } catch {
        // Gone already: nothing to resume.
      }
    }
  }
}

/** A tally without what it had counted at `start` (latencies are recorded in the order of the answers). */
function counted(tally: Tally, start: Start): Tally {
  return { ...tally, ok: tally.ok - start.ok, latencies: tally.latencies.slice(start.latencies) };
}
