/**
 * A load job by its protocol, alone for its `seconds` or under the Control
 * of whoever runs it (bench/load/turns.ts).
 */
import { runGrpc } from "./grpc-load.ts";
import { runHttp } from "./http-load.ts";
import type { LoadJob, LoadResult } from "./job.ts";
import { result, type Control, type Tally } from "./tally.ts";

export function runJob(job: LoadJob, control: Control): Promise<Tally> {
  return job.protocol === "grpc" ? runGrpc(job, control) : runHttp(job, control);
}

/** A job run alone for its `seconds`: its answers over the seconds it took, from its first connection to its end. */
export async function runAlone(job: LoadJob): Promise<LoadResult> {
  const started = performance.now();
  const control: Control = { done: new Promise((resolve) => setTimeout(resolve, job.seconds * 1000)), latency: (ms) => ms };
  const tally = await runJob(job, control);
  return result(tally, (performance.now() - started) / 1000);
}
