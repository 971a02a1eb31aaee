import type { OidcClient } from "../../../src/domain/oidc/client.ts";
import type { GrantRow, InteractionRow, OidcUserRow, SessionRow, SigningKeyRow, TokenRow } from "../../../src/domain/oidc/model.ts";
import type { StoredOneTimeRecord } from "../../../src/domain/single-use.ts";

/**
 * The rows of one in-memory "database": what the SQL schema keeps in
 * tables, the in-memory stores keep in maps, so that stores sharing a
 * database see each other's writes as repositories do (a revoked grant
 * revokes its tokens; a refresh reads its grant). Tests may look at the rows
 * directly to say what was stored, and that only hashes were.
 */
export class InMemoryTables {
  readonly users = new Map<string, OidcUserRow>();
  /** By idHash. */
  readonly sessions = new Map<string, SessionRow>();
  /** By idHash: an ended interaction sits under its ended hash. */
  readonly interactions = new Map<string, InteractionRow>();
  readonly grants = new Map<string, GrantRow>();
  /** By tokenHash. */
  readonly tokens = new Map<string, TokenRow>();
  /** Revoked token families (migration 0037) and when they were revoked. */
  readonly revokedFamilies = new Map<string, number>();
  /** By kind and key hash (see oneTimeKey). */
  readonly oneTimeRecords = new Map<string, StoredOneTimeRecord>();
  /** By kid. */
  readonly signingKeys = new Map<string, SigningKeyRow>();
  readonly clients = new Map<string, OidcClient>();
}

/**
 * A copy as a JSON column gives it back: a store never hands out the object
 * it keeps, nor keeps the caller's, so a rule that forgets to save a change
 * fails here as it does on a database.
 */
export function copied<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}
