import type { DomainError } from "../errors.ts";
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

  /**
   * The batch form of check: one answer or one DomainError per certificate,
   * in the given order, with a constant number of reads however many there
   * are (batch checks promise that). A DomainError that would fail check()
   * fails only its item here; any other failure rejects the whole call.
   */
  checkMany(
    certificates: readonly StoredCertificate[],
    preferred: CheckMethod | undefined,
    now: number,
  ): Promise<(RevocationAnswer | DomainError)[]>;
}
