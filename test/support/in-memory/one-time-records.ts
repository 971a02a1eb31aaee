import {
  readOneTimeRecord,
  type ConsumeResult,
  type IssueInput,
  type OneTimeKind,
  type OneTimeRecord,
  type OneTimeStore,
  type StoredOneTimeRecord,
} from "../../../src/domain/single-use.ts";
import { copied, InMemoryTables } from "./tables.ts";

function oneTimeKey(kind: string, keyHash: string): string {
  return `${kind}\u0000${keyHash}`;
}

/**
 * OneTimeStore in memory (src/storage/one-time-records.ts on a database).
 * `consume` checks and marks in one synchronous step, so of several callers
 * exactly one wins, as the conditional UPDATE decides on a database. A record
 * is read back through readOneTimeRecord, as the repository reads its rows,
 * so its payload is checked against its kind here too.
 */
export class InMemoryOneTimeRecords implements OneTimeStore {
  constructor(private readonly tables: InMemoryTables = new InMemoryTables()) {}

  async issue<K extends OneTimeKind>(input: IssueInput<K>): Promise<OneTimeRecord<K>> {
    const key = oneTimeKey(input.kind, input.keyHash);
    // The primary key (kind, key_hash): a second issue under the same key is refused, as the INSERT is.
    if (this.tables.oneTimeRecords.has(key)) throw new Error(`one-time record ${input.kind} already exists under this key`);
    const record = recordOf(input);
    this.tables.oneTimeRecords.set(key, record);
    return readOneTimeRecord(input.kind, copied(record));
  }

  async issueIfAbsent<K extends OneTimeKind>(input: IssueInput<K>): Promise<boolean> {
    const key = oneTimeKey(input.kind, input.keyHash);
    if (this.tables.oneTimeRecords.has(key)) return false;
    this.tables.oneTimeRecords.set(key, recordOf(input));
    return true;
  }

  async consume<K extends OneTimeKind>(kind: K, keyHash: string, now: number, owner?: string): Promise<ConsumeResult<K>> {
    const record = this.tables.oneTimeRecords.get(oneTimeKey(kind, keyHash));
    if (!record) return { ok: false, reason: "unknown" };
    if (owner !== undefined && record.owner !== owner) return { ok: false, reason: "foreign" };
    if (record.consumedAt !== null) return { ok: false, reason: "consumed", record: readOneTimeRecord(kind, copied(record)) };
    if (record.expiresAt <= now) return { ok: false, reason: "expired", record: readOneTimeRecord(kind, copied(record)) };
    // Marked, then read: a payload that fails its check leaves the record used up, as the UPDATE … RETURNING does.
    record.consumedAt = now;
    return { ok: true, record: readOneTimeRecord(kind, copied(record)) };
  }

  async find<K extends OneTimeKind>(kind: K, keyHash: string): Promise<OneTimeRecord<K> | undefined> {
    const record = this.tables.oneTimeRecords.get(oneTimeKey(kind, keyHash));
    return record && readOneTimeRecord(kind, copied(record));
  }

  async deleteExpired(before: number): Promise<number> {
    let deleted = 0;
    for (const [key, record] of this.tables.oneTimeRecords) {
      if (record.expiresAt < before) {
        this.tables.oneTimeRecords.delete(key);
        deleted++;
      }
    }
    return deleted;
  }
}

function recordOf(input: IssueInput<OneTimeKind>): StoredOneTimeRecord {
  return {
    kind: input.kind,
    keyHash: input.keyHash,
    owner: input.owner,
    payload: copied(input.payload),
    createdAt: input.now,
    expiresAt: input.now + input.ttlMs,
    consumedAt: null,
  };
}
