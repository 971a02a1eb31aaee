import { Worker } from "node:worker_threads";
import type { MigrationReport } from "../../src/storage/migrate.ts";
import type { ConsumeResult, OneTimeKind } from "../../src/domain/single-use.ts";

export type WorkerTask =
  | { type: "migrate" }
  /** Fires one consume per entry of `nows`, all at once, on the worker's connection. */
  | { type: "consume"; kind: OneTimeKind; keyHash: string; nows: number[] }
  /** Fires `count` sign-in attempts for one account at once, each with a wrong secret whose check takes `checkMs`. */
  | { type: "login-attempts"; secretKeyHex: string; account: string; count: number; checkMs: number; now: number };

export interface WorkerInput {
  url: string;
  /** Int32Array[1]: the number of the round the workers may start (round r starts when it exceeds r). */
  gate: SharedArrayBuffer;
  rounds: WorkerTask[];
}

export type WorkerMessage =
  | { type: "ready"; round: number }
  | { type: "migrated"; round: number; report: MigrationReport }
  | { type: "consumed"; round: number; results: { now: number; result: ConsumeResult }[] }
  /** How many of the attempts were admitted to their check. */
  | { type: "attempted"; round: number; checks: number; refused: number };

export type WorkerOutcome = Exclude<WorkerMessage, { type: "ready" }>;

const script = new URL("./storage-worker.mjs", import.meta.url);

/**
 * Starts one worker thread per entry of `plans`, each with its own connection to
 * `url`, and runs their rounds in lock step: round r begins in all workers at
 * once, after every worker is ready for it. Resolves to each worker's outcomes,
 * indexed [worker][round], once every worker has exited cleanly.
 */
export async function runInWorkers(url: string, plans: WorkerTask[][]): Promise<WorkerOutcome[][]> {
  const rounds = plans[0]?.length ?? 0;
  if (plans.some((p) => p.length !== rounds)) throw new Error("every worker needs the same number of rounds");
  const gate = new SharedArrayBuffer(4);
  const flag = new Int32Array(gate);
  const readyCount = new Array<number>(rounds).fill(0);
  const outcomes: WorkerOutcome[][] = plans.map(() => []);
  const workers = plans.map((plan) => new Worker(script, { workerData: { url, gate, rounds: plan } satisfies WorkerInput }));
  try {
    await Promise.all(
      workers.map(
        (worker, index) =>
          new Promise<void>((resolve, reject) => {
            worker.on("message", (message: WorkerMessage) => {
              if (message.type !== "ready") {
                outcomes[index]![message.round] = message;
                return;
              }
              if (++readyCount[message.round]! === workers.length) {
                Atomics.store(flag, 0, message.round + 1);
                Atomics.notify(flag, 0);
              }
            });
            worker.on("error", reject);
            worker.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`worker ${index} exited with code ${code}`))));
          }),
      ),
    );
  } finally {
    // After a failure, release any worker still waiting at the gate and stop them all; after success, a no-op.
    Atomics.store(flag, 0, rounds + 1);
    Atomics.notify(flag, 0);
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return outcomes;
}
