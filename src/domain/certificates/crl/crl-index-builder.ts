import { malformed } from "./der-cursor.ts";
import { bucketCount, bucketOf, timeBaseSeconds } from "./crl-index.ts";
import type { SerialTable } from "./serial-table.ts";

const maxStoredTime = 0xffff_ffff;

/**
 * Collects entries as the reader walks the list, then sorts and packs them
 * into the tables of crl-index.ts. Entries arrive in list order; lists made by
 * openssl are already sorted by serial, which is checked as entries arrive so
 * the sort is skipped for them.
 *
 * Duplicate serials (a list should not have them, RFC 5280 does not say what
 * they mean): one entry is kept, the earliest revocationDate, and on equal
 * dates the first in list order. The certificate is revoked either way; the
 * earliest date is when it stopped being trustworthy.
 */
export class CrlIndexBuilder {
  private readonly tables: GrowingTable[] = [];

  /** Adds the serial whose magnitude is bytes[start, end) (no leading zero octet, 1–20 octets). */
  add(bytes: Uint8Array, start: number, end: number, revokedAtSeconds: number, reason: number): void {
    const octets = end - start;
    const words = (octets + 3) >> 2;
    const stored = revokedAtSeconds - timeBaseSeconds;
    if (stored < 0 || stored > maxStoredTime) throw malformed("revocationDate before 1950 or after 2086 is not supported");
    const table = (this.tables[words] ??= new GrowingTable(words));
    table.push(bytes, start, end, stored, reason);
  }

  build(): SerialTable[] {
    return this.tables.filter((table): table is GrowingTable => table !== undefined).map((table) => table.pack());
  }
}

class GrowingTable {
  count = 0;
  private keys: Uint32Array;
  private times: Uint32Array;
  private reasons: Uint8Array;
  private sorted = true;

  constructor(readonly words: number) {
    const capacity = 1024;
    this.keys = new Uint32Array(capacity * words);
    this.times = new Uint32Array(capacity);
    this.reasons = new Uint8Array(capacity);
  }

  push(bytes: Uint8Array, start: number, end: number, time: number, reason: number): void {
    if (this.count === this.times.length) this.grow();
    const words = this.words;
    const keys = this.keys;
    const base = this.count * words;
    // Big-endian words, the first one left-padded with zero octets.
    let word = base;
    let value = 0;
    let filled = words * 4 - (end - start);
    for (let i = start; i < end; i++) {
      value = value * 256 + bytes[i]!;
      if (++filled === 4) {
        keys[word++] = value;
        value = 0;
        filled = 0;
      }
    }
    if (this.sorted && this.count > 0 && compareRows(keys, base - words, keys, base, words) > 0) this.sorted = false;
    this.times[this.count] = time;
    this.reasons[this.count] = reason;
    this.count++;
  }

  private grow(): void {
    const capacity = this.times.length * 2;
    const keys = new Uint32Array(capacity * this.words);
    keys.set(this.keys);
    const times = new Uint32Array(capacity);
    times.set(this.times);
    const reasons = new Uint8Array(capacity);
    reasons.set(this.reasons);
    this.keys = keys;
    this.times = times;
    this.reasons = reasons;
  }

  /** Sorted, deduplicated, exactly sized arrays, each with its own ArrayBuffer (so it can be transferred). */
  pack(): SerialTable {
    const { words, count } = this;
    let keys: Uint32Array;
    let times: Uint32Array;
    let reasons: Uint8Array;
    if (this.sorted) {
      keys = this.keys.slice(0, count * words);
      times = this.times.slice(0, count);
      reasons = this.reasons.slice(0, count);
    } else {
      const order = sortOrder(this.keys, words, count);
      keys = new Uint32Array(count * words);
      times = new Uint32Array(count);
      reasons = new Uint8Array(count);
      for (let i = 0; i < count; i++) {
        const row = order[i]!;
        for (let w = 0; w < words; w++) keys[i * words + w] = this.keys[row * words + w]!;
        times[i] = this.times[row]!;
        reasons[i] = this.reasons[row]!;
      }
    }
    const kept = removeDuplicates(keys, times, reasons, words, count);
    if (kept !== count) {
      keys = keys.slice(0, kept * words);
      times = times.slice(0, kept);
      reasons = reasons.slice(0, kept);
    }
    return { words, keys, times, reasons, ...directoryOf(keys, words, kept) };
  }
}

