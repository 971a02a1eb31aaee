import type { Kysely, Selectable } from "kysely";
import type { AuthorizationDetail } from "../domain/oidc/authorization-details.ts";
import type { SessionClientRow } from "../domain/oidc/backchannel-logout/model.ts";
import type { GrantRow, InteractionRow, LocalizedName, OidcUserRow, SessionRow } from "../domain/oidc/model.ts";
import type { GrantStore, InteractionStore, OidcUserStore, SessionAuthentication, SessionStore, SignedIn } from "../domain/oidc/stores.ts";
import type { Database } from "./database.ts";
import { revokeGrantsWithTokens } from "./revocations.ts";
import { preparedQuery } from "./prepared-query.ts";
import type { OidcGrantTable, OidcSessionTable, OidcUserTable, Tables } from "./schema.ts";

/** Grant ids are 256 random bits, base64url. */
const grantIdPattern = /^[A-Za-z0-9_-]{1,64}$/;

/** Text PostgreSQL can store and compare: no NUL bytes (it answers those with an error, not a miss). */
function storable(value: string): boolean {
  return !value.includes("\u0000");
}

/** Users, sessions, interactions and grants of the OpenID Connect provider. */
export class OidcRepository implements OidcUserStore, SessionStore, InteractionStore, GrantStore {
  constructor(private readonly database: Database) {}

  private get db() {
    return this.database.db;
  }

  async insertUser(user: OidcUserRow): Promise<void> {
    await this.db
      .insertInto("oidc_users")
      .values({
        id: user.id,
        login: user.login,
        password_hash: user.passwordHash,
        totp_secret_sealed: user.totpSecretSealed,
        totp_last_step: user.totpLastStep,
        name: user.name,
        localized_names: user.localizedNames.length > 0 ? JSON.stringify(user.localizedNames) : null,
        email: user.email,
        created_at: user.createdAt,
      })
      .execute();
  }

  async findUserByLogin(login: string): Promise<OidcUserRow | undefined> {
    if (!storable(login)) return undefined;
    const row = await this.db.selectFrom("oidc_users").selectAll().where("login", "=", login).executeTakeFirst();
    return row && toUser(row);
  }

  async findUser(id: string): Promise<OidcUserRow | undefined> {
    const row = await this.db.selectFrom("oidc_users").selectAll().where("id", "=", id).executeTakeFirst();
    return row && toUser(row);
  }

  async updateUserSecrets(id: string, values: { passwordHash?: string; totpSecretSealed?: string | null }): Promise<void> {
    await this.db
      .updateTable("oidc_users")
      .set({
        ...(values.passwordHash !== undefined ? { password_hash: values.passwordHash } : {}),
        ...(values.totpSecretSealed !== undefined ? { totp_secret_sealed: values.totpSecretSealed, totp_last_step: null } : {}),
      })
      .where("id", "=", id)
      .execute();
  }

  async updateUserNames(id: string, localizedNames: LocalizedName[]): Promise<void> {
    const value = localizedNames.length > 0 ? JSON.stringify(localizedNames) : null;
    await this.db.updateTable("oidc_users").set({ localized_names: value }).where("id", "=", id).execute();
  }

