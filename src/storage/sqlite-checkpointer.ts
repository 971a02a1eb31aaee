import { Worker } from "node:worker_threads";

/** Statements the service runs before the checkpointer starts: a command-line run ends well before it. */
const statementsBeforeStart = 1000;
const defaultIntervalMs = 100;

/**
 * Copies SQLite's write-ahead log back into the database from a thread of
 * its own, every 100 ms, so that the service's thread never does (once a
 * second was too seldom: at about 15,000 log pages a second the service's
 * own checkpoint still came first).
 *
 * Left to itself, SQLite checkpoints inside the commit that finds the log
 * longer than wal_autocheckpoint pages: that request, and every request
 * queued behind it on the event loop, waits while thousands of pages are
 * copied and both files synced. Under a steady stream of refreshes that was
 * 10–31 ms, five or six times in twenty seconds, and the p99 latency showed
 * it. A PASSIVE checkpoint on another connection copies the same pages
 * without taking the write lock; the service's next write then starts the
 * log over from its beginning. wal_autocheckpoint stays set on the service's
 * connection as the fallback: if this thread falls behind or fails, the log
 * is still bounded as before.
 *
 * Started lazily, after the service has run 1,000 statements, so that a
 * command-line run (migrate, admin) never starts a thread. In-memory
 * databases have no log and get none.
 */
export class SqliteCheckpointer {
  private worker: Worker | undefined;
  private statements = 0;
  private closed = false;
  /** Checkpoints asked for with checkpointNow, by request id, until the thread answers (or ends). */
  private readonly asked = new Map<number, () => void>();
  private nextRequest = 0;
  /** The last checkpoint's log and copied frame counts, or its error: for tests and diagnostics. */
  lastResult: { checkpointed?: number; log?: number; error?: string } | undefined;

  constructor(
    private readonly file: string,
    private readonly intervalMs = defaultIntervalMs,
    private readonly startAfter = statementsBeforeStart,
  ) {}

  /** Called for every statement the service prepares or reuses; starts the thread at the threshold. */
  noteStatement(): void {
    // Not when already running: checkpointNow may have started it first, and a second thread would outlive close.
    if (this.statements++ === this.startAfter && !this.closed && !this.worker) this.start();
  }

  get running(): boolean {
    return this.worker !== undefined;
  }

  /**
   * A checkpoint on the thread now, resolved when it is done (or failed: the
   * caller only waits, wal_autocheckpoint still bounds the log). For a write
   * of many megabytes in several statements (a CRL's parts): waiting for the
   * copy between statements lets each one start the log over, where without
   * it the log outgrows wal_autocheckpoint and a commit on the service's
   * thread copies it back (80 ms and more for a 38 MB list). Starts the
   * thread if it has not started; resolves at once once closed.
   */
  checkpointNow(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (!this.worker) this.start();
    const worker = this.worker!;
    const request = this.nextRequest++;
    return new Promise<void>((resolve) => {
      this.asked.set(request, resolve);
      worker.postMessage({ checkpoint: request });
    });
  }

  private start(): void {
    const worker = new Worker(new URL("./sqlite-checkpoint-worker.mjs", import.meta.url), {
      workerData: { file: this.file, intervalMs: this.intervalMs },
    });
    worker.unref();
    worker.on("message", ({ request, ...result }: NonNullable<SqliteCheckpointer["lastResult"]> & { request?: number }) => {
      this.lastResult = result;
      if (request !== undefined) this.answered(request);
    });
    // A failed thread leaves checkpoints to wal_autocheckpoint, as before it started.
    worker.on("error", (error: unknown) => (this.lastResult = { error: messageOf(error) }));
    worker.on("exit", () => {
      if (this.worker === worker) this.worker = undefined;
      for (const request of [...this.asked.keys()]) this.answered(request);
    });
    this.worker = worker;
  }

  private answered(request: number): void {
    this.asked.get(request)?.();
    this.asked.delete(request);
  }

  /** Ends the thread, its connection closed, before the service's own connection closes. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
    worker.postMessage("close");
    const timer = setTimeout(() => void worker.terminate(), 2000);
    await exited;
    clearTimeout(timer);
  }
}

/** An error's message, also for one made in another realm (where instanceof Error is false). */
function messageOf(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === "string" ? message : String(error);
}
