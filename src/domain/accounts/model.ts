/** Whether an account may use the API: not yet, yes, or no longer for now. */
export type ApiStatus = "not_started" | "active" | "suspended";

/** A customer of the certificate API; its certificates, users and verifications are its own. */
export interface AccountRow {
  id: string;
  name: string;
  apiStatus: ApiStatus;
  createdAt: number;
  updatedAt: number;
}

/** An API token of an account, known by its public prefix; only a hash of the secret is held. */
export interface ApiTokenRow {
  id: string;
  accountId: string;
  prefix: string;
  secretHash: string;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

export interface TokenWithAccount {
  token: ApiTokenRow;
  account: AccountRow;
}

/** What Accounts needs from storage; src/storage implements it. */
export interface AccountStore {
  insertAccount(account: AccountRow): Promise<void>;
  findAccountByName(name: string): Promise<AccountRow | undefined>;
  findAccountById(id: string): Promise<AccountRow | undefined>;
  listAccounts(): Promise<AccountRow[]>;
  setApiStatus(id: string, status: ApiStatus, now: number): Promise<void>;
  insertToken(token: ApiTokenRow): Promise<void>;
  /** The token with this prefix and its account, in one read: what every authenticated call needs. */
  findTokenWithAccount(prefix: string): Promise<TokenWithAccount | undefined>;
  /**
   * The API auth version: it changes whenever a token is revoked or deleted
   * or an account's API status changes, whoever changed it. A token lookup
   * read under the current version still holds.
   */
  authVersion(): Promise<number | undefined>;
  listTokens(accountId: string): Promise<ApiTokenRow[]>;
  /** False when no live token has the prefix. */
  revokeToken(prefix: string, now: number): Promise<boolean>;
  /** Records a use, at most once per interval, so busy tokens do not write on every call. */
  touchToken(id: string, now: number, intervalMs: number): Promise<void>;
}
