import type { RevocationReasonCode } from "../model.ts";
import type { SerialTable } from "./serial-table.ts";
import type { CrlEntry } from "./verified-crl.ts";

/**
 * Which bucket a first word falls in: the range [lowest, highest] cut into
 * `buckets` equal parts. A lookup then searches only its bucket's rows (a few,
 * for random or sequential serials) instead of the whole table: fewer cache
 * misses. The same arithmetic on the same numbers builds and reads the
 * directory, and it never decreases as the word grows, so rows stay in order.
 */
export function bucketOf(word: number, lowest: number, highest: number, buckets: number): number {
  return Math.min(buckets - 1, Math.floor(((word - lowest) / (highest - lowest + 1)) * buckets));
}

/** 8 to 16 rows per bucket on average, at most 2^20 buckets: at most half a byte per entry. */
export function bucketCount(rows: number): number {
  let buckets = 1;
  while (buckets < 1 << 20 && buckets * 16 <= rows) buckets *= 2;
  return buckets;
}

/** 1950-01-01T00:00:00Z in epoch seconds: UTCTime's first year. */
export const timeBaseSeconds = -631_152_000;
/** Serials longer than RFC 5280's 20 octets are not indexed: no certificate this service accepts carries one. */
export const maxSerialOctets = 20;
export const maxSerialWords = 5;

const nibbles = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) nibbles["0123456789abcdef".charCodeAt(i)] = i;

export class CrlIndex {
  private readonly byWords: (SerialTable | undefined)[] = [];
  /** The tables, fewest words first: what the diff with another list walks (see crl-diff.ts). */
  readonly tables: readonly SerialTable[];
  private readonly probe = new Uint32Array(maxSerialWords);
  readonly entries: number;
  readonly bytes: number;

  constructor(tables: readonly SerialTable[]) {
    let entries = 0;
    let bytes = 0;
    for (const table of tables) {
      if (this.byWords[table.words]) throw new TypeError(`two tables of ${table.words} words`);
      this.byWords[table.words] = table;
      entries += table.times.length;
      bytes += table.keys.byteLength + table.times.byteLength + table.reasons.byteLength + table.directory.byteLength;
    }
    this.entries = entries;
    this.bytes = bytes;
    this.tables = this.byWords.filter((table): table is SerialTable => table !== undefined);
  }

  /**
   * The entry of a serial in canonical form (lowercase hex, even length, no
   * leading zero octet, at most 20 octets). Anything else is a TypeError: a
   * serial in another form would silently miss its entry.
   */
  lookup(serialHex: string): CrlEntry | undefined {
    const length = serialHex.length;
    if (length < 2 || length > maxSerialOctets * 2 || length % 2 !== 0 || (serialHex.charCodeAt(0) === 0x30 && serialHex.charCodeAt(1) === 0x30)) {
      throw new TypeError("serial number must be in canonical form (lowercase hex, even length, no leading zero octet, at most 20 octets)");
    }
    const words = (length + 7) >> 3;
    const probe = this.probe;
    let position = 0;
    for (let word = 0; word < words; word++) {
      const stop = length - 8 * (words - 1 - word);
      let value = 0;
      for (; position < stop; position++) {
        const code = serialHex.charCodeAt(position);
        const nibble = code < 128 ? nibbles[code]! : -1;
        if (nibble < 0) throw new TypeError("serial number must be lowercase hexadecimal");
        value = value * 16 + nibble;
      }
      probe[word] = value;
    }
    const table = this.byWords[words];
    if (!table) return undefined;
    const first = probe[0]!;
    if (table.times.length === 0 || first < table.lowest || first > table.highest) return undefined;
    const directory = table.directory;
    const bucket = bucketOf(first, table.lowest, table.highest, directory.length - 1);
    const keys = table.keys;
    let low = directory[bucket]!;
    let high = directory[bucket + 1]!;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const base = middle * words;
      let order = 0;
      for (let word = 0; word < words; word++) {
        const key = keys[base + word]!;
        const wanted = probe[word]!;
        if (key !== wanted) {
          order = key < wanted ? -1 : 1;
          break;
        }
      }
      if (order === 0) {
        return { revokedAt: (table.times[middle]! + timeBaseSeconds) * 1000, reason: table.reasons[middle] as RevocationReasonCode };
      }
      if (order < 0) low = middle + 1;
      else high = middle;
    }
    return undefined;
  }
}
