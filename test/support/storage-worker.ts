/**
 * Runs in a worker thread with a database connection of its own, so that tests
 * can have several real SQLite writers (or PostgreSQL clients) act at the same
 * moment. Loaded by storage-worker.mjs in threads that runInWorkers (workers.ts) starts.
 *
 * Rounds are synchronised through a SharedArrayBuffer: before each round the
 * worker reports "ready" and blocks in Atomics.wait until the parent bumps the
 * round counter, so every worker starts its round at the same instant.
 */
import { parentPort, workerData } from "node:worker_threads";
import { openDatabase } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { OneTimeRecords } from "../../src/storage/one-time-records.ts";
import { LoginThrottle } from "../../src/domain/credentials/login-throttle.ts";
import { LoginAttemptsRepository } from "../../src/storage/login-attempts-repository.ts";
import type { WorkerInput, WorkerMessage } from "./workers.ts";

const input = workerData as WorkerInput;
const gate = new Int32Array(input.gate);
const send = (message: WorkerMessage) => parentPort!.postMessage(message);

const database = await openDatabase(input.url);
try {
  const records = new OneTimeRecords(database);
  for (let round = 0; round < input.rounds.length; round++) {
    const task = input.rounds[round]!;
    send({ type: "ready", round });
    while (Atomics.load(gate, 0) <= round) Atomics.wait(gate, 0, round);
    if (task.type === "migrate") {
      send({ type: "migrated", round, report: await migrateToLatest(database) });
    } else if (task.type === "login-attempts") {
      const throttle = new LoginThrottle(new LoginAttemptsRepository(database), Buffer.from(task.secretKeyHex, "hex"), () => task.now);
      let checks = 0;
      const outcomes = await Promise.all(
        Array.from({ length: task.count }, (_, i) =>
          throttle.attempt(task.account, `198.51.100.${i}`, ["password"], async () => {
            checks++;
            await new Promise((r) => setTimeout(r, task.checkMs));
            return { ok: false as const, reason: "password" };
          }),
        ),
      );
      send({ type: "attempted", round, checks, refused: outcomes.filter((o) => o.outcome === "refused").length });
    } else {
      const results = await Promise.all(
        task.nows.map(async (now) => ({ now, result: await records.consume(task.kind, task.keyHash, now) })),
      );
      send({ type: "consumed", round, results });
    }
  }
} finally {
  await database.close();
}
