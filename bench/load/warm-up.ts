/**
 * A warm-up that lasts as long as the server needs (bench/load/job.ts,
 * WarmUpJob): one job, its connections kept throughout (a refresh token
 * chain is minted once), the server's CPU time read from /proc at every
 * slice and set against the answers the slice got.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { WarmUpJob, WarmUpResult } from "./job.ts";
import { cpuTimeMs } from "./proc.ts";
import { runJob } from "./run-job.ts";
import { warmedUp } from "../stats.ts";
import { newTally, result, type Control } from "./tally.ts";

export async function runWarmUp(warmUp: WarmUpJob): Promise<WarmUpResult> {
  const { job, pid, sliceMs, minSeconds, maxSeconds, reference } = warmUp;
  const tally = newTally();
  let stop!: () => void;
  const control: Control = { done: new Promise<void>((resolve) => (stop = resolve)), latency: (ms) => ms };
  const started = performance.now();
  const running = runJob(job, control, tally);
  // A runner that fails early (a refused connection) is reported once the warm-up is over, not left unhandled.
  const settled = Promise.allSettled([running]);
  const cpuUsPerAnswer: number[] = [];
  let cpuBefore = cpuTimeMs(pid);
  let answersBefore = 0;
  try {
    for (;;) {
      const elapsed = performance.now() - started;
      if (elapsed >= maxSeconds * 1000 || (elapsed >= minSeconds * 1000 && warmedUp(cpuUsPerAnswer, reference))) break;
      await sleep(sliceMs);
      const cpu = cpuTimeMs(pid);
      const got = tally.ok - answersBefore;
      cpuUsPerAnswer.push(got > 0 ? ((cpu - cpuBefore) * 1000) / got : Number.POSITIVE_INFINITY);
      cpuBefore = cpu;
      answersBefore = tally.ok;
    }
  } finally {
    stop();
  }
  const [outcome] = await settled;
  if (outcome!.status === "rejected") throw outcome!.reason instanceof Error ? outcome!.reason : new Error(String(outcome!.reason));
  return { ...result(outcome!.value, (performance.now() - started) / 1000), cpuUsPerAnswer };
}
