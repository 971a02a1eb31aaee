import type { StatusRecord } from "../model.ts";

/** A list is one distribution point URL for one issuing trust anchor. */
export interface CrlListKey {
  issuerAnchor: string;
  url: string;
}

/** What the database keeps about a list (the DER itself is read only when needed). */
export interface CrlListRecord extends CrlListKey {
  /** Absent until a list has been fetched and verified. */
  sha256: string | undefined;
  etag: string | undefined;
  lastModified: string | undefined;
  thisUpdate: number | undefined;
  nextUpdate: number | undefined;
  crlNumber: bigint | undefined;
  entries: number | undefined;
  bytes: number | undefined;
  fetchedAt: number | undefined;
  /** When the list was last confirmed at its source (a download or a 304). */
  checkedAt: number | undefined;
  lastError: string | undefined;
  lastErrorAt: number | undefined;
}

export interface VerifiedListToStore extends CrlListKey {
  /**
   * The SHA-256 of the list this one replaces, which `statusRecords` were
   * computed against: stored only if the database still holds that list (or
   * none), so each change is recorded against the list it changed. Undefined
   * when nothing was held: then only crlNumber order is checked.
   */
  replacing: string | undefined;
  /** The status records of the registered certificates whose status this list changes (see ListChanges), stored in the same transaction. */
  statusRecords: readonly StatusRecord[];
  der: Uint8Array;
  sha256: string;
  etag: string | undefined;
  lastModified: string | undefined;
  thisUpdate: number;
  nextUpdate: number | undefined;
  crlNumber: bigint | undefined;
  entries: number;
  at: number;
}

/**
 * Where instances sharing a database keep the lists they fetched, so that
 * they answer from the same list and one instance's download serves all.
 */
export interface CrlListStore {
  find(key: CrlListKey): Promise<CrlListRecord | undefined>;
  /** The stored DER, when the stored list is still the one with this SHA-256. */
  der(key: CrlListKey, sha256: string): Promise<Uint8Array | undefined>;
  /**
   * Stores a verified list and its status records in one transaction, unless
   * the stored one is newer (a higher crlNumber, or a later thisUpdate):
   * crlNumber order holds across instances; or is not the one it replaces.
   * Returns false when the stored one was kept (and no record was stored).
   */
  saveList(list: VerifiedListToStore): Promise<boolean>;
  /** The stored list (this SHA-256) was confirmed at its source: a 304, or the same bytes again. */
  markChecked(key: CrlListKey, sha256: string, at: number, etag: string | undefined, lastModified: string | undefined): Promise<void>;
  recordError(key: CrlListKey, message: string, at: number): Promise<void>;
  list(): Promise<CrlListRecord[]>;
  /** Drops the stored list: its issuer re-issued it, possibly dated back (see CrlLists.reissued). */
  forget(key: CrlListKey): Promise<void>;
}
