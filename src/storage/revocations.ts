import type { Kysely } from "kysely";
import type { TokenSelection } from "../domain/oidc/model.ts";
import type { Tables } from "./schema.ts";


const tokenColumns = { tokenHash: "token_hash", family: "family", grantId: "grant_id", clientId: "client_id" } as const;

/** Marks the selected live tokens revoked; returns how many. */
export async function revokeTokens(db: Kysely<Tables>, selection: TokenSelection, now: number): Promise<number> {
  const [key, value] = Object.entries(selection)[0] as [keyof typeof tokenColumns, string];
  const result = await db
    .updateTable("oidc_tokens")
    .set({ revoked_at: now })
    .where(tokenColumns[key], "=", value)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Revokes grants (one, or every grant of a client) and every token issued
 * under them. Run it in a transaction: the tokens must not outlive the grant
 * by a failure between the two statements.
 */
export async function revokeGrantsWithTokens(trx: Kysely<Tables>, selection: { grantId: string } | { clientId: string }, now: number): Promise<void> {
  const grants = trx.updateTable("oidc_grants").set({ revoked_at: now }).where("revoked_at", "is", null);
  await ("grantId" in selection ? grants.where("id", "=", selection.grantId) : grants.where("client_id", "=", selection.clientId)).execute();
  await revokeTokens(trx, selection, now);
}
