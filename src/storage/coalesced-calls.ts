import type { Kysely, Transaction } from "kysely";
import type { Dialect } from "./database.ts";
import type { Tables } from "./schema.ts";

/** Calls of one kind of statement, each answered with its item's outcome. */
export interface StatementCalls<I, O> {
  call(item: I): Promise<O>;
}

/** A flush: one statement for the items, in order; each item's outcome, in the same order. */
export type Flush<I, O> = (items: readonly I[]) => Promise<readonly PromiseSettledResult<O>[]>;

/**
 * Shared reads where a statement is a network round trip (PostgreSQL). On
 * SQLite a read is a function call in this process, cheaper than waiting
 * for others to share it, so there each call runs its own, as it would
 * without this. (Writes: see groupedWrites.)
 */
export function statementCalls<I, O>(dialect: Dialect, flush: Flush<I, O>, maxItems?: number): StatementCalls<I, O> {
  if (dialect === "postgres") return new CoalescedCalls(flush, maxItems);
  return {
    call: async (item) => {
      const [outcome] = await flush([item]);
      if (outcome!.status === "rejected") throw outcome!.reason;
      return outcome!.value;
    },
  };
}

/**
 * A read every request makes of the same one row (the API auth version, the
 * client registrations' version), shared on both databases: on PostgreSQL
 * as statementCalls shares reads; on SQLite the calls made in one turn of
 * the event loop share one statement at its end. A statement on SQLite
 * costs little to run but pays the write-ahead log's shared-memory locks
 * (two fcntl calls, several µs each here) whatever it reads, so a one-row
 * read is mostly that cost; the turn's wait is microseconds.
 */
export function sharedRowReads<O>(dialect: Dialect, read: () => Promise<O>): StatementCalls<undefined, O> {
  return new CoalescedCalls<undefined, O>(async (calls) => everyOne(calls, await read()), Number.POSITIVE_INFINITY, defaultPatienceMs, dialect === "sqlite");
}

/**
 * Rows that concurrent requests write one at a time (status records,
 * one-time records, token issuances), committed together, on both
 * databases: on PostgreSQL a statement is a round trip, on SQLite a commit
 * of its own (a log write, index pages) and a statement's overhead, which
 * are most of what a small insert costs there. On SQLite, where a statement
 * runs within the turn of the event loop that asks for it, the writes asked
 * for in one turn are gathered and written at its end (setImmediate); on
 * PostgreSQL the first write starts at once and the writes asked for while
 * it runs share the next. Either way a write resolves only once its row is
 * committed.
 *
 * `write` stores its items in one statement. When the database refuses a
 * row of it (a constraint, a value it cannot take), the items are written
 * again one at a time, in the order they were asked for, so that a bad one (a
 * foreign key gone, a key issued twice) fails its own call only, and of two
 * in one group that conflict the first asked for wins, as it would alone.
 * Any other failure (the database unreachable, closed, busy) fails every
 * call of the group at once: retrying row by row would make each wait for
 * every row's failure before its own.
 */
export function groupedWrites<I>(dialect: Dialect, write: (items: readonly I[]) => Promise<void>, maxItems: number): StatementCalls<I, void> {
  const flush: Flush<I, void> = async (items) => {
    try {
      await write(items);
      return everyOne(items, undefined);
    } catch (error) {
      if (items.length === 1 || !isRowRefused(error)) return items.map(() => ({ status: "rejected", reason: error }));
      const outcomes: PromiseSettledResult<void>[] = [];
      for (const item of items) {
        outcomes.push(await write([item]).then(
          () => ({ status: "fulfilled", value: undefined }) as const,
          (reason: unknown) => ({ status: "rejected", reason }) as const,
        ));
      }
      return outcomes;
    }
  };
  return new CoalescedCalls(flush, maxItems, defaultPatienceMs, dialect === "sqlite");
}

/**
 * Changes that concurrent callers make one row at a time on SQLite, each
 * conditional on its own row's state (an outbox's lease), committed
 * together: the changes asked for in one turn of the event loop run one
 * after another in one transaction at its end, each answered with its own
 * outcome (a lease no longer held changes nothing and answers so). A
 * commit (a write to the log) costs more than the few statements of a
 * change, which are function calls in this process. A change that throws
 * fails every call of its transaction, which rolls back. On PostgreSQL a
 * change is a statement of its own, a round trip: this is for SQLite.
 */
