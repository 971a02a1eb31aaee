/**
 * The load generator: a process of its own (forked by bench/load/client.ts),
 * so that generating load never shares an event loop with a measured server
 * or with the benchmark's own bookkeeping. The same code loads both sides of
 * every comparison: one job at a time, one until its server is warm
 * (bench/load/warm-up.ts), or two at once taking turns on the servers' CPU
 * (bench/load/turns.ts); HTTP/1.1 by autocannon
 * (http-load.ts), gRPC by a loop over node:http2 (grpc-load.ts).
 */
import type { LoadJob, TurnsJob, WarmUpJob } from "./job.ts";
import { runAlone } from "./run-job.ts";
import { runInTurns } from "./turns.ts";
import { runWarmUp } from "./warm-up.ts";

process.on("message", (message: { id: number; job?: LoadJob; turns?: TurnsJob; warmUp?: WarmUpJob }) => {
  const { id, job, turns, warmUp } = message;
  const run: Promise<unknown> = turns ? runInTurns(turns) : warmUp ? runWarmUp(warmUp) : runAlone(job!);
  run.then(
    (answer) => process.send!({ id, result: answer }),
    (error: unknown) => process.send!({ id, error: error instanceof Error ? error.message : String(error) }),
  );
});
// The benchmark ended (even by a crash): nothing is left to measure for.
process.once("disconnect", () => process.exit(0));
process.send!({ ready: true });
