import type { Kysely, Selectable } from "kysely";
import type { JSONWebKeySet } from "jose";
import type { ClientAuthMethod, GrantType, OidcClient } from "../domain/oidc/client.ts";
import { supportedAlg } from "../domain/oidc/keys/signing-algorithms.ts";
import type { ClientStore } from "../domain/oidc/stores.ts";
import { sharedRowReads, statementCalls, type StatementCalls } from "./coalesced-calls.ts";
import type { Database } from "./database.ts";
import { paddedToPowerOfTwo } from "./parameter-limit.ts";
import { revokeGrantsWithTokens } from "./revocations.ts";
import { preparedQuery } from "./prepared-query.ts";
import type { OidcClientTable, Tables } from "./schema.ts";

/** Every PAR and token request reads its client first (see preparedQuery). */
const clientById = preparedQuery((db: Kysely<Tables>, clientId: string) => db.selectFrom("oidc_clients").selectAll().where("client_id", "=", clientId));

/** The version of the registrations (migration 0022), read before every lookup. */
const clientVersion = preparedQuery((db: Kysely<Tables>) => db.selectFrom("oidc_client_version").select("version").where("id", "=", 1));

/** Registrations kept in memory; beyond this the oldest entry goes first. */
const cacheCapacity = 1000;

/** The shape client_metadata validation allows for client_id. */
const clientIdPattern = /^[A-Za-z0-9._~-]{1,255}$/;

/** Most distinct clients one shared read asks for. */
const maxClientsPerRead = 500;

/**
 * Client registrations. Every PAR, authorization and token request looks its
 * client up, so registrations found are kept in memory, each under the
 * version of the registrations (`oidc_client_version`, changed by triggers
 * on every insert, update and delete, whoever makes it) read before it. A
 * lookup reads that one row, and the registration only when the version has
 * changed since: a change made anywhere is seen on the next lookup, as with
 * API tokens (src/storage/cached-account-store.ts). Kept registrations are
 * frozen, so the one object can be handed to every caller.
 */
export class ClientsRepository implements ClientStore {
  /** On PostgreSQL the reads of concurrent requests share a statement (see statementCalls); on SQLite each runs its own, but for the version's (see sharedRowReads). */
  private readonly reads: StatementCalls<string, OidcClient | undefined>;
  private readonly versionReads: StatementCalls<undefined, number | undefined>;
  private readonly kept = new Map<string, { version: number; client: OidcClient }>();

  constructor(private readonly database: Database) {
    this.reads = statementCalls(database.dialect, (clientIds) => this.readTogether(clientIds), maxClientsPerRead);
    this.versionReads = sharedRowReads(database.dialect, async () => {
      const [row] = await clientVersion(this.database.db);
      return row && Number(row.version);
    });
  }

  async find(clientId: string): Promise<OidcClient | undefined> {
    // A value no registration can have is unknown without asking: PostgreSQL refuses some (NUL bytes) with an error.
    if (!clientIdPattern.test(clientId)) return undefined;
    // Read before the registration: a change committed in between leaves the entry under the older version.
    const version = await this.versionReads.call(undefined);
    const kept = this.kept.get(clientId);
    if (kept && kept.version === version) return kept.client;
    const client = await this.reads.call(clientId);
    this.kept.delete(clientId);
    if (client && version !== undefined) {
      this.kept.set(clientId, { version, client: deepFreeze(client) });
      if (this.kept.size > cacheCapacity) this.kept.delete(this.kept.keys().next().value!);
    }
    return client;
  }

  /** The clients asked for, in one statement; every call gets an object of its own. */
  private async readTogether(clientIds: readonly string[]): Promise<PromiseSettledResult<OidcClient | undefined>[]> {
    const distinct = [...new Set(clientIds)];
    const db = this.database.db;
    const rows = distinct.length === 1 ? await clientById(db, distinct[0]!) : await db.selectFrom("oidc_clients").selectAll().where("client_id", "in", paddedToPowerOfTwo(distinct)).execute();
    const byId = new Map(rows.map((row) => [row.client_id, row]));
    return clientIds.map((clientId) => {
      const row = byId.get(clientId);
      return { status: "fulfilled", value: row && toClient(row) };
    });
  }

  async list(): Promise<OidcClient[]> {
    const rows = await this.database.db.selectFrom("oidc_clients").selectAll().orderBy("client_id").execute();
    return rows.map(toClient);
  }

