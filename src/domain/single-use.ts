import { checkedPayload, OneTimePayloadMismatch, type OneTimeKind, type OneTimePayloads } from "./one-time-kinds.ts";

export type { OneTimeKind, OneTimePayloads };

/**
 * Single-use records (request_uris, authorization codes, assertion jtis,
 * replay marks), keyed by the hash of the secret the client holds. The
 * storage behind `consume` must let exactly one of several concurrent callers
 * win (see src/storage/one-time-records.ts). Each record has a kind of the
 * closed list in one-time-kinds.ts, and a payload its kind's schema allows.
 */
export interface OneTimeRecord<K extends OneTimeKind = OneTimeKind> {
  kind: K;
  keyHash: string;
  owner: string;
  payload: OneTimePayloads[K];
  createdAt: number;
  expiresAt: number;
  consumedAt: number | null;
}

/** A record as a store holds it: its payload not yet checked against its kind. */
export interface StoredOneTimeRecord {
  kind: string;
  keyHash: string;
  owner: string;
  payload: unknown;
  createdAt: number;
  expiresAt: number;
  consumedAt: number | null;
}

export type ConsumeResult<K extends OneTimeKind = OneTimeKind> =
  | { ok: true; record: OneTimeRecord<K> }
  | { ok: false; reason: "unknown" }
  /** The record exists but belongs to another owner; it is left untouched. */
  | { ok: false; reason: "foreign" }
  | { ok: false; reason: "expired" | "consumed"; record: OneTimeRecord<K> };

export interface IssueInput<K extends OneTimeKind = OneTimeKind> {
  kind: K;
  keyHash: string;
  owner: string;
  payload: OneTimePayloads[K];
  now: number;
  ttlMs: number;
}

export interface OneTimeStore {
  issue<K extends OneTimeKind>(input: IssueInput<K>): Promise<OneTimeRecord<K>>;
  /** Like issue, but a record already under this kind and key is left as it is; true when this call created it. */
  issueIfAbsent<K extends OneTimeKind>(input: IssueInput<K>): Promise<boolean>;
  /** Consumes the record once: only the first caller, the owner, before it expires, gets it. */
  consume<K extends OneTimeKind>(kind: K, keyHash: string, now: number, owner?: string): Promise<ConsumeResult<K>>;
  find<K extends OneTimeKind>(kind: K, keyHash: string): Promise<OneTimeRecord<K> | undefined>;
  /** Deletes records that expired before the instant; returns how many. */
  deleteExpired(before: number): Promise<number>;
}

/**
 * A record a store read for `kind`, its payload checked against the kind's
 * schema: every store reads its records through this. Throws
 * OneTimePayloadMismatch (an internal error: the caller's request was fine).
 */
export function readOneTimeRecord<K extends OneTimeKind>(kind: K, stored: StoredOneTimeRecord): OneTimeRecord<K> {
  if (stored.kind !== kind) throw new OneTimePayloadMismatch(kind, [`read a record of kind ${stored.kind}`]);
  const { keyHash, owner, createdAt, expiresAt, consumedAt } = stored;
  return { kind, keyHash, owner, payload: checkedPayload(kind, stored.payload), createdAt, expiresAt, consumedAt };
}
