import type { Selectable } from "kysely";
import type { PasskeyRow, PasskeyStore } from "../domain/oidc/passkeys/model.ts";
import type { Database } from "./database.ts";
import type { OidcPasskeyTable } from "./schema.ts";

/** Named rather than `*`, so that SQLite's rows are built in JavaScript (see withRowBuilder). */
const passkeyColumns = [
  "credential_id", "user_id", "user_handle", "public_key", "sign_count", "transports", "backup_eligible", "backed_up", "name", "created_at", "last_used_at",
] as const satisfies readonly (keyof OidcPasskeyTable)[];

/** End users' passkeys (migration 0029). */
export class PasskeysRepository implements PasskeyStore {
  constructor(private readonly database: Database) {}

  private get db() {
    return this.database.db;
  }

  async insertPasskey(row: PasskeyRow): Promise<boolean> {
    const result = await this.db
      .insertInto("oidc_passkeys")
      .values({
        credential_id: row.credentialId,
        user_id: row.userId,
        user_handle: row.userHandle,
        public_key: row.publicKey,
        sign_count: row.signCount,
        transports: JSON.stringify(row.transports),
        backup_eligible: row.backupEligible ? 1 : 0,
        backed_up: row.backedUp ? 1 : 0,
        name: row.name,
        created_at: row.createdAt,
        last_used_at: row.lastUsedAt,
      })
      .onConflict((oc) => oc.column("credential_id").doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async findPasskey(credentialId: string): Promise<PasskeyRow | undefined> {
    const row = await this.db.selectFrom("oidc_passkeys").select(passkeyColumns).where("credential_id", "=", credentialId).executeTakeFirst();
    return row && toPasskey(row);
  }

  async listPasskeys(userId: string): Promise<PasskeyRow[]> {
    const rows = await this.db
      .selectFrom("oidc_passkeys")
      .select(passkeyColumns)
      .where("user_id", "=", userId)
      .orderBy("created_at")
      .orderBy("credential_id")
      .execute();
    return rows.map(toPasskey);
  }

  async recordUse(credentialId: string, expectedSignCount: number, use: { signCount: number; backedUp: boolean; usedAt: number }): Promise<boolean> {
    const result = await this.db
      .updateTable("oidc_passkeys")
      .set({ sign_count: use.signCount, backed_up: use.backedUp ? 1 : 0, last_used_at: use.usedAt })
      .where("credential_id", "=", credentialId)
      .where("sign_count", "=", expectedSignCount)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async deletePasskey(userId: string, credentialId: string): Promise<boolean> {
    const result = await this.db.deleteFrom("oidc_passkeys").where("credential_id", "=", credentialId).where("user_id", "=", userId).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }
}

function toPasskey(row: Selectable<OidcPasskeyTable>): PasskeyRow {
  return {
    credentialId: row.credential_id,
    userId: row.user_id,
    userHandle: row.user_handle,
    publicKey: row.public_key,
    signCount: Number(row.sign_count),
    transports: JSON.parse(row.transports) as string[],
    backupEligible: Number(row.backup_eligible) === 1,
    backedUp: Number(row.backed_up) === 1,
    name: row.name,
    createdAt: Number(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
  };
}
