import type { ExpressionBuilder, Kysely } from "kysely";
import type { TokenSelection } from "../domain/oidc/model.ts";
import type { Tables } from "./schema.ts";


/** A token's family among the revoked ones (migration 0037), for a statement on oidc_tokens. */
export function revokedFamilyOf(selectFrom: ExpressionBuilder<Tables, "oidc_tokens">["selectFrom"]) {
  return selectFrom("oidc_revoked_families").select("oidc_revoked_families.family").whereRef("oidc_revoked_families.family", "=", "oidc_tokens.family");
}

const tokenColumns = { tokenHash: "token_hash", grantId: "grant_id", clientId: "client_id" } as const;

/**
 * Marks the selected live tokens revoked; returns how many. Not a family:
 * a family is revoked in a row of its own (TokensRepository.revoke), and
 * its tokens count as revoked already.
 */
export async function revokeTokens(db: Kysely<Tables>, selection: Exclude<TokenSelection, { family: string }>, now: number): Promise<number> {
  const [key, value] = Object.entries(selection)[0] as [keyof typeof tokenColumns, string];
  const result = await db
    .updateTable("oidc_tokens")
    .set({ revoked_at: now })
    .where(tokenColumns[key], "=", value)
    .where("revoked_at", "is", null)
    .where(({ not, exists, selectFrom }) => not(exists(revokedFamilyOf(selectFrom))))
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
