import type { SessionClientRow } from "../../../src/domain/oidc/backchannel-logout/model.ts";
import type { GrantRow, InteractionRow, LocalizedName, OidcUserRow, SessionRow } from "../../../src/domain/oidc/model.ts";
import type { GrantStore, InteractionStore, OidcUserStore, SessionStore, SignedIn } from "../../../src/domain/oidc/stores.ts";
import { copied, InMemoryTables } from "./tables.ts";

/**
 * Users, sessions, interactions and grants in memory, with the semantics of
 * src/storage/oidc-repository.ts: sessions and interactions are found only
 * before they expire; a grant is found only while live; `endInteraction`
 * moves the row in one synchronous step, so only the first caller gets true;
 * revoking a grant revokes its tokens in the same tables.
 */
export class InMemoryOidcRecords implements OidcUserStore, SessionStore, InteractionStore, GrantStore {
  constructor(private readonly tables: InMemoryTables = new InMemoryTables()) {}

  async insertUser(user: OidcUserRow): Promise<void> {
    if (this.tables.users.has(user.id)) throw new Error(`user ${user.id} already exists`);
    if ([...this.tables.users.values()].some((u) => u.login === user.login)) throw new Error(`login ${user.login} is taken`);
    this.tables.users.set(user.id, copied(user));
  }

  async findUserByLogin(login: string): Promise<OidcUserRow | undefined> {
    const user = [...this.tables.users.values()].find((u) => u.login === login);
    return user && copied(user);
  }

  async findUser(id: string): Promise<OidcUserRow | undefined> {
    const user = this.tables.users.get(id);
    return user && copied(user);
  }

  async updateUserSecrets(id: string, values: { passwordHash?: string; totpSecretSealed?: string | null }): Promise<void> {
    const user = this.tables.users.get(id);
    if (!user) return;
    if (values.passwordHash !== undefined) user.passwordHash = values.passwordHash;
    // A new TOTP secret starts a new line of time steps.
    if (values.totpSecretSealed !== undefined) Object.assign(user, { totpSecretSealed: values.totpSecretSealed, totpLastStep: null });
  }

  async updateUserNames(id: string, localizedNames: LocalizedName[]): Promise<void> {
    const user = this.tables.users.get(id);
    if (user) user.localizedNames = copied(localizedNames);
  }

  async advanceTotpStep(userId: string, step: number): Promise<boolean> {
    const user = this.tables.users.get(userId);
    if (!user || (user.totpLastStep !== null && user.totpLastStep >= step)) return false;
    user.totpLastStep = step;
    return true;
  }

  async insertSession(session: SessionRow): Promise<void> {
    if (!this.tables.users.has(session.userId)) throw new Error(`session of unknown user ${session.userId}`);
    if (this.tables.sessions.has(session.idHash)) throw new Error("session already exists");
    this.tables.sessions.set(session.idHash, copied(session));
  }

  async findSession(idHash: string, now: number): Promise<SessionRow | undefined> {
    const session = this.tables.sessions.get(idHash);
    return session && session.expiresAt > now ? copied(session) : undefined;
  }

  async findSignedIn(idHash: string, now: number, clientId: string): Promise<SignedIn | undefined> {
    const session = await this.findSession(idHash, now);
    if (!session) return undefined;
    return { session, user: await this.findUser(session.userId), currentGrant: await this.findLatestGrant(session.userId, clientId) };
  }

  async updateSessionAuthentication(idHash: string, values: { authTime: number; acr: string; amr: string[] }): Promise<void> {
    const session = this.tables.sessions.get(idHash);
    if (session) Object.assign(session, copied(values));
  }

  async deleteSession(idHash: string): Promise<void> {
    this.tables.sessions.delete(idHash);
  }

  /** The pairs recorded, by session id hash then client id (Back-Channel Logout). */
  readonly sessionClients = new Map<string, SessionClientRow>();

  async recordSessionClient(row: SessionClientRow): Promise<void> {
    const key = `${row.sessionIdHash} ${row.clientId}`;
    if (!this.sessionClients.has(key)) this.sessionClients.set(key, copied(row));
  }

  async insertInteraction(interaction: InteractionRow): Promise<void> {
    if (this.tables.interactions.has(interaction.idHash)) throw new Error("interaction already exists");
    this.tables.interactions.set(interaction.idHash, copied(interaction));
  }

  async findInteraction(idHash: string, now: number): Promise<InteractionRow | undefined> {
    const interaction = this.tables.interactions.get(idHash);
    return interaction && interaction.expiresAt > now ? copied(interaction) : undefined;
  }

  async updateInteraction(idHash: string, state: unknown): Promise<void> {
    const interaction = this.tables.interactions.get(idHash);
    if (interaction) interaction.state = copied(state);
  }

  async endInteraction(idHash: string, endedHash: string): Promise<boolean> {
    const interaction = this.tables.interactions.get(idHash);
    if (!interaction) return false;
    this.tables.interactions.delete(idHash);
    this.tables.interactions.set(endedHash, { ...interaction, idHash: endedHash });
    return true;
  }

  async findGrant(id: string): Promise<GrantRow | undefined> {
    const grant = this.tables.grants.get(id);
    return grant && grant.revokedAt === null ? copied(grant) : undefined;
  }

  async findLatestGrant(userId: string, clientId: string): Promise<GrantRow | undefined> {
    let latest: GrantRow | undefined;
    for (const grant of this.tables.grants.values()) {
      if (grant.userId !== userId || grant.clientId !== clientId || grant.revokedAt !== null) continue;
      if (!latest || grant.updatedAt > latest.updatedAt) latest = grant;
    }
    return latest && copied(latest);
  }

  /** An upsert: a grant saved again gets its new rights and updatedAt, and keeps its revocation. */
  async saveGrant(grant: GrantRow): Promise<void> {
    if (!this.tables.users.has(grant.userId)) throw new Error(`grant of unknown user ${grant.userId}`);
    const existing = this.tables.grants.get(grant.id);
    if (existing) {
      Object.assign(existing, copied({ scopes: grant.scopes, authorizationDetails: grant.authorizationDetails, updatedAt: grant.updatedAt }));
      return;
    }
    this.tables.grants.set(grant.id, { ...copied(grant), revokedAt: null });
  }

  async revokeGrant(id: string, now: number): Promise<void> {
    const grant = this.tables.grants.get(id);
    if (grant && grant.revokedAt === null) grant.revokedAt = now;
    for (const token of this.tables.tokens.values()) {
      if (token.grantId === id && token.revokedAt === null) token.revokedAt = now;
    }
  }
}
