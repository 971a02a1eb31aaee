/**
 * A passkey (WebAuthn credential) registered to an end user. The public key
 * is public; nothing here is secret. `userHandle` is the random WebAuthn
 * user id the authenticator keeps with the credential (never the login or
 * the provider's user id, so the authenticator learns nothing about them).
 */
export interface PasskeyRow {
  /** The credential id, base64url as the browser gives it. */
  credentialId: string;
  userId: string;
  userHandle: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  /** The last signature counter seen (0 for authenticators that keep none). */
  signCount: number;
  /** How the browser can reach the authenticator (usb, internal, hybrid…), as it said at registration. */
  transports: string[];
  /** The credential may be copied off its device (backup eligible, flag BE); fixed at registration. */
  backupEligible: boolean;
  /** The credential is backed up (synced) as of its last use (flag BS). */
  backedUp: boolean;
  /** The name the user gave it. */
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
}

/** Where passkeys are kept (src/storage/passkeys-repository.ts). */
export interface PasskeyStore {
  insertPasskey(row: PasskeyRow): Promise<boolean>;
  findPasskey(credentialId: string): Promise<PasskeyRow | undefined>;
  /** The user's passkeys, oldest first. */
  listPasskeys(userId: string): Promise<PasskeyRow[]>;
  /**
   * Records a use: the new counter and flags, only while the stored counter
   * is still `expectedSignCount` (one statement, so two uses of the same
   * counter cannot both pass). False when it changed or the row is gone.
   */
  recordUse(credentialId: string, expectedSignCount: number, use: { signCount: number; backedUp: boolean; usedAt: number }): Promise<boolean>;
  deletePasskey(userId: string, credentialId: string): Promise<boolean>;
}
