import type { SessionClientRow } from "./backchannel-logout/model.ts";
import type { OidcClient } from "./client.ts";
import type { GrantedRights } from "./grants/coverage.ts";
import type { GrantRow, InteractionRow, LocalizedName, OidcUserRow, SessionRow, SigningKeyRow, TokenRow, TokenSelection } from "./model.ts";

/**
 * What the provider's services need from storage, each as narrow as its
 * users; src/storage implements them. Values are looked up by hash where the
 * client holds a secret (session ids, interaction ids, tokens).
 */

/** Finds a registered client by its client_id. */
export interface ClientLookup {
  find(clientId: string): Promise<OidcClient | undefined>;
}

export interface ClientStore extends ClientLookup {
  list(): Promise<OidcClient[]>;
  save(client: OidcClient, now: number): Promise<void>;
  /** Removes the client with its grants and tokens; false when there was none. */
  delete(clientId: string, now: number): Promise<boolean>;
}

export interface OidcUserStore {
  insertUser(user: OidcUserRow): Promise<void>;
  findUserByLogin(login: string): Promise<OidcUserRow | undefined>;
  findUser(id: string): Promise<OidcUserRow | undefined>;
  updateUserSecrets(id: string, values: { passwordHash?: string; totpSecretSealed?: string | null }): Promise<void>;
  updateUserNames(id: string, localizedNames: LocalizedName[]): Promise<void>;
  /** Records a used TOTP time step; false when it (or a later one) was used already. */
  advanceTotpStep(userId: string, step: number): Promise<boolean>;
}

/** A browser's session as the authorization endpoint reads it; user and grant are undefined when there is none. */
export interface SignedIn {
  session: SessionRow;
  user: OidcUserRow | undefined;
  currentGrant: GrantRow | undefined;
}

/** A session's renewed authentication; basicInfoConsentAt when the holder agreed to the signature certificate's 基本4情報 being read for it. */
export interface SessionAuthentication {
  authTime: number;
  acr: string;
  amr: string[];
  basicInfoConsentAt?: number | undefined;
}

export interface SessionStore {
  insertSession(session: SessionRow): Promise<void>;
  findSession(idHash: string, now: number): Promise<SessionRow | undefined>;
  /** The live session with its user and the user's current grant for the client (see GrantStore.findLatestGrant), read together. */
  findSignedIn(idHash: string, now: number, clientId: string): Promise<SignedIn | undefined>;
  updateSessionAuthentication(idHash: string, values: SessionAuthentication): Promise<void>;
  deleteSession(idHash: string): Promise<void>;
  /** Remembers that the client was issued a code in the session, once per pair (Back-Channel Logout: see SessionEndings). */
  recordSessionClient(row: SessionClientRow): Promise<void>;
}

export interface InteractionStore {
  insertInteraction(interaction: InteractionRow): Promise<void>;
  findInteraction(idHash: string, now: number): Promise<InteractionRow | undefined>;
  updateInteraction(idHash: string, state: unknown): Promise<void>;
  /**
   * Moves the interaction out of reach of its id, to `endedHash`, where it
   * stays until swept (to say it has ended); true for the one caller that
   * moved it: the single-use gate of an interaction.
   */
  endInteraction(idHash: string, endedHash: string): Promise<boolean>;
}

export interface GrantStore {
  findGrant(id: string): Promise<GrantRow | undefined>;
  findLatestGrant(userId: string, clientId: string): Promise<GrantRow | undefined>;
  saveGrant(grant: GrantRow): Promise<void>;
  /** Revokes the grant and every token issued under it. */
  revokeGrant(id: string, now: number): Promise<void>;
}

/** A token and what its grant holds, read together (grant undefined: the grant is revoked or gone). */
export interface TokenWithGrant {
  token: TokenRow;
  grant: GrantedRights | undefined;
}

export interface TokenStore {
  /** Stores the tokens of one issuance together. */
  insert(tokens: readonly TokenRow[]): Promise<void>;
  find(tokenHash: string): Promise<TokenRow | undefined>;
  findWithGrant(tokenHash: string): Promise<TokenWithGrant | undefined>;
  /**
   * Marks a live refresh token of this client used, atomically, unless it is
   * bound to another DPoP key than `dpopJkt` (the proof's; null: none);
   * undefined when it was not live, not this client's or bound to another key.
   * Its grant's rights come with it, as they were when it was used.
   */
  consumeRefresh(tokenHash: string, clientId: string, now: number, dpopJkt: string | null): Promise<TokenWithGrant | undefined>;
  /**
   * Revokes the selected live tokens: a family as a whole, its tokens and
   * any stored into it later. True when anything was newly revoked.
   */
  revoke(selection: TokenSelection, now: number): Promise<boolean>;
}

/** Signing keys, one line of generations per algorithm (alg). */
export interface SigningKeyStore {
  findNewest(alg: string): Promise<SigningKeyRow | undefined>;
  insertIfAbsent(key: SigningKeyRow): Promise<boolean>;
  retireOlderThan(alg: string, generation: number, now: number): Promise<number>;
  listPublished(retiredAfter: number): Promise<SigningKeyRow[]>;
}

/** DPoP proofs already used (RFC 9449 section 11.1), shared by every instance on the database. */
export interface DpopProofStore {
  /**
   * Records a proof as used until `expiresAt`, atomically: true for the one
   * caller that recorded it, false when it is already recorded and unexpired.
   */
  useOnce(proofHash: string, expiresAt: number, now: number): Promise<boolean>;
}
