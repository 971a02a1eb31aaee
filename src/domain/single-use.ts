/**
 * Single-use records (request_uris, authorization codes, assertion jtis,
 * replay marks), keyed by the hash of the secret the client holds. The
 * storage behind `consume` must let exactly one of several concurrent callers
 * win (see src/storage/one-time-records.ts).
 */
export interface OneTimeRecord {
  kind: string;
  keyHash: string;
  owner: string;
  payload: unknown;
  createdAt: number;
  expiresAt: number;
  consumedAt: number | null;
}

export type ConsumeResult =
  | { ok: true; record: OneTimeRecord }
  | { ok: false; reason: "unknown" }
  /** The record exists but belongs to another owner; it is left untouched. */
  | { ok: false; reason: "foreign" }
  | { ok: false; reason: "expired" | "consumed"; record: OneTimeRecord };

export interface IssueInput {
  kind: string;
  keyHash: string;
  owner: string;
  payload: unknown;
  now: number;
  ttlMs: number;
}

export interface OneTimeStore {
  issue(input: IssueInput): Promise<OneTimeRecord>;
  /** Like issue, but a record already under this kind and key is left as it is; true when this call created it. */
  issueIfAbsent(input: IssueInput): Promise<boolean>;
  /** Consumes the record once: only the first caller, the owner, before it expires, gets it. */
  consume(kind: string, keyHash: string, now: number, owner?: string): Promise<ConsumeResult>;
  find(kind: string, keyHash: string): Promise<OneTimeRecord | undefined>;
  /** Deletes records that expired before the instant; returns how many. */
  deleteExpired(before: number): Promise<number>;
}
