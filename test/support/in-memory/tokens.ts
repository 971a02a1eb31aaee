import type { TokenRow, TokenSelection } from "../../../src/domain/oidc/model.ts";
import type { TokenStore, TokenWithGrant } from "../../../src/domain/oidc/stores.ts";
import { copied, InMemoryTables } from "./tables.ts";

/** The member a TokenSelection names. */
type SelectedBy = "tokenHash" | "grantId" | "clientId";

/**
 * Access and refresh tokens in memory (src/storage/tokens-repository.ts on a
 * database), known by the key the domain stores in place of the token.
 * `consumeRefresh` checks and marks in one synchronous step, so a refresh
 * token is used exactly once however many callers race for it; its grant's
 * rights come with it while the grant is live.
 */
export class InMemoryTokens implements TokenStore {
  constructor(private readonly tables: InMemoryTables = new InMemoryTables()) {}

  async insert(tokens: readonly TokenRow[]): Promise<void> {
    // One issuance is stored whole or not at all, as the one INSERT does.
    if (tokens.some((t) => this.tables.tokens.has(t.tokenHash))) throw new Error("a token with this hash already exists");
    for (const token of tokens) {
      this.tables.tokens.set(token.tokenHash, { ...copied(token), claimsLocales: token.claimsLocales?.length ? [...token.claimsLocales] : null });
    }
  }

  async find(tokenHash: string): Promise<TokenRow | undefined> {
    const token = this.tables.tokens.get(tokenHash);
    return token && this.asRead(token);
  }

  async findWithGrant(tokenHash: string): Promise<TokenWithGrant | undefined> {
    const token = this.tables.tokens.get(tokenHash);
    return token && this.withGrant(token);
  }

  /** A copy of the token as a read shows it: revoked at the earlier of its own revocation and its family's. */
  private asRead(token: TokenRow): TokenRow {
    const family = this.tables.revokedFamilies.get(token.family);
    const revokedAt = family !== undefined && (token.revokedAt === null || family < token.revokedAt) ? family : token.revokedAt;
    return { ...copied(token), revokedAt };
  }

  async consumeRefresh(tokenHash: string, clientId: string, now: number, dpopJkt: string | null): Promise<TokenWithGrant | undefined> {
    const token = this.tables.tokens.get(tokenHash);
    if (!token || token.kind !== "refresh" || token.clientId !== clientId) return undefined;
    if (token.consumedAt !== null || token.revokedAt !== null || token.expiresAt <= now || this.tables.revokedFamilies.has(token.family)) return undefined;
    // Without a proof only an unbound token; with one, an unbound token or one bound to the proof's key.
    if (token.dpopJkt !== null && token.dpopJkt !== dpopJkt) return undefined;
    token.consumedAt = now;
    return this.withGrant(token);
  }

  async revoke(selection: TokenSelection, now: number): Promise<boolean> {
    if ("family" in selection) {
      if (this.tables.revokedFamilies.has(selection.family)) return false;
      this.tables.revokedFamilies.set(selection.family, now);
      return true;
    }
    const [member, value] = Object.entries(selection)[0] as [SelectedBy, string];
    let revoked = false;
    for (const token of this.tables.tokens.values()) {
      if (token[member] === value && token.revokedAt === null && !this.tables.revokedFamilies.has(token.family)) {
        token.revokedAt = now;
        revoked = true;
      }
    }
    return revoked;
  }

  private withGrant(token: TokenRow): TokenWithGrant {
    const grant = this.tables.grants.get(token.grantId);
    const live = grant && grant.revokedAt === null ? copied({ scopes: grant.scopes, authorizationDetails: grant.authorizationDetails }) : undefined;
    return { token: this.asRead(token), grant: live };
  }
}
