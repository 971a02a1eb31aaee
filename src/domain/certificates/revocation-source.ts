import type { CheckMethod, RevocationReasonCode, Status, StoredCertificate } from "./model.ts";

/** What a revocation source says about one certificate at one moment. */
export interface RevocationAnswer {
  status: Status;
  method: CheckMethod;
  /** CRL thisUpdate or OCSP producedAt. */
  sourceUpdatedAt: number;
  revokedAt: number | null;
  revokedReason: RevocationReasonCode | null;
}

/**
 * Where statuses come from: the mock environment now; CRLs and OCSP responders
 * behind the same interface later. A source throws DomainError
 * "check_method_not_offered" when it cannot use the preferred method and
 * "source_unavailable" when it cannot answer at all. It never answers "good"
 * from stale data.
 */
export interface RevocationSource {
  check(certificate: StoredCertificate, preferred: CheckMethod | undefined, now: number): Promise<RevocationAnswer>;
}
