import { setImmediate } from "node:timers/promises";
import { sql } from "kysely";
import type { CrlListKey, CrlListRecord, CrlListStore, VerifiedListToStore } from "../domain/certificates/crl/crl-list-store.ts";
import type { Database } from "./database.ts";
import { chunked } from "./parameter-limit.ts";
import { insertStatusRecords, sortedByCertificate } from "./status-rows.ts";
import type { CrlListTable } from "./schema.ts";

/** cRLNumber is up to 20 octets (< 10^49): zero-padded to 49 digits, text order is numeric order. */
const numberDigits = 49;

/**
 * The DER is stored a megabyte a statement and the status records a few
 * hundred a statement: on SQLite each statement runs on the event loop's
 * thread, and these keep each to a few milliseconds however large the list
 * or its changes.
 */
const partBytes = 1024 * 1024;
const recordsPerStatement = 100;

/**
 * better-sqlite3 answers synchronously, so awaiting a statement yields only
 * to other promises: without a turn of the event loop between statements,
 * timers and sockets would wait for the whole transaction.
 */
const betweenStatements = () => setImmediate();

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
    const parts = await this.database.db
      .selectFrom("crl_list_parts as p")
      .innerJoin("crl_lists as l", (join) => join.onRef("l.issuer_anchor", "=", "p.issuer_anchor").onRef("l.url", "=", "p.url").onRef("l.sha256", "=", "p.sha256"))
      .select("p.bytes")
      .where("p.issuer_anchor", "=", key.issuerAnchor)
      .where("p.url", "=", key.url)
      .where("p.sha256", "=", sha256)
      .orderBy("p.part")
      .execute();
    return parts.length === 0 ? undefined : Buffer.concat(parts.map((p) => p.bytes));
  }

  /**
   * One conditional upsert, so two instances storing at once cannot both win
   * with lists out of order: the update applies only when the stored list has
   * no list yet, or the new one's crlNumber is not lower (a list without one
   * never replaces a numbered one), its thisUpdate not earlier, and the
   * stored list is the one it replaces. The status records go in the same
   * transaction, after the upsert has locked the list's row (PostgreSQL) or
   * the database (SQLite): their events are recorded once, by the instance
   * that installed the list. The DER's parts (migration 0027) are written
   * before, outside it, so that the transaction stays small.
   */
  async saveList(list: VerifiedListToStore): Promise<boolean> {
    const values = {
      issuer_anchor: list.issuerAnchor,
      url: list.url,
      der: null,
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
    await this.writeParts(list);
    const stored = await this.database.db.transaction().execute(async (trx) => {
      const result = await trx
        .insertInto("crl_lists")
        .values(values)
        .onConflict((oc) => oc.columns(["issuer_anchor", "url"]).doUpdateSet(values).where(sql<boolean>`crl_lists.sha256 is null or (${replaces})`))
        .executeTakeFirst();
      if (Number(result.numInsertedOrUpdatedRows ?? 0) === 0) return false;
      for (const slice of chunked(sortedByCertificate(list.statusRecords), recordsPerStatement)) {
        await insertStatusRecords(trx, slice);
        await betweenStatements();
      }
      return true;
    });
    await this.deleteOtherParts(list);
    return stored;
  }

  /** The list's DER under its SHA-256, a part a statement; parts already there (another instance's copy of the same list) are kept. */
  private async writeParts(list: VerifiedListToStore): Promise<void> {
    const der = list.der;
    for (let part = 0; part * partBytes < der.byteLength; part++) {
      const start = part * partBytes;
      const bytes = Buffer.from(der.buffer, der.byteOffset + start, Math.min(partBytes, der.byteLength - start));
      await this.database.db
        .insertInto("crl_list_parts")
        .values({ issuer_anchor: list.issuerAnchor, url: list.url, sha256: list.sha256, part, bytes })
        .onConflict((oc) => oc.doNothing())
        .execute();
      // A megabyte a statement would outgrow SQLite's log within a list: each part waits for the log to be
      // copied back, off the event loop's thread, so the next one starts it over (see Database.logCopied).
      await this.database.logCopied();
      await betweenStatements();
    }
  }

  /** Parts of any list but the stored one: the list replaced, or this one when it was not stored (also what a crash left). */
  private async deleteOtherParts(key: CrlListKey): Promise<void> {
    const stale = await this.database.db
      .selectFrom("crl_list_parts as p")
      .leftJoin("crl_lists as l", (join) => join.onRef("l.issuer_anchor", "=", "p.issuer_anchor").onRef("l.url", "=", "p.url").onRef("l.sha256", "=", "p.sha256"))
      .select(["p.sha256", "p.part"])
      .where("p.issuer_anchor", "=", key.issuerAnchor)
      .where("p.url", "=", key.url)
      .where("l.sha256", "is", null)
      .execute();
    for (const { sha256, part } of stale) {
      await this.database.db
        .deleteFrom("crl_list_parts")
        .where("issuer_anchor", "=", key.issuerAnchor)
        .where("url", "=", key.url)
        .where("sha256", "=", sha256)
        .where("part", "=", part)
        .execute();
      await betweenStatements();
    }
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
    await this.database.db.deleteFrom("crl_list_parts").where("issuer_anchor", "=", key.issuerAnchor).where("url", "=", key.url).execute();
    await this.database.db.deleteFrom("crl_lists").where("issuer_anchor", "=", key.issuerAnchor).where("url", "=", key.url).execute();
  }

  async list(): Promise<CrlListRecord[]> {
    const rows = await this.database.db.selectFrom("crl_lists").select(metadata).orderBy("issuer_anchor").orderBy("url").execute();
    return rows.map(record);
  }
}
