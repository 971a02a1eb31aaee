import type { OidcClient } from "../domain/oidc/client.ts";
import type { ClientRegistrationStore, InitialAccessTokenStore, InitialAccessTokenSummary } from "../domain/oidc/registration/stores.ts";
import { clientColumns } from "./clients-repository.ts";
import type { Database } from "./database.ts";

/** The shape client_metadata validation allows for client_id: anything else is no registration (PostgreSQL refuses some text, NUL bytes). */
const clientIdPattern = /^[A-Za-z0-9._~-]{1,255}$/;

/**
 * The clients that registered themselves and their registration access
 * tokens' hashes (migration 0031). The client's row and its token's row are
 * written in one transaction; a token's row goes when its client does
 * (cascade), however the client is removed.
 */
export class ClientRegistrationsRepository implements ClientRegistrationStore {
  constructor(private readonly database: Database) {}

  async insert(client: OidcClient, accessTokenHash: string, now: number): Promise<boolean> {
    return this.database.db.transaction().execute(async (trx) => {
      const inserted = await trx
        .insertInto("oidc_clients")
        .values({ client_id: client.clientId, created_at: client.createdAt, ...clientColumns(client, now) })
        .onConflict((oc) => oc.column("client_id").doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return false;
      await trx.insertInto("oidc_client_registrations").values({ client_id: client.clientId, access_token_hash: accessTokenHash, created_at: now, updated_at: now }).execute();
      return true;
    });
  }

  async accessTokenHash(clientId: string): Promise<string | undefined> {
    if (!clientIdPattern.test(clientId)) return undefined;
    const row = await this.database.db.selectFrom("oidc_client_registrations").select("access_token_hash").where("client_id", "=", clientId).executeTakeFirst();
    return row?.access_token_hash;
  }

  async replace(client: OidcClient, expectedHash: string, newHash: string, now: number): Promise<boolean> {
    return this.database.db.transaction().execute(async (trx) => {
      // The token first: of two requests with the same token, only the one that moves it changes the client.
      const moved = await trx
        .updateTable("oidc_client_registrations")
        .set({ access_token_hash: newHash, updated_at: now })
        .where("client_id", "=", client.clientId)
        .where("access_token_hash", "=", expectedHash)
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) === 0) return false;
      await trx.updateTable("oidc_clients").set(clientColumns(client, now)).where("client_id", "=", client.clientId).execute();
      return true;
    });
  }

  async rotate(clientId: string, expectedHash: string, newHash: string, now: number): Promise<boolean> {
    const moved = await this.database.db
      .updateTable("oidc_client_registrations")
      .set({ access_token_hash: newHash, updated_at: now })
      .where("client_id", "=", clientId)
      .where("access_token_hash", "=", expectedHash)
      .executeTakeFirst();
    return Number(moved.numUpdatedRows) === 1;
  }
}

/** Initial access tokens made by `shomei client registration-token create` (migration 0031). */
export class InitialAccessTokensRepository implements InitialAccessTokenStore {
  constructor(private readonly database: Database) {}

  async insert(token: InitialAccessTokenSummary & { tokenHash: string }): Promise<void> {
    await this.database.db.insertInto("oidc_registration_tokens").values({ id: token.id, token_hash: token.tokenHash, name: token.name, created_at: token.createdAt }).execute();
  }

  async exists(tokenHash: string): Promise<boolean> {
    const row = await this.database.db.selectFrom("oidc_registration_tokens").select("id").where("token_hash", "=", tokenHash).executeTakeFirst();
    return row !== undefined;
  }

  async list(): Promise<InitialAccessTokenSummary[]> {
    const rows = await this.database.db.selectFrom("oidc_registration_tokens").select(["id", "name", "created_at"]).orderBy("created_at").orderBy("id").execute();
    return rows.map((row) => ({ id: row.id, name: row.name, createdAt: Number(row.created_at) }));
  }

  async remove(id: string): Promise<boolean> {
    // Ids are UUIDs: any other text names none (and PostgreSQL is never handed a NUL byte).
    if (!/^[0-9a-f-]{36}$/i.test(id)) return false;
    const result = await this.database.db.deleteFrom("oidc_registration_tokens").where("id", "=", id).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }
}
