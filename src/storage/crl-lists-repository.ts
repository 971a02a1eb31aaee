import { sql } from "kysely";
import type { CrlListKey, CrlListRecord, CrlListStore, VerifiedListToStore } from "../domain/certificates/crl/crl-list-store.ts";
import type { Database } from "./database.ts";
import { insertStatusRecords } from "./status-rows.ts";
import type { CrlListTable } from "./schema.ts";

/** cRLNumber is up to 20 octets (< 10^49): zero-padded to 49 digits, text order is numeric order. */
const numberDigits = 49;

function numberText(n: bigint | undefined): string | null {
  return n === undefined ? null : n.toString().padStart(numberDigits, "0");
}

const metadata = [
  "issuer_anchor", "url", "sha256", "etag", "last_modified", "this_update", "next_update", "crl_number",
  "entries", "bytes", "fetched_at", "checked_at", "last_error", "last_error_at",
] as const;

type MetadataRow = Pick<CrlListTable, (typeof metadata)[number]>;

function record(row: MetadataRow): CrlListRecord {
  return {
    issuerAnchor: row.issuer_anchor,
    url: row.url,
    sha256: row.sha256 ?? undefined,
    etag: row.etag ?? undefined,
    lastModified: row.last_modified ?? undefined,
    thisUpdate: row.this_update ?? undefined,
    nextUpdate: row.next_update ?? undefined,
    crlNumber: row.crl_number === null ? undefined : BigInt(row.crl_number),
    entries: row.entries ?? undefined,
    bytes: row.bytes ?? undefined,
    fetchedAt: row.fetched_at ?? undefined,
    checkedAt: row.checked_at ?? undefined,
    lastError: row.last_error ?? undefined,
    lastErrorAt: row.last_error_at ?? undefined,
  };
}

/** The shared CRLs (migration 0013). */
export class CrlListsRepository implements CrlListStore {
  constructor(private readonly database: Database) {}

  async find(key: CrlListKey): Promise<CrlListRecord | undefined> {
    const row = await this.database.db
      .selectFrom("crl_lists")
      .select(metadata)
      .where("issuer_anchor", "=", key.issuerAnchor)
      .where("url", "=", key.url)
      .executeTakeFirst();
    return row && record(row);
  }

  async der(key: CrlListKey, sha256: string): Promise<Uint8Array | undefined> {
    const row = await this.database.db
      .selectFrom("crl_lists")
      .select("der")
      .where("issuer_anchor", "=", key.issuerAnchor)
      .where("url", "=", key.url)
      .where("sha256", "=", sha256)
      .executeTakeFirst();
    return row?.der ?? undefined;
  }

  /**
   * One conditional upsert, so two instances storing at once cannot both win
   * with lists out of order: the update applies only when the stored list has
   * no DER yet, or the new one's crlNumber is not lower (a list without one
   * never replaces a numbered one), its thisUpdate not earlier, and the
   * stored list is the one it replaces. The status records go in the same
   * transaction, after the upsert has locked the list's row (PostgreSQL) or
   * the database (SQLite): their events are recorded once, by the instance
   * that installed the list.
   */
  async saveList(list: VerifiedListToStore): Promise<boolean> {
    const values = {
      issuer_anchor: list.issuerAnchor,
      url: list.url,
      der: Buffer.from(list.der.buffer, list.der.byteOffset, list.der.byteLength),
      sha256: list.sha256,
      etag: list.etag ?? null,
      last_modified: list.lastModified ?? null,
      this_update: list.thisUpdate,
      next_update: list.nextUpdate ?? null,
      crl_number: numberText(list.crlNumber),
      entries: list.entries,
      bytes: list.der.byteLength,
      fetched_at: list.at,
      checked_at: list.at,
      last_error: null,
      last_error_at: null,
    };
    const inOrder = sql<boolean>`(crl_lists.crl_number is null or excluded.crl_number >= crl_lists.crl_number) and excluded.this_update >= crl_lists.this_update`;
    const replaces = list.replacing === undefined ? inOrder : sql<boolean>`${inOrder} and crl_lists.sha256 = ${list.replacing}`;
    return this.database.db.transaction().execute(async (trx) => {
      const result = await trx
        .insertInto("crl_lists")
        .values(values)
        .onConflict((oc) => oc.columns(["issuer_anchor", "url"]).doUpdateSet(values).where(sql<boolean>`crl_lists.der is null or (${replaces})`))
        .executeTakeFirst();
      if (Number(result.numInsertedOrUpdatedRows ?? 0) === 0) return false;
      await insertStatusRecords(trx, list.statusRecords);
      return true;
    });
  }

  async markChecked(key: CrlListKey, sha256: string, at: number, etag: string | undefined, lastModified: string | undefined): Promise<void> {
    await this.database.db
      .updateTable("crl_lists")
      .set({ checked_at: at, etag: etag ?? null, last_modified: lastModified ?? null, last_error: null, last_error_at: null })
      .where("issuer_anchor", "=", key.issuerAnchor)
      .where("url", "=", key.url)
      .where("sha256", "=", sha256)
      .execute();
  }

  async recordError(key: CrlListKey, message: string, at: number): Promise<void> {
    await this.database.db
      .insertInto("crl_lists")
      .values({ issuer_anchor: key.issuerAnchor, url: key.url, last_error: message, last_error_at: at })
      .onConflict((oc) => oc.columns(["issuer_anchor", "url"]).doUpdateSet({ last_error: message, last_error_at: at }))
      .execute();
  }

  async forget(key: CrlListKey): Promise<void> {
    await this.database.db.deleteFrom("crl_lists").where("issuer_anchor", "=", key.issuerAnchor).where("url", "=", key.url).execute();
  }

  async list(): Promise<CrlListRecord[]> {
    const rows = await this.database.db.selectFrom("crl_lists").select(metadata).orderBy("issuer_anchor").orderBy("url").execute();
    return rows.map(record);
  }
}
