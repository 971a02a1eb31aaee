import { sql, type ExpressionBuilder, type Insertable, type Kysely, type Selectable } from "kysely";
import type { AuthorizationDetail } from "../domain/oidc/authorization-details.ts";
import type { TokenKind, TokenRow, TokenSelection } from "../domain/oidc/model.ts";
import type { TokenStore, TokenWithGrant } from "../domain/oidc/stores.ts";
import type { Database } from "./database.ts";
import { groupedWrites, type StatementCalls } from "./coalesced-calls.ts";
import { preparedInsert, preparedQuery } from "./prepared-query.ts";
import { revokedFamilyOf, revokeTokens } from "./revocations.ts";
import type { OidcTokenTable, Tables } from "./schema.ts";

/**
 * Every column of a token, named rather than `*` so that SQLite's rows are
 * built in JavaScript (see withRowBuilder); toToken's row type makes a
 * column left out here fail to compile.
 */
const tokenColumns = [
  "token_hash", "kind", "family", "client_id", "user_id", "grant_id", "scopes", "authorization_details", "auth_time", "acr", "amr",
  "sid", "claims_locales", "dpop_jkt", "created_at", "expires_at", "consumed_at", "revoked_at",
] as const satisfies readonly (keyof OidcTokenTable)[];

/**
 * A token read with its family's revocation (migration 0037): its
 * `revoked_at` is the earlier of its own and its family's.
 */
function tokenRead(db: Kysely<Tables>, tokenHash: string) {
  const [own, family] = [sql.ref("t.revoked_at"), sql.ref("f.revoked_at")];
  return db
    .selectFrom("oidc_tokens as t")
    .leftJoin("oidc_revoked_families as f", "f.family", "t.family")
    .select(tokenColumns.filter((column) => column !== "revoked_at").map((column) => `t.${column}` as const))
    .select(sql<number | null>`case when ${family} is not null and (${own} is null or ${family} < ${own}) then ${family} else ${own} end`.as("revoked_at"))
    .where("t.token_hash", "=", tokenHash);
}

/** Every bearer check's read (see preparedQuery). */
const tokenWithGrant = preparedQuery((db: Kysely<Tables>, tokenHash: string) =>
  tokenRead(db, tokenHash)
    .leftJoin("oidc_grants as g", (join) => join.onRef("g.id", "=", "t.grant_id").on("g.revoked_at", "is", null))
    .select(["g.scopes as grant_scopes", "g.authorization_details as grant_authorization_details"]),
);

/** A token by its key: a refresh's scope check, a replayed token's family (see preparedQuery). */
const tokenByHash = preparedQuery((db: Kysely<Tables>, tokenHash: string) => tokenRead(db, tokenHash));

/** The rotation's UPDATE … RETURNING, but for the DPoP condition (see consumeRefresh). */
function refreshUse(db: Kysely<Tables>, tokenHash: string, clientId: string, now: number) {
  const liveGrant = (eb: ExpressionBuilder<Tables, "oidc_tokens">) =>
    eb.selectFrom("oidc_grants").whereRef("oidc_grants.id", "=", "oidc_tokens.grant_id").where("oidc_grants.revoked_at", "is", null);
  return db
    .updateTable("oidc_tokens")
    .set({ consumed_at: now })
    .where("token_hash", "=", tokenHash)
    .where("kind", "=", "refresh")
    .where("client_id", "=", clientId)
    .where("consumed_at", "is", null)
    .where("revoked_at", "is", null)
    .where("expires_at", ">", now)
    .where(({ not, exists, selectFrom }) => not(exists(revokedFamilyOf(selectFrom))))
    .returning(tokenColumns)
    .returning((eb) => [
      liveGrant(eb).select("oidc_grants.scopes").as("grant_scopes"),
      liveGrant(eb).select("oidc_grants.authorization_details").as("grant_authorization_details"),
    ]);
}

/** A refresh without a DPoP proof: only a token bound to no key. */
const useUnboundRefresh = preparedQuery((db: Kysely<Tables>, tokenHash: string, clientId: string, now: number) =>
  refreshUse(db, tokenHash, clientId, now).where("dpop_jkt", "is", null),
);

/** A refresh with a proof of key `dpopJkt`: a token bound to no key or to that one. */
const useRefresh = preparedQuery((db: Kysely<Tables>, tokenHash: string, clientId: string, now: number, dpopJkt: string) =>
  refreshUse(db, tokenHash, clientId, now).where((eb) => eb.or([eb("dpop_jkt", "is", null), eb("dpop_jkt", "=", dpopJkt)])),
);

/** The tokens of a group of issuances (see preparedInsert). */
const insertTokenRows = preparedInsert<Tables>("oidc_tokens");

/** Issuances one grouped insert takes (an access token and at most a refresh token each): SQL short enough to be kept prepared. */
const issuancesPerGroup = 16;

