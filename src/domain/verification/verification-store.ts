import type { VerificationRecord } from "./model.ts";

/** Position in a newest-first listing: the last record of the previous page. */
export interface VerificationCursor {
  createdAt: number;
  id: string;
}

export interface VerificationFilter {
  userId?: string | undefined;
  certificateId?: string | undefined;
}

/** What Verifications needs from storage; every read and delete takes the account id (other accounts' rows are invisible). */
export interface VerificationStore {
  insert(record: VerificationRecord): Promise<void>;
  find(accountId: string, id: string): Promise<VerificationRecord | undefined>;
  /** Newest first; ties on created_at ordered by id, so pages never overlap or skip. */
  list(accountId: string, filter: VerificationFilter, limit: number, after?: VerificationCursor): Promise<VerificationRecord[]>;
  /** True when a row was deleted. */
  delete(accountId: string, id: string): Promise<boolean>;
}
