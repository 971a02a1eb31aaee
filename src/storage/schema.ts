/**
 * Table shapes shared by SQLite and PostgreSQL. Timestamps are epoch
 * milliseconds (INTEGER / BIGINT): both databases compare them the same way
 * and no time zone handling can differ between them. Structured values are
 * JSON text. Identifiers are UUID text.
 */
export interface Tables {
  one_time_records: OneTimeRecordTable;
}

/**
 * Short-lived values that may be used exactly once: pushed request_uris,
 * authorization codes, rotated refresh tokens. The key is a hash of the secret
 * the client holds, never the secret itself.
 */
export interface OneTimeRecordTable {
  kind: string;
  key_hash: string;
  /** Who may consume it (client_id, account id); checked by the caller. */
  owner: string;
  payload: string;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
}
