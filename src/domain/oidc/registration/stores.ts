import type { OidcClient } from "../client.ts";

/**
 * What dynamic client registration (RFC 7591, RFC 7592) needs from storage.
 * Tokens are held only as their SHA-256 (hex).
 */
export interface ClientRegistrationStore {
  /**
   * Stores a new client with the hash of its registration access token, both
   * or neither; false (and nothing stored) when the client_id is taken.
   */
  insert(client: OidcClient, accessTokenHash: string, now: number): Promise<boolean>;
  /** The hash of the client's registration access token; undefined when the client did not register itself. */
  accessTokenHash(clientId: string): Promise<string | undefined>;
  /**
   * Replaces the client's registration and its token's hash, only while the
   * stored hash is still `expectedHash`: false when another request rotated
   * or removed it first.
   */
  replace(client: OidcClient, expectedHash: string, newHash: string, now: number): Promise<boolean>;
  /** Moves the token to `newHash` only while it is `expectedHash` (a read rotates it, as a replace does). */
  rotate(clientId: string, expectedHash: string, newHash: string, now: number): Promise<boolean>;
}

/** An initial access token as listed: never the token itself. */
export interface InitialAccessTokenSummary {
  id: string;
  name: string;
  createdAt: number;
}

export interface InitialAccessTokenStore {
  insert(token: InitialAccessTokenSummary & { tokenHash: string }): Promise<void>;
  exists(tokenHash: string): Promise<boolean>;
  list(): Promise<InitialAccessTokenSummary[]>;
  /** False when there was none with that id. */
  remove(id: string): Promise<boolean>;
}
