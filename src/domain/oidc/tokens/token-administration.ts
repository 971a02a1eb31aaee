import type { TokenRow } from "../model.ts";
import type { TokenStore, TokenWithGrant } from "../stores.ts";
import type { Clock } from "../../clock.ts";
import type { OidcClient } from "../client.ts";
import { storedKeyOf } from "../flow/secrets.ts";
import { requestCovered } from "../grants/coverage.ts";
import type { RawParameters } from "../parameters.ts";
import { readPresentedToken } from "./token-request.ts";
import type { ApiAccessTokens, ApiTokenIntrospection } from "../../accounts/api-access-tokens.ts";

/** Introspection answer (RFC 7662 §2.2). */
export type Introspection =
  | { active: false }
  | {
      active: true;
      /** RFC 7662 §2.2: the RFC 6749 token type; only access tokens have one. */
      token_type?: "Bearer" | "DPoP";
      client_id: string;
      sub: string;
      scope: string;
      exp: number;
      iat: number;
      iss: string;
      grant_id: string;
      authorization_details?: unknown[];
      /** RFC 9449 section 6.2: the DPoP key the token is bound to. */
      cnf?: { jkt: string };
    };

/**
 * Bearer token checks and the RFC 7009 / RFC 7662 endpoints. A token is live
 * while it is unexpired, unrevoked and its grant exists and still covers it:
 * revoking either, or replacing the grant with fewer rights, stops it at once,
 * since every check reads the database.
 */
export class TokenAdministration {
  constructor(
    private readonly tokens: TokenStore,
    private readonly issuer: string,
    private readonly clock: Clock,
    /** The tokens of API accounts' clients, which their own clients revoke and introspect here too. */
    private readonly apiTokens?: Pick<ApiAccessTokens, "revoke" | "introspect">,
  ) {}

  /** The live access token for a bearer value, or undefined. */
  async accessToken(value: string): Promise<TokenRow | undefined> {
    const found = await this.tokens.findWithGrant(storedKeyOf(value));
    if (!found || found.token.kind !== "access" || !this.live(found)) return undefined;
    return found.token;
  }

  /** RFC 7009: revokes a token of this client; unknown or foreign tokens are ignored (the answer is the same). */
  async revoke(client: OidcClient, form: RawParameters): Promise<void> {
    if (client.accountId !== undefined && this.apiTokens) return this.apiTokens.revoke(client, readPresentedToken(form));
    const row = await this.tokens.find(storedKeyOf(readPresentedToken(form)));
    if (!row || row.clientId !== client.clientId) return;
    const now = this.clock();
    // Revoking a refresh token ends everything issued from the same code (RFC 7009 §2.1 allows it and it is the safe reading).
    await this.tokens.revoke(row.kind === "refresh" ? { family: row.family } : { tokenHash: row.tokenHash }, now);
  }

  /** RFC 7662: a client may introspect only its own tokens; anything else is simply inactive. */
  async introspect(client: OidcClient, form: RawParameters): Promise<Introspection | ApiTokenIntrospection> {
    if (client.accountId !== undefined && this.apiTokens) return this.apiTokens.introspect(client, readPresentedToken(form));
    const found = await this.tokens.findWithGrant(storedKeyOf(readPresentedToken(form)));
    if (!found || found.token.clientId !== client.clientId || !this.live(found)) return { active: false };
    const row = found.token;
    if (row.kind === "refresh" && row.consumedAt !== null) return { active: false };
    return {
      active: true,
      ...(row.kind === "access" ? { token_type: row.dpopJkt === null ? ("Bearer" as const) : ("DPoP" as const) } : {}),
      client_id: row.clientId,
      sub: row.userId,
      scope: row.scopes.join(" "),
      exp: Math.floor(row.expiresAt / 1000),
      iat: Math.floor(row.createdAt / 1000),
      iss: this.issuer,
      grant_id: row.grantId,
      ...(row.authorizationDetails.length ? { authorization_details: row.authorizationDetails } : {}),
      ...(row.dpopJkt !== null ? { cnf: { jkt: row.dpopJkt } } : {}),
    };
  }

  private live({ token, grant }: TokenWithGrant): boolean {
    if (token.revokedAt !== null || token.expiresAt <= this.clock()) return false;
    // Revoked, or replaced with fewer rights than the token carries: either way it stops.
    return grant !== undefined && requestCovered(grant, token);
  }
}