  /** The clients an API account registered for itself, oldest first. */
  async listForAccount(accountId: string): Promise<OidcClient[]> {
    const rows = await this.database.db.selectFrom("oidc_clients").selectAll().where("account_id", "=", accountId).orderBy("created_at").orderBy("client_id").execute();
    return rows.map(toClient);
  }

  /** Inserts or replaces the registration (the declarative file and the CLI both converge on it). */
  async save(client: OidcClient, now: number): Promise<void> {
    const values = clientColumns(client, now);
    await this.database.db
      .insertInto("oidc_clients")
      .values({ client_id: client.clientId, created_at: client.createdAt, ...values })
      .onConflict((oc) => oc.column("client_id").doUpdateSet(values))
      .execute();
  }

  /**
   * Removes a client and, in the same transaction, revokes its grants and
   * tokens (deletes them, for an API account's client): they must stop at once, and must not come back to life if the
   * client_id is registered again.
   */
  async delete(clientId: string, now: number): Promise<boolean> {
    return this.database.db.transaction().execute(async (trx) => {
      const result = await trx.deleteFrom("oidc_clients").where("client_id", "=", clientId).executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) return false;
      await revokeGrantsWithTokens(trx, { clientId }, now);
      // An API account's client: its access tokens go with it (which changes the API auth version, migration 0033).
      await trx.deleteFrom("api_access_tokens").where("client_id", "=", clientId).execute();
      return true;
    });
  }
}

/** A registration's columns but client_id and created_at, as every writer of oidc_clients stores them. */
export function clientColumns(client: OidcClient, now: number) {
  return {
    name: client.name,
    type: client.type,
    auth_method: client.tokenEndpointAuthMethod,
    secret_hash: client.secretHash,
    jwks: client.jwks ? JSON.stringify(client.jwks) : null,
    jwks_uri: client.jwksUri ?? null,
    redirect_uris: JSON.stringify(client.redirectUris),
    allowed_scopes: JSON.stringify(client.allowedScopes),
    allowed_authorization_details_types: JSON.stringify(client.allowedAuthorizationDetailsTypes),
    require_par: client.requirePushedAuthorizationRequests ? 1 : 0,
    grant_types: JSON.stringify(client.grantTypes),
    post_logout_redirect_uris: JSON.stringify(client.postLogoutRedirectUris),
    id_token_signed_response_alg: client.idTokenSignedResponseAlg,
    dpop_bound_access_tokens: client.dpopBoundAccessTokens ? 1 : 0,
    backchannel_logout_uri: client.backchannelLogoutUri ?? null,
    backchannel_logout_session_required: client.backchannelLogoutSessionRequired ? 1 : 0,
    account_id: client.accountId ?? null,
    profile: client.profile ?? null,
    require_signed_request_object: client.requireSignedRequestObject ? 1 : 0,
    updated_at: now,
  };
}

function toClient(row: Selectable<OidcClientTable>): OidcClient {
  return {
    clientId: row.client_id,
    name: row.name,
    type: row.type as OidcClient["type"],
    tokenEndpointAuthMethod: row.auth_method as ClientAuthMethod,
    secretHash: row.secret_hash,
    jwks: row.jwks ? (JSON.parse(row.jwks) as JSONWebKeySet) : null,
    ...(row.jwks_uri !== null ? { jwksUri: row.jwks_uri } : {}),
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    allowedScopes: JSON.parse(row.allowed_scopes) as string[],
    allowedAuthorizationDetailsTypes: JSON.parse(row.allowed_authorization_details_types) as string[],
    requirePushedAuthorizationRequests: Number(row.require_par) === 1,
    grantTypes: JSON.parse(row.grant_types) as GrantType[],
    postLogoutRedirectUris: JSON.parse(row.post_logout_redirect_uris) as string[],
    idTokenSignedResponseAlg: supportedAlg(row.id_token_signed_response_alg),
    dpopBoundAccessTokens: Number(row.dpop_bound_access_tokens) === 1,
    ...(row.backchannel_logout_uri !== null ? { backchannelLogoutUri: row.backchannel_logout_uri } : {}),
    ...(Number(row.backchannel_logout_session_required) === 1 ? { backchannelLogoutSessionRequired: true } : {}),
    ...(row.account_id !== null ? { accountId: row.account_id } : {}),
    profile: row.profile === "fapi2" ? "fapi2" : null,
    requireSignedRequestObject: Number(row.require_signed_request_object) === 1,
    createdAt: Number(row.created_at),
  };
}

/** Freezes a registration and everything in it (its lists, its JWKS). */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}
