import type { RevocationReasonCode } from "../model.ts";
import { maxSerialWords, timeBaseSeconds } from "./crl-index.ts";
import type { SerialTable } from "./serial-table.ts";
import type { CrlEntry, VerifiedCrl } from "./verified-crl.ts";

/** A serial number that one list names and the other does not. */
export interface SerialChange {
  /** Canonical form: lowercase hex, even length, no leading zero octet (as certificates store it). */
  serialHex: string;
  /** Its entry in the previous list; undefined when it was added. */
  before: CrlEntry | undefined;
  /** Its entry in the new list; undefined when it was removed. */
  after: CrlEntry | undefined;
}

/**
 * The serials added to and removed from a list, from the two lists' indexes:
 * each table is sorted by serial, so one merge walk per serial width finds
 * them, in time linear in the entries and with memory for the changes only.
 * A serial listed in both is no change, whatever its entry says: its status
 * (revoked) is the same. Runs in the CRL worker for large lists (a million
 * entries take tens of milliseconds).
 */
export function diffSerialTables(previous: readonly SerialTable[], next: readonly SerialTable[]): SerialChange[] {
  const changes: SerialChange[] = [];
  for (let words = 1; words <= maxSerialWords; words++) {
    const before = previous.find((table) => table.words === words);
    const after = next.find((table) => table.words === words);
    if (before || after) mergeTables(before, after, words, changes);
  }
  return changes;
}

function mergeTables(before: SerialTable | undefined, after: SerialTable | undefined, words: number, changes: SerialChange[]): void {
  const beforeRows = before?.times.length ?? 0;
  const afterRows = after?.times.length ?? 0;
  let i = 0;
  let j = 0;
  while (i < beforeRows && j < afterRows) {
    const order = compareRows(before!.keys, i * words, after!.keys, j * words, words);
    if (order === 0) {
      i++;
      j++;
    } else if (order < 0) {
      changes.push({ serialHex: serialHex(before!, i), before: entryOf(before!, i), after: undefined });
      i++;
    } else {
      changes.push({ serialHex: serialHex(after!, j), before: undefined, after: entryOf(after!, j) });
      j++;
    }
  }
  for (; i < beforeRows; i++) changes.push({ serialHex: serialHex(before!, i), before: entryOf(before!, i), after: undefined });
  for (; j < afterRows; j++) changes.push({ serialHex: serialHex(after!, j), before: undefined, after: entryOf(after!, j) });
}

function compareRows(a: Uint32Array, aBase: number, b: Uint32Array, bBase: number, words: number): number {
  for (let word = 0; word < words; word++) {
    const x = a[aBase + word]!;
    const y = b[bBase + word]!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

function entryOf(table: SerialTable, row: number): CrlEntry {
  return { revokedAt: (table.times[row]! + timeBaseSeconds) * 1000, reason: table.reasons[row] as RevocationReasonCode };
}

/** The row's serial in the canonical form lookups take: its words in hex, without leading zero octets. */
function serialHex(table: SerialTable, row: number): string {
  let hex = "";
  for (let word = 0; word < table.words; word++) hex += table.keys[row * table.words + word]!.toString(16).padStart(8, "0");
  hex = hex.replace(/^0+/, "");
  if (hex.length % 2 === 1) hex = `0${hex}`;
  return hex === "" ? "00" : hex;
}

/** Diffs two verified lists' indexes (diffSerialTables) off the event loop for large lists: implemented in src/adapters/crl. */
export type CrlDiffer = (previous: VerifiedCrl, next: VerifiedCrl) => Promise<SerialChange[]>;
