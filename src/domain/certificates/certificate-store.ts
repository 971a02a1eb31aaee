import type { CertificateType, CertificateUser, StatusRecord, StoredCertificate } from "./model.ts";

/** Position in a newest-first listing: the last record of the previous page. */
export interface StatusCursor {
  createdAt: number;
  id: string;
}

/** A certificate read by id (undefined: none of the account's), and the API auth version the same statement read (undefined when it found no row). */
export interface CertificateAndCurrentAuthVersion {
  certificate: StoredCertificate | undefined;
  authVersion: number | undefined;
}

/**
 * What the certificate services need from storage; src/storage implements it.
 * Every read takes the account id: rows of other accounts are invisible, not
 * forbidden. The "many" methods serve batch checks and return results keyed
 * by id, so callers keep their own order.
 */
export interface CertificateStore {
  insertUser(user: CertificateUser): Promise<void>;
  findUser(accountId: string, userId: string): Promise<CertificateUser | undefined>;
  findUsers(accountId: string, userIds: readonly string[]): Promise<Map<string, CertificateUser>>;
  insertCertificate(certificate: StoredCertificate): Promise<void>;
  /** Inserts unless the account already holds this certificate; true when this call stored it. */
  insertCertificateIfAbsent(certificate: StoredCertificate): Promise<boolean>;
  findCertificateByFingerprint(accountId: string, fingerprintSha256: string): Promise<StoredCertificate | undefined>;
  /** The user of the account's certificate with one of these fingerprints (of the latest such certificate), if any. */
  findUserByFingerprints(accountId: string, fingerprints: readonly string[]): Promise<CertificateUser | undefined>;
  setCertificateUser(accountId: string, certificateId: string, userId: string): Promise<void>;
  /** Removes a user that owns nothing: one created for a certificate another call registered first. */
  deleteUserWithoutCertificates(accountId: string, userId: string): Promise<void>;
  findCertificate(accountId: string, certificateId: string): Promise<StoredCertificate | undefined>;
  /**
   * findCertificate, and the account's current API auth version read by the
   * same statement: a caller admitted on a remembered token is confirmed
   * against it (see Caller) without a statement of its own.
   */
  findCertificateAndCurrentAuthVersion(accountId: string, certificateId: string): Promise<CertificateAndCurrentAuthVersion>;
  findCertificates(accountId: string, certificateIds: readonly string[]): Promise<Map<string, StoredCertificate>>;
  /** The user's latest certificate (latest notBefore, then most recently stored), optionally of one type. */
  findLatestCertificate(accountId: string, userId: string, type?: CertificateType): Promise<StoredCertificate | undefined>;
  /** findLatestCertificate for many users at once. */
  findLatestCertificates(accountId: string, userIds: readonly string[], type?: CertificateType): Promise<Map<string, StoredCertificate>>;
  listCertificates(accountId: string): Promise<StoredCertificate[]>;
  insertStatus(record: StatusRecord): Promise<void>;
  insertStatuses(records: readonly StatusRecord[]): Promise<void>;
  findStatus(accountId: string, statusId: string): Promise<StatusRecord | undefined>;
  /** Newest first (the order the records were written in for the certificate); pages never overlap or skip. */
  listStatuses(accountId: string, certificateId: string, limit: number, after?: StatusCursor): Promise<StatusRecord[]>;
  countStatuses(accountId: string): Promise<number>;
}