  /** Records a used TOTP step only if it is newer than the last one: a code works once, even under concurrency. */
  async advanceTotpStep(userId: string, step: number): Promise<boolean> {
    const result = await this.db
      .updateTable("oidc_users")
      .set({ totp_last_step: step })
      .where("id", "=", userId)
      .where((eb) => eb.or([eb("totp_last_step", "is", null), eb("totp_last_step", "<", step)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async insertSession(s: SessionRow): Promise<void> {
    await this.db
      .insertInto("oidc_sessions")
      .values({
        id_hash: s.idHash,
        user_id: s.userId,
        auth_time: s.authTime,
        acr: s.acr,
        amr: JSON.stringify(s.amr),
        created_at: s.createdAt,
        expires_at: s.expiresAt,
      })
      .execute();
  }

  async findSession(idHash: string, now: number): Promise<SessionRow | undefined> {
    const row = await this.db
      .selectFrom("oidc_sessions")
      .selectAll()
      .where("id_hash", "=", idHash)
      .where("expires_at", ">", now)
      .executeTakeFirst();
    return row && toSession(row);
  }

  /**
   * The session, its user and the user's current grant for the client in one
   * statement (two joins): the authorization endpoint needs all three on every
   * request. The current grant is the one findLatestGrant finds.
   */
  async findSignedIn(idHash: string, now: number, clientId: string): Promise<SignedIn | undefined> {
    const [row] = await signedIn(this.db, idHash, now, clientId);
    if (!row) return undefined;
    const user =
      row.user_id_found === null || row.user_login === null || row.user_password_hash === null || row.user_created_at === null
        ? undefined
        : toUser({
            id: row.user_id_found,
            login: row.user_login,
            password_hash: row.user_password_hash,
            totp_secret_sealed: row.user_totp_secret_sealed,
            totp_last_step: row.user_totp_last_step,
            name: row.user_name,
            localized_names: row.user_localized_names,
            email: row.user_email,
            created_at: row.user_created_at,
          });
    const currentGrant =
      row.grant_id === null ||
      row.grant_user_id === null ||
      row.grant_client_id === null ||
      row.grant_scopes === null ||
      row.grant_authorization_details === null ||
      row.grant_created_at === null ||
      row.grant_updated_at === null
        ? undefined
        : toGrant({
            id: row.grant_id,
            user_id: row.grant_user_id,
            client_id: row.grant_client_id,
            scopes: row.grant_scopes,
            authorization_details: row.grant_authorization_details,
            created_at: row.grant_created_at,
            updated_at: row.grant_updated_at,
            revoked_at: row.grant_revoked_at,
          });
    return { session: toSession(row), user, currentGrant };
  }

  async updateSessionAuthentication(idHash: string, values: SessionAuthentication): Promise<void> {
    await this.db
      .updateTable("oidc_sessions")
      .set({
        auth_time: values.authTime,
        acr: values.acr,
        amr: JSON.stringify(values.amr),
        ...(values.basicInfoConsentAt === undefined ? {} : { basic_info_consent_at: values.basicInfoConsentAt }),
      })
      .where("id_hash", "=", idHash)
      .execute();
  }

  async deleteSession(idHash: string): Promise<void> {
    await this.db.deleteFrom("oidc_sessions").where("id_hash", "=", idHash).execute();
  }

  async recordSessionClient(row: SessionClientRow): Promise<void> {
    await this.db
      .insertInto("oidc_session_clients")
      .values({ session_id_hash: row.sessionIdHash, client_id: row.clientId, sid: row.sid, user_id: row.userId, created_at: row.createdAt })
      .onConflict((oc) => oc.columns(["session_id_hash", "client_id"]).doNothing())
      .execute();
  }

  async insertInteraction(i: InteractionRow): Promise<void> {
    await this.db
      .insertInto("oidc_interactions")
      .values({
        id_hash: i.idHash,
        browser_hash: i.browserHash,
        state: JSON.stringify(i.state),
        created_at: i.createdAt,
        expires_at: i.expiresAt,
      })
      .execute();
  }

  async findInteraction(idHash: string, now: number): Promise<InteractionRow | undefined> {
    const row = await this.db
      .selectFrom("oidc_interactions")
      .selectAll()
      .where("id_hash", "=", idHash)
      .where("expires_at", ">", now)
      .executeTakeFirst();
    return (
      row && {
        idHash: row.id_hash,
        browserHash: row.browser_hash,
        state: JSON.parse(row.state) as unknown,
        createdAt: Number(row.created_at),
        expiresAt: Number(row.expires_at),
      }
    );
  }

  async updateInteraction(idHash: string, state: unknown): Promise<void> {
    await this.db.updateTable("oidc_interactions").set({ state: JSON.stringify(state) }).where("id_hash", "=", idHash).execute();
  }

  /** Ends an interaction in one statement; true for the one caller that moved it, so a code is issued once even for a double submit. */
  async endInteraction(idHash: string, endedHash: string): Promise<boolean> {
    const result = await this.db.updateTable("oidc_interactions").set({ id_hash: endedHash }).where("id_hash", "=", idHash).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async findGrant(id: string): Promise<GrantRow | undefined> {
    if (!grantIdPattern.test(id)) return undefined;
    const row = await this.db.selectFrom("oidc_grants").selectAll().where("id", "=", id).where("revoked_at", "is", null).executeTakeFirst();
    return row && toGrant(row);
  }

  /** Revokes a grant and every token issued under it, together. */
  async revokeGrant(id: string, now: number): Promise<void> {
    await this.db.transaction().execute((trx) => revokeGrantsWithTokens(trx, { grantId: id }, now));
  }

  /** The user's most recently updated live grant for a client. */
  async findLatestGrant(userId: string, clientId: string): Promise<GrantRow | undefined> {
    const row = await this.db
      .selectFrom("oidc_grants")
      .selectAll()
      .where("user_id", "=", userId)
      .where("client_id", "=", clientId)
      .where("revoked_at", "is", null)
      .orderBy("updated_at", "desc")
      .limit(1)
      .executeTakeFirst();
    return row && toGrant(row);
  }

  async saveGrant(g: GrantRow): Promise<void> {
    const values = {
      scopes: JSON.stringify(g.scopes),
      authorization_details: JSON.stringify(g.authorizationDetails),
      updated_at: g.updatedAt,
    };
    await this.db
      .insertInto("oidc_grants")
      .values({ id: g.id, user_id: g.userId, client_id: g.clientId, created_at: g.createdAt, revoked_at: null, ...values })
      .onConflict((oc) => oc.column("id").doUpdateSet(values))
      .execute();
  }
}

function toUser(row: Selectable<OidcUserTable>): OidcUserRow {
  return {
    id: row.id,
    login: row.login,
    passwordHash: row.password_hash,
    totpSecretSealed: row.totp_secret_sealed,
    totpLastStep: row.totp_last_step === null ? null : Number(row.totp_last_step),
    name: row.name,
    localizedNames: row.localized_names === null ? [] : (JSON.parse(row.localized_names) as LocalizedName[]),
    email: row.email,
    createdAt: Number(row.created_at),
  };
}

function toSession(row: Omit<Selectable<OidcSessionTable>, "basic_info_consent_at">): SessionRow {
  return {
    idHash: row.id_hash,
    userId: row.user_id,
    authTime: Number(row.auth_time),
    acr: row.acr,
    amr: JSON.parse(row.amr) as string[],
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}

function toGrant(row: Selectable<OidcGrantTable>): GrantRow {
  return {
    id: row.id,
    userId: row.user_id,
    clientId: row.client_id,
    scopes: JSON.parse(row.scopes) as string[],
    authorizationDetails: JSON.parse(row.authorization_details) as AuthorizationDetail[],
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}

/** Every column of a session; toSession's row type makes a column left out here fail to compile. */
const sessionColumns = ["id_hash", "user_id", "auth_time", "acr", "amr", "created_at", "expires_at"] as const satisfies readonly (keyof OidcSessionTable)[];

/** findSignedIn's statement, built and compiled once (see preparedQuery): a join every authorization request makes. */
const signedIn = preparedQuery((db: Kysely<Tables>, idHash: string, now: number, clientId: string) =>
  db
    .selectFrom("oidc_sessions as s")
    .leftJoin("oidc_users as u", "u.id", "s.user_id")
    .leftJoin("oidc_grants as g", (join) =>
      join.on((eb) =>
        eb(
          "g.id",
          "=",
          eb
            .selectFrom("oidc_grants as latest")
            .select("latest.id")
            .whereRef("latest.user_id", "=", "s.user_id")
            .where("latest.client_id", "=", clientId)
            .where("latest.revoked_at", "is", null)
            .orderBy("latest.updated_at", "desc")
            .limit(1),
        ),
      ),
    )
    // Named rather than "s".*, so that SQLite's rows are built in JavaScript (see withRowBuilder).
    .select(sessionColumns.map((column) => `s.${column}` as const))
    .select([
      "u.id as user_id_found",
      "u.login as user_login",
      "u.password_hash as user_password_hash",
      "u.totp_secret_sealed as user_totp_secret_sealed",
      "u.totp_last_step as user_totp_last_step",
      "u.name as user_name",
      "u.localized_names as user_localized_names",
      "u.email as user_email",
      "u.created_at as user_created_at",
      "g.id as grant_id",
      "g.user_id as grant_user_id",
      "g.client_id as grant_client_id",
      "g.scopes as grant_scopes",
      "g.authorization_details as grant_authorization_details",
      "g.created_at as grant_created_at",
      "g.updated_at as grant_updated_at",
      "g.revoked_at as grant_revoked_at",
    ])
    .where("s.id_hash", "=", idHash)
    .where("s.expires_at", ">", now),
);