/**
 * Keeps one row per serial in sorted rows (equal serials in list order): the
 * earliest revocation time, the first of equal ones. Returns the rows kept,
 * moved to the front.
 */
function removeDuplicates(keys: Uint32Array, times: Uint32Array, reasons: Uint8Array, words: number, count: number): number {
  let out = 0;
  for (let i = 1; i < count; i++) {
    if (compareRows(keys, out * words, keys, i * words, words) === 0) {
      if (times[i]! < times[out]!) {
        times[out] = times[i]!;
        reasons[out] = reasons[i]!;
      }
      continue;
    }
    out++;
    if (out !== i) {
      keys.copyWithin(out * words, i * words, (i + 1) * words);
      times[out] = times[i]!;
      reasons[out] = reasons[i]!;
    }
  }
  return count === 0 ? 0 : out + 1;
}

function directoryOf(keys: Uint32Array, words: number, rows: number): Pick<SerialTable, "directory" | "lowest" | "highest"> {
  const lowest = rows > 0 ? keys[0]! : 0;
  const highest = rows > 0 ? keys[(rows - 1) * words]! : 0;
  const buckets = bucketCount(rows);
  const directory = new Uint32Array(buckets + 1);
  let bucket = 0;
  for (let row = 0; row < rows; row++) {
    const of = bucketOf(keys[row * words]!, lowest, highest, buckets);
    while (bucket < of) directory[++bucket] = row;
  }
  while (bucket < buckets) directory[++bucket] = rows;
  return { directory, lowest, highest };
}

function compareRows(a: Uint32Array, aBase: number, b: Uint32Array, bBase: number, words: number): number {
  for (let w = 0; w < words; w++) {
    const x = a[aBase + w]!;
    const y = b[bBase + w]!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

// Where the low and the high 32 bits of a 64-bit element sit in a Uint32Array view of it.
const littleEndian = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;
const low = littleEndian ? 0 : 1;
const high = 1 - low;
const smallRun = 16;

/**
 * The permutation that sorts the rows, stable (equal serials keep their list
 * order, which the duplicate rule relies on). Most significant word first:
 * each row becomes one 64-bit number (that word above, its row number below)
 * and the run is sorted by the engine's native typed-array sort; rows that
 * tie on the word are sorted again by the next word. Random serials are
 * settled by their first word; sequential ones need one sort per word that
 * varies.
 */
function sortOrder(keys: Uint32Array, words: number, count: number): Uint32Array {
  const order = new Uint32Array(count);
  for (let i = 0; i < count; i++) order[i] = i;
  sortRun(keys, words, order, 0, count, 0);
  return order;
}

function sortRun(keys: Uint32Array, words: number, order: Uint32Array, from: number, to: number, word: number): void {
  const length = to - from;
  if (length < smallRun) {
    insertionSort(keys, words, order, from, to);
    return;
  }
  const packed = new BigUint64Array(length);
  const halves = new Uint32Array(packed.buffer);
  for (let i = 0; i < length; i++) {
    const row = order[from + i]!;
    halves[2 * i + low] = row;
    halves[2 * i + high] = keys[row * words + word]!;
  }
  packed.sort();
  for (let i = 0; i < length; i++) order[from + i] = halves[2 * i + low]!;
  if (word + 1 === words) return;
  for (let start = 0; start < length; ) {
    const value = halves[2 * start + high]!;
    let end = start + 1;
    while (end < length && halves[2 * end + high] === value) end++;
    if (end - start > 1) sortRun(keys, words, order, from + start, from + end, word + 1);
    start = end;
  }
}

function insertionSort(keys: Uint32Array, words: number, order: Uint32Array, from: number, to: number): void {
  for (let i = from + 1; i < to; i++) {
    const row = order[i]!;
    let j = i - 1;
    while (j >= from) {
      const other = order[j]!;
      const comparison = compareRows(keys, other * words, keys, row * words, words);
      if (comparison < 0 || (comparison === 0 && other < row)) break;
      order[j + 1] = other;
      j--;
    }
    order[j + 1] = row;
  }
}
