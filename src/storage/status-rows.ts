import type { Insertable, Kysely } from "kysely";
import type { StatusRecord } from "../domain/certificates/model.ts";
import { chunked, maxParameters } from "./parameter-limit.ts";
import { preparedInsert } from "./prepared-query.ts";
import type { CertificateStatusTable, Tables } from "./schema.ts";

/** Status records, a group at a time (see preparedInsert). */
const insertStatusRows = preparedInsert<Tables>("certificate_statuses");

/** Columns of certificate_statuses: how many rows one insert can hold within the parameter limit. */
const statusColumns = 10;
const statusRowsPerInsert = Math.floor(maxParameters / statusColumns);

/**
 * Inserts status records, in as few statements as the parameter limit
 * allows, ordered by certificate (a stable sort: one certificate's records
 * keep their order, which the history's trigger links them in). Whoever
 * writes records (checks, batches, a new CRL's changes) writes them here.
 */
export async function insertStatusRecords(db: Kysely<Tables>, records: readonly StatusRecord[]): Promise<void> {
  for (const slice of chunked(sortedByCertificate(records), statusRowsPerInsert)) {
    await insertStatusRows(db, slice.map(toStatusRow));
  }
}

/** The records in their certificates' order, each certificate's in the order given (a stable sort). */
export function sortedByCertificate(records: readonly StatusRecord[]): StatusRecord[] {
  return [...records].sort((a, b) => (a.certificateId < b.certificateId ? -1 : a.certificateId > b.certificateId ? 1 : 0));
}

function toStatusRow(s: StatusRecord): Insertable<CertificateStatusTable> {
  return {
    id: s.id,
    account_id: s.accountId,
    certificate_id: s.certificateId,
    status: s.status,
    check_method: s.checkMethod,
    check_purpose: s.checkPurpose,
    source_updated_at: s.sourceUpdatedAt,
    revoked_at: s.revokedAt,
    revoked_reason: s.revokedReason,
    created_at: s.createdAt,
  };
}
