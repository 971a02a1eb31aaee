/** One write waiting for its group: the row, and the caller's promise to settle. */
interface Waiting<Row> {
  row: Row;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Rows that concurrent requests write one at a time, committed together
 * (group commit): a row asked for while its table's previous insert is
 * still running, or in the same turn of the event loop, goes into the next
 * multi-row insert. Every caller's promise still settles only once its row
 * is committed, so nothing is answered before it is stored.
 *
 * What it saves is the per-statement cost: on SQLite each statement is a
 * commit of its own (a log write, index pages), on PostgreSQL a round trip;
 * thirty-two concurrent status checks make a few inserts rather than
 * thirty-two. Alone, a row waits one turn of the event loop (setImmediate)
 * and is written by itself.
 *
 * A failed group is retried row by row, so that one bad row (a foreign key
 * gone since it was read, a key issued twice) fails its own caller and no
 * other.
 */
export class GroupedInsert<Row> {
  private waiting: Waiting<Row>[] = [];
  private scheduled = false;
  private writing = false;

  /**
   * @param insertMany writes the rows in one statement (or, past a database's
   * parameter limit, a few).
   * @param maxRows the most rows one group takes; the rest wait for the next.
   */
  constructor(
    private readonly insertMany: (rows: Row[]) => Promise<void>,
    private readonly maxRows: number,
  ) {}

  insert(row: Row): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ row, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.writing || this.waiting.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.writeGroup();
    });
  }

  private async writeGroup(): Promise<void> {
    const group = this.waiting.splice(0, this.maxRows);
    this.writing = true;
    try {
      await this.insertMany(group.map((w) => w.row));
      for (const w of group) w.resolve();
    } catch (error) {
      if (group.length === 1) group[0]!.reject(error);
      // One at a time, in the order asked: of two rows that conflict, the first asked for wins, as it would alone.
      else for (const w of group) await this.insertMany([w.row]).then(w.resolve, w.reject);
    } finally {
      this.writing = false;
      this.schedule();
    }
  }
}
