/**
 * A load job by its protocol, alone for its `seconds` or under the Control
 * of whoever runs it (bench/load/turns.ts).
 */
import { runGrpc } from "./grpc-load.ts";
import { runHttp } from "./http-load.ts";
import type { LoadJob, LoadResult } from "./job.ts";
import { newTally, result, type Control, type Tally } from "./tally.ts";

/** Runs `job` under `control`, counting into `tally` (which the caller may read while it runs). */
export function runJob(job: LoadJob, control: Control, tally: Tally = newTally()): Promise<Tally> {
  return job.protocol === "grpc" ? runGrpc(job, control, tally) : runHttp(job, control, tally);
}

/** A job run alone for its `seconds`: its answers over the seconds it took, from its first connection to its end. */
export async function runAlone(job: LoadJob): Promise<LoadResult> {
  const started = performance.now();
  const control: Control = { done: new Promise((resolve) => setTimeout(resolve, job.seconds * 1000)), latency: (ms) => ms };
  const tally = await runJob(job, control);
  return result(tally, (performance.now() - started) / 1000);
}
