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
  /** What checks report for a certificate of the mock CA, by fingerprint, whichever account registered it. */
  findStateByFingerprint(fingerprintSha256: string): Promise<MockCertificateState | undefined>;
  /** findStateByFingerprint for many fingerprints in one read; keyed by fingerprint. */
  findStatesByFingerprints(fingerprints: readonly string[]): Promise<Map<string, MockCertificateState>>;
  /** The fingerprints of the mock certificates issued to the same mock person. */
  samePersonFingerprints(fingerprintSha256: string): Promise<string[]>;
  /** Serial numbers of every revoked mock certificate, of every account: the mock CA's CRL lists them all. */
  listRevoked(): Promise<{ serialNumber: string; revokedAt: number; revokedReason: RevocationReasonCode }[]>;
  saveState(state: MockCertificateState): Promise<void>;
}