export function sqliteTurnTransactions<I, O>(db: Kysely<Tables>, change: (trx: Transaction<Tables>, item: I) => Promise<O>, maxItems: number): StatementCalls<I, O> {
  const flush: Flush<I, O> = (items) =>
    db.transaction().execute(async (trx) => {
      const outcomes: PromiseSettledResult<O>[] = [];
      for (const item of items) outcomes.push({ status: "fulfilled", value: await change(trx, item) });
      return outcomes;
    });
  return new CoalescedCalls(flush, maxItems, defaultPatienceMs, true);
}

interface Waiting<I, O> {
  item: I;
  resolve: (output: O) => void;
  reject: (error: unknown) => void;
}

/** How long a statement may hold the next one back: past this, a stuck statement (a lost connection) no longer stops the calls after it. */
const defaultPatienceMs = 1000;

/**
 * One statement for the calls made while the previous one ran. On PostgreSQL
 * every statement is a network round trip and a turn of a pooled connection;
 * concurrent calls that each need the same read, or one row of the same
 * insert, share one instead. A call made while none runs starts one at once
 * (a lone call waits for nothing); the calls made while one runs share the
 * next, so one statement of the kind runs at a time and carries more the
 * busier the service is. Every call is served by a statement that starts
 * after the call was made: a read sees whatever was committed before the
 * call, a write is committed before its call resolves, as with a statement
 * of its own.
 */
export class CoalescedCalls<I, O> implements StatementCalls<I, O> {
  private queue: Waiting<I, O>[] = [];
  /** A statement runs that the next one waits for, or one is due at the end of this turn of the event loop. */
  private holding = false;

  /**
   * flush: one statement for at most maxItems items. gatherTurn: a call made
   * while none runs waits for the end of the event loop's turn, so the calls
   * of that turn share its statement (SQLite, where a statement runs within
   * the turn and nothing else could join it).
   */
  constructor(
    private readonly flush: Flush<I, O>,
    private readonly maxItems = Number.POSITIVE_INFINITY,
    private readonly patienceMs = defaultPatienceMs,
    private readonly gatherTurn = false,
  ) {}

  call(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.holding) return;
      if (!this.gatherTurn) return this.start();
      this.holding = true;
      setImmediate(() => this.start());
    });
  }

  private start(): void {
    const batch = this.queue.splice(0, this.maxItems);
    this.holding = true;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      clearTimeout(timer);
      this.holding = false;
      if (this.queue.length > 0) this.start();
    };
    const timer = setTimeout(release, this.patienceMs);
    timer.unref();
    let flushed: ReturnType<Flush<I, O>>;
    try {
      flushed = this.flush(batch.map((w) => w.item));
    } catch (error) {
      flushed = Promise.reject(error);
    }
    flushed
      .then((outcomes) => {
        if (outcomes.length !== batch.length) throw new Error(`a shared statement answered ${outcomes.length} of ${batch.length} calls`);
        batch.forEach((w, i) => {
          const outcome = outcomes[i]!;
          if (outcome.status === "fulfilled") w.resolve(outcome.value);
          else w.reject(outcome.reason);
        });
      })
      // A failed flush fails every call of its batch (a call already settled stays as it was).
      .catch((error: unknown) => {
        for (const w of batch) w.reject(error);
      })
      .finally(release);
  }
}

/**
 * The database refused the statement for what a row holds, not for its own
 * state: PostgreSQL's integrity constraint (23) and data exception (22)
 * classes, SQLite's constraint errors.
 */
function isRowRefused(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return false;
  return /^2[23][0-9A-Z]{3}$/.test(code) || code.startsWith("SQLITE_CONSTRAINT");
}

/** The same outcome for every item: what a shared read gives each of its callers. */
export function everyOne<O>(items: readonly unknown[], value: O): PromiseSettledResult<O>[] {
  return items.map(() => ({ status: "fulfilled", value }));
}
