/**
 * What a load job counts while it runs, what tells it when to stop and how
 * to reckon a latency, and the figures it reports: shared by the job alone
 * and the jobs taking turns (bench/load/turns.ts).
 */
import { percentile } from "../stats.ts";
import type { LoadResult } from "./job.ts";

/** Answers as expected and not, and each answer's latency in ms (as the job's Control reckons it). */
export interface Tally {
  ok: number;
  failed: number;
  firstFailure?: string;
  latencies: number[];
}

/** A tally of nothing yet. A runner counts into the one it is given, which its caller may read while it runs. */
export function newTally(): Tally {
  return { ok: 0, failed: 0, latencies: [] };
}

/** When a job stops sending, and how long an answer took its server. */
export interface Control {
  /** Resolves when the job is to stop sending. */
  done: Promise<void>;
  /** The latency of an answer received at `end` (performance.now()) after `ms` in flight, less any time its server was stopped. */
  latency: (ms: number, end: number) => number;
}

export function fail(tally: Tally, why: string): void {
  tally.failed++;
  tally.firstFailure ??= why;
}

/** A job's figures: its answers over `seconds` (its own, or its server's turns). */
export function result(tally: Tally, seconds: number): LoadResult {
  return {
    seconds,
    rate: tally.ok / seconds,
    p99: percentile(tally.latencies, 99),
    ok: tally.ok,
    failed: tally.failed,
    ...(tally.firstFailure ? { firstFailure: tally.firstFailure } : {}),
  };
}
