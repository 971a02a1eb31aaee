import type { CheckMethod, RevocationReasonCode, Status } from "../certificates/model.ts";

/** The mock CA's certificate and key, shared by every instance on the database. */
export interface MockAuthorityRow {
  id: string;
  certificatePem: string;
  privateKeyPem: string;
  createdAt: number;
}

/** What checks of a mock certificate report, as set through MockService. */
export interface MockCertificateState {
  certificateId: string;
  status: Status;
  revokedAt: number | null;
  revokedReason: RevocationReasonCode | null;
  sourceUpdatedAt: number | null;
  updatedAt: number;
  /** The methods the mock source offers, in order of preference; null: both, CRL first. */
  offeredMethods: CheckMethod[] | null;
}

/** What the mock environment needs from storage; src/storage implements it. */
export interface MockStore {
  findAuthority(id: string): Promise<MockAuthorityRow | undefined>;
  /** Inserts unless another instance got there first; the caller re-reads to learn which one won. */
  insertAuthorityIfAbsent(row: MockAuthorityRow): Promise<void>;
  findState(certificateId: string): Promise<MockCertificateState | undefined>;
  /** The states of many certificates in one read; absent ones are missing from the map. */
  findStates(certificateIds: readonly string[]): Promise<Map<string, MockCertificateState>>;
  /**
   * For certificates of the mock CA registered by fingerprint: the state set on
   * the mock certificate with each fingerprint, in whichever account created
   * it (revocation belongs to the certificate); keyed by fingerprint.
   */
  findStatesByFingerprints(fingerprints: readonly string[]): Promise<Map<string, MockCertificateState>>;
  /** The fingerprints of the mock certificates issued to the same mock person. */
  samePersonFingerprints(fingerprintSha256: string): Promise<string[]>;
  /** Serial numbers of every revoked mock certificate, of every account: the mock CA's CRL lists them all. */
  listRevoked(): Promise<{ serialNumber: string; revokedAt: number; revokedReason: RevocationReasonCode }[]>;
  saveState(state: MockCertificateState): Promise<void>;
  /** Replaces the material kept under this id (a renewed OCSP responder certificate). */
  replaceAuthority(row: MockAuthorityRow): Promise<void>;
  /** The mock CA's current CRL issue: its cRLNumber and thisUpdate (null: no change since the CA was made). */
  crlIssue(id: string): Promise<{ crlNumber: number; thisUpdate: number | null; createdAt: number } | undefined>;
  /** A new CRL issue: the next cRLNumber, in one statement so that concurrent changes each get their own. */
  nextCrlIssue(id: string, thisUpdate: number): Promise<void>;
  /** The mock certificates with these serial numbers and their states (null: never set); serials never issued are missing. */
  findStatesBySerials(serialNumbers: readonly string[]): Promise<Map<string, MockCertificateState | null>>;
}
