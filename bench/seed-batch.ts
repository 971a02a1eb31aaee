import SqliteDatabase from "better-sqlite3";
import type { Insertable } from "kysely";
import { newId, newTimeOrderedId } from "../src/domain/ids.ts";
import { CertificatesRepository } from "../src/storage/certificates-repository.ts";
import { describeDatabaseUrl, openDatabase, type Database } from "../src/storage/database.ts";
import { analyzeSchema } from "../src/storage/migrate.ts";
import { MockRepository } from "../src/storage/mock/mock-repository.ts";
import type { Tables } from "../src/storage/schema.ts";

/**
 * count certificate ids of the account: those it has, then copies of one's
 * row under new ids (issuing 1,000 real certificates would take minutes and
 * measures nothing here; a copy keeps the template's serial number and
 * issuer, so its CRL lookup and stored OCSP answer are the template's), in
 * mock mode one in ten revoked so that the mock source's read finds states.
 * Then `history` status
 * records spread over them, so that the single and the batch scenario both
 * write into tables of a realistic size (index upkeep grows with them) rather
 * than whichever runs first getting the smaller table.
 */
export async function seedBatchCertificates(databaseUrl: string, accountName: string, templateId: string, count: number, history: number, mockStates: boolean): Promise<string[]> {
  const database = await openDatabase(databaseUrl);
  try {
    const repository = new CertificatesRepository(database);
    const mock = new MockRepository(database);
    const account = await database.db.selectFrom("accounts").select("id").where("name", "=", accountName).executeTakeFirstOrThrow();
    const existing = await repository.listCertificates(account.id);
    const template = existing.find((c) => c.id === templateId);
    if (!template) throw new Error(`certificate ${templateId} is not the ${accountName} account's`);
    const ids = existing.map((c) => c.id).slice(0, count);
    const now = Date.now();
    while (ids.length < count) {
      // Distinct fingerprints: one account registers a certificate once.
      const copy = { ...template, id: newId(), fingerprintSha256: `${ids.length}`.padStart(64, "0") };
      await repository.insertCertificate(copy);
      if (mockStates && ids.length % 10 === 0) {
        await mock.saveState({
          certificateId: copy.id,
          status: "revoked",
          revokedAt: now,
          revokedReason: 1,
          sourceUpdatedAt: null,
          updatedAt: now,
          offeredMethods: null,
        });
      }
      ids.push(copy.id);
    }
    if (database.dialect === "sqlite") writeSqliteHistory(describeDatabaseUrl(databaseUrl).location, account.id, ids, history, now);
    else {
      await writeHistory(database, account.id, ids, history, now);
      // Planner statistics after the bulk load, as any operator takes them after one: the migration analysed the
      // tables empty, and autovacuum looks again only after its next nap (a minute), well into the keys that read
      // them. On a noisy afternoon, check_pg_vs_connect gave 0.65-1.06 over six runs with fresh statistics (median
      // 0.86) and 0.52-0.87 over fifteen without (median 0.71).
      await analyzeSchema(database);
    }
    return ids;
  } finally {
    await database.close();
  }
}

/** One status record of the seeded history: the certificates in turn, oldest first, `index` ms apart. */
function historyRow(accountId: string, certificateIds: string[], history: number, index: number, now: number): Insertable<Tables["certificate_statuses"]> {
  const createdAt = now - history + index;
  return {
    // Time-ordered, as the service makes a status record's id (checks write them so): each lands at the end of the key's index.
    id: newTimeOrderedId(createdAt),
    account_id: accountId,
    certificate_id: certificateIds[index % certificateIds.length]!,
    status: "good",
    check_method: "crl",
    check_purpose: "liveness_check",
    source_updated_at: now,
    revoked_at: null,
    revoked_reason: null,
    created_at: createdAt,
  };
}

/** Rows per prepared INSERT on SQLite: fewer calls into the driver, well under its 32,766 bound parameters. */
const sqliteRowsPerInsert = 100;

/**
 * SQLite: a prepared INSERT of 100 rows, run over and over in one transaction, on a
 * connection of its own with a page cache large enough for both indexes, then
 * a checkpoint, so the server's first writes do not pay for copying the
 * history out of the write-ahead log. A million records in well under a
 * minute on a busy machine, where a statement per record through the
 * repository, each its own transaction, would take many minutes.
 */
function writeSqliteHistory(file: string, accountId: string, certificateIds: string[], history: number, now: number): void {
  const sqlite = new SqliteDatabase(file);
  try {
    sqlite.pragma("busy_timeout = 10000");
    sqlite.pragma("cache_size = -262144");
    // Every row names the demo account and one of its certificates: checking that, a million times, is wasted work.
    sqlite.pragma("foreign_keys = off");
    const columns = Object.keys(historyRow(accountId, certificateIds, history, 0, now));
    const placeholders = `(${columns.map(() => "?").join(", ")})`;
    const statement = (rows: number) =>
      sqlite.prepare(`insert into certificate_statuses (${columns.join(", ")}) values ${Array.from({ length: rows }, () => placeholders).join(", ")}`);
    const full = statement(sqliteRowsPerInsert);
    sqlite.transaction(() => {
      for (let written = 0; written < history; ) {
        const count = Math.min(sqliteRowsPerInsert, history - written);
        const values = Array.from({ length: count }, (_, i) => Object.values(historyRow(accountId, certificateIds, history, written + i, now))).flat();
        (count === sqliteRowsPerInsert ? full : statement(count)).run(values);
        written += count;
      }
    })();
    sqlite.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    sqlite.close();
  }
}

/** Rows per INSERT on PostgreSQL: 10 columns each, well under its 65,535 bound parameters. */
const rowsPerInsert = 3000;

/** PostgreSQL: multi-row INSERTs in one transaction. */
async function writeHistory(database: Database, accountId: string, certificateIds: string[], history: number, now: number): Promise<void> {
  await database.db.transaction().execute(async (trx) => {
    for (let written = 0; written < history; ) {
      const rows = Array.from({ length: Math.min(rowsPerInsert, history - written) }, (_, i) => historyRow(accountId, certificateIds, history, written + i, now));
      await trx.insertInto("certificate_statuses").values(rows).execute();
      written += rows.length;
    }
  });
}
