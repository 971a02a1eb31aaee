// The background checkpointer's thread (see sqlite-checkpointer.ts). Plain
// JavaScript: a worker does not inherit the parent's TypeScript loader, and a
// body this small is not worth the time registering one takes at start.
import { parentPort, workerData } from "node:worker_threads";
import SqliteDatabase from "better-sqlite3";

/** An error as words: better-sqlite3's own errors lose their message when they cross to the parent thread. */
const words = (error) => String(error?.message ?? error);

let connection;
try {
  connection = new SqliteDatabase(workerData.file, { fileMustExist: true, timeout: 0 });
} catch (error) {
  parentPort.postMessage({ error: `cannot open ${workerData.file}: ${words(error)}` });
  process.exit(1);
}
/** One checkpoint; its result goes to the parent, with the request's id when it asked for this one. */
function checkpoint(request) {
  try {
    // PASSIVE: copies what it can without waiting for, or blocking, the service's connection.
    const [result] = connection.pragma("wal_checkpoint(PASSIVE)");
    parentPort.postMessage({ checkpointed: result.checkpointed, log: result.log, request });
  } catch (error) {
    parentPort.postMessage({ error: words(error), request });
  }
}

const timer = setInterval(() => checkpoint(undefined), workerData.intervalMs);

parentPort.on("message", (message) => {
  if (typeof message === "object" && message?.checkpoint !== undefined) return checkpoint(message.checkpoint);
  if (message !== "close") return;
  clearInterval(timer);
  connection.close();
  parentPort.close();
});
