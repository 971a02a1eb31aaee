import { readOneTimeRecord, type ConsumeResult, type IssueInput, type OneTimeKind, type OneTimeRecord, type OneTimeStore } from "../domain/single-use.ts";
import type { Database } from "./database.ts";
import { groupedWrites, type StatementCalls } from "./coalesced-calls.ts";
import type { Kysely } from "kysely";
import { preparedInsert, preparedQuery } from "./prepared-query.ts";
import type { OneTimeRecordTable, Tables } from "./schema.ts";

/** Issued records, a group at a time (see preparedInsert). */
const insertRecordRows = preparedInsert<Tables>("one_time_records");

/** Named rather than `*`, so that SQLite's rows are built in JavaScript (see withRowBuilder). */
const recordColumns = ["kind", "key_hash", "owner", "payload", "created_at", "expires_at", "consumed_at"] as const satisfies readonly (keyof OneTimeRecordTable)[];

/** Every refresh's replay-mark check and every failed consume read this (see preparedQuery). */
const recordByKey = preparedQuery((db: Kysely<Tables>, kind: string, keyHash: string) =>
  db.selectFrom("one_time_records").select(recordColumns).where("kind", "=", kind).where("key_hash", "=", keyHash),
);

/** The conditional UPDATE that decides who consumes a record, built once (see preparedQuery). */
function unconsumed(db: Kysely<Tables>, kind: string, keyHash: string, now: number) {
  return db
    .updateTable("one_time_records")
    .set({ consumed_at: now })
    .where("kind", "=", kind)
    .where("key_hash", "=", keyHash)
    .where("consumed_at", "is", null)
    .where("expires_at", ">", now);
}
const consumeAnyOwner = preparedQuery((db: Kysely<Tables>, kind: string, keyHash: string, now: number) =>
  unconsumed(db, kind, keyHash, now).returning(recordColumns),
);
const consumeOwned = preparedQuery((db: Kysely<Tables>, kind: string, keyHash: string, now: number, owner: string) =>
  unconsumed(db, kind, keyHash, now).where("owner", "=", owner).returning(recordColumns),
);

/**
 * The single-use primitive. `consume` is one conditional UPDATE … RETURNING:
 * the database decides which of several concurrent callers flips consumed_at,
 * so exactly one wins on SQLite and on PostgreSQL alike. Losers learn why they
 * lost (a replayed refresh token must revoke its family; an expired request_uri
 * gets its own message), from a read that happens after the write decided.
 */
export class OneTimeRecords implements OneTimeStore {
  /** Issued records (request_uris, codes) of concurrent requests are committed together: see groupedWrites. */
  private readonly issues: StatementCalls<RecordRow, void>;

  constructor(private readonly database: Database) {
    this.issues = groupedWrites(
      database.dialect,
      (rows) => insertRecordRows(this.database.db, rows),
      issueGroupRows,
    );
  }

  async issue<K extends OneTimeKind>(input: IssueInput<K>): Promise<OneTimeRecord<K>> {
    await this.issues.call(recordRow(input));
    return { kind: input.kind, keyHash: input.keyHash, owner: input.owner, payload: input.payload, createdAt: input.now, expiresAt: input.now + input.ttlMs, consumedAt: null };
  }

  /** Like issue, but a record already under this kind and key is left as it is; true when this call created it. */
  async issueIfAbsent<K extends OneTimeKind>(input: IssueInput<K>): Promise<boolean> {
    const result = await this.database.db
      .insertInto("one_time_records")
      .values(recordRow(input))
      .onConflict((oc) => oc.columns(["kind", "key_hash"]).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  /** With `owner`, only that owner's record can be consumed; anyone else's is reported as "foreign" and left as it was. */
  async consume<K extends OneTimeKind>(kind: K, keyHash: string, now: number, owner?: string): Promise<ConsumeResult<K>> {
    const db = this.database.db;
    const [won] = owner === undefined ? await consumeAnyOwner(db, kind, keyHash, now) : await consumeOwned(db, kind, keyHash, now, owner);
    if (won) return { ok: true, record: toRecord(kind, won) };
    const record = await this.find(kind, keyHash);
    if (!record) return { ok: false, reason: "unknown" };
    if (owner !== undefined && record.owner !== owner) return { ok: false, reason: "foreign" };
    return { ok: false, reason: record.consumedAt !== null ? "consumed" : "expired", record };
  }

  async find<K extends OneTimeKind>(kind: K, keyHash: string): Promise<OneTimeRecord<K> | undefined> {
    const [row] = await recordByKey(this.database.db, kind, keyHash);
    return row && toRecord(kind, row);
  }

  /** Deletes records that expired before `before`; returns how many. */
  async deleteExpired(before: number): Promise<number> {
    const result = await this.database.db.deleteFrom("one_time_records").where("expires_at", "<", before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

/** Rows one grouped insert takes (7 parameters each): short enough SQL to be kept prepared. */
const issueGroupRows = 64;

type RecordRow = ReturnType<typeof recordRow>;

function recordRow(input: IssueInput<OneTimeKind>) {
  return {
    kind: input.kind,
    key_hash: input.keyHash,
    owner: input.owner,
    payload: JSON.stringify(input.payload),
    created_at: input.now,
    expires_at: input.now + input.ttlMs,
    consumed_at: null,
  };
}

/** The row read for `kind`, its payload parsed and checked against the kind's schema (see readOneTimeRecord). */
function toRecord<K extends OneTimeKind>(kind: K, row: {
  kind: string;
  key_hash: string;
  owner: string;
  payload: string;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
}): OneTimeRecord<K> {
  return readOneTimeRecord(kind, {
    kind: row.kind,
    keyHash: row.key_hash,
    owner: row.owner,
    payload: JSON.parse(row.payload),
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    consumedAt: row.consumed_at === null ? null : Number(row.consumed_at),
  });
}