export class TokensRepository implements TokenStore {
  /** Concurrent issuances committed together (see groupedWrites); each issuance is one item, so it is stored whole or not at all. */
  private readonly issuances: StatementCalls<readonly TokenRow[], void>;

  /**
   * `familyRevocationKeptMs`: how long a family's revocation is kept, at
   * least the longest lifetime of a token (a token issued just before it
   * lives that long); a year unless the service says.
   */
  constructor(
    private readonly database: Database,
    private readonly familyRevocationKeptMs = 366 * 24 * 3600 * 1000,
  ) {
    this.issuances = groupedWrites(
      database.dialect,
      (issuances) => insertTokenRows(this.database.db, issuances.flat().map(tokenValues)),
      issuancesPerGroup,
    );
  }

  /** The tokens of one issuance in one multi-row INSERT, with those of issuances asked for at the same time. */
  async insert(tokens: readonly TokenRow[]): Promise<void> {
    if (tokens.length === 0) return;
    await this.issuances.call(tokens);
  }

  async find(tokenHash: string): Promise<TokenRow | undefined> {
    const [row] = await tokenByHash(this.database.db, tokenHash);
    return row && toToken(row);
  }

  /** The token and what its grant holds while the grant is live, in one statement (a join). */
  async findWithGrant(tokenHash: string): Promise<TokenWithGrant | undefined> {
    const [row] = await tokenWithGrant(this.database.db, tokenHash);
    return row && withGrant(row);
  }

  /**
   * Rotation: marks a live refresh token used, in one conditional UPDATE, so of
   * two concurrent uses exactly one gets the row back. A token bound to
   * another DPoP key than `dpopJkt` is left as it is. The same statement
   * returns what its grant holds, when the grant is live, read as the update
   * sees it: no second statement for the grant.
   */
  async consumeRefresh(tokenHash: string, clientId: string, now: number, dpopJkt: string | null): Promise<TokenWithGrant | undefined> {
    const db = this.database.db;
    const [row] = dpopJkt === null ? await useUnboundRefresh(db, tokenHash, clientId, now) : await useRefresh(db, tokenHash, clientId, now, dpopJkt);
    return row && withGrant(row);
  }

  /** Revokes the selected live tokens (see TokenStore); a family in one row of its own (migration 0037). */
  async revoke(selection: TokenSelection, now: number): Promise<boolean> {
    if (!("family" in selection)) return (await revokeTokens(this.database.db, selection, now)) > 0;
    const result = await this.database.db
      .insertInto("oidc_revoked_families")
      .values({ family: selection.family, revoked_at: now, expires_at: now + this.familyRevocationKeptMs })
      .onConflict((conflict) => conflict.column("family").doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
  }
}

/** A token row with its grant's rights beside it (null: no live grant). */
function withGrant(row: Selectable<OidcTokenTable> & { grant_scopes: string | null; grant_authorization_details: string | null }): TokenWithGrant {
  const { grant_scopes: scopes, grant_authorization_details: details, ...token } = row;
  const grant =
    scopes === null || details === null ? undefined : { scopes: JSON.parse(scopes) as string[], authorizationDetails: JSON.parse(details) as AuthorizationDetail[] };
  return { token: toToken(token), grant };
}

function tokenValues(t: TokenRow): Insertable<OidcTokenTable> {
  return {
    token_hash: t.tokenHash,
    kind: t.kind,
    family: t.family,
    client_id: t.clientId,
    user_id: t.userId,
    grant_id: t.grantId,
    scopes: JSON.stringify(t.scopes),
    authorization_details: JSON.stringify(t.authorizationDetails),
    auth_time: t.authTime,
    acr: t.acr,
    amr: JSON.stringify(t.amr),
    sid: t.sid,
    claims_locales: t.claimsLocales && t.claimsLocales.length > 0 ? JSON.stringify(t.claimsLocales) : null,
    dpop_jkt: t.dpopJkt,
    created_at: t.createdAt,
    expires_at: t.expiresAt,
    consumed_at: t.consumedAt,
    revoked_at: t.revokedAt,
  };
}

function toToken(row: Selectable<OidcTokenTable>): TokenRow {
  return {
    tokenHash: row.token_hash,
    kind: row.kind as TokenKind,
    family: row.family,
    clientId: row.client_id,
    userId: row.user_id,
    grantId: row.grant_id,
    scopes: JSON.parse(row.scopes) as string[],
    authorizationDetails: JSON.parse(row.authorization_details) as AuthorizationDetail[],
    authTime: Number(row.auth_time),
    acr: row.acr,
    amr: JSON.parse(row.amr) as string[],
    sid: row.sid,
    claimsLocales: row.claims_locales === null ? null : (JSON.parse(row.claims_locales) as string[]),
    dpopJkt: row.dpop_jkt,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    consumedAt: row.consumed_at === null ? null : Number(row.consumed_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}
