import type { Selectable } from "kysely";
import type { HashAlgorithm } from "../domain/verification/hash-algorithm.ts";
import type { VerificationRecord, VerificationResult } from "../domain/verification/model.ts";
import type { VerificationCursor, VerificationFilter, VerificationStore } from "../domain/verification/verification-store.ts";
import type { Database } from "./database.ts";
import type { VerificationTable } from "./schema.ts";

/** Every read and delete takes the account id: other accounts' rows are invisible. */
export class VerificationsRepository implements VerificationStore {
  constructor(private readonly database: Database) {}

  async insert(v: VerificationRecord): Promise<void> {
    await this.database.db
      .insertInto("verifications")
      .values({
        id: v.id,
        account_id: v.accountId,
        certificate_id: v.certificateId,
        user_id: v.userId,
        is_new_user: v.isNewUser ? 1 : 0,
        result: v.result,
        hash_algorithm: v.hashAlgorithm,
        certificate_status_id: v.certificateStatusId,
        content_sealed: v.contentSealed,
        created_at: v.createdAt,
      })
      .execute();
  }

  async find(accountId: string, id: string): Promise<VerificationRecord | undefined> {
    const row = await this.database.db
      .selectFrom("verifications")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** Newest first; ties on created_at ordered by id, so pages never overlap or skip. */
  async list(accountId: string, filter: VerificationFilter, limit: number, after?: VerificationCursor): Promise<VerificationRecord[]> {
    let query = this.database.db.selectFrom("verifications").selectAll().where("account_id", "=", accountId);
    if (filter.userId) query = query.where("user_id", "=", filter.userId);
    if (filter.certificateId) query = query.where("certificate_id", "=", filter.certificateId);
    if (after) {
      query = query.where((eb) =>
        eb.or([eb("created_at", "<", after.createdAt), eb.and([eb("created_at", "=", after.createdAt), eb("id", "<", after.id)])]),
      );
    }
    const rows = await query.orderBy("created_at", "desc").orderBy("id", "desc").limit(limit).execute();
    return rows.map(toRecord);
  }

  /** True when a row was deleted. */
  async delete(accountId: string, id: string): Promise<boolean> {
    const result = await this.database.db.deleteFrom("verifications").where("account_id", "=", accountId).where("id", "=", id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

function toRecord(row: Selectable<VerificationTable>): VerificationRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    certificateId: row.certificate_id,
    userId: row.user_id,
    isNewUser: Number(row.is_new_user) === 1,
    result: row.result as VerificationResult,
    hashAlgorithm: row.hash_algorithm as HashAlgorithm,
    certificateStatusId: row.certificate_status_id,
    contentSealed: row.content_sealed,
    createdAt: Number(row.created_at),
  };
}
