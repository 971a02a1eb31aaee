import { DomainError } from "../errors.ts";
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
 * Where statuses come from: the mock environment, CRLs, OCSP responders. A source throws DomainError
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

/** A source that answers by one method, for the certificates whose issuer offers it. */
export interface SingleMethodSource extends RevocationSource {
  readonly method: CheckMethod;
  /** Whether the certificate's issuer offers this method: a URL of its kind, or one configured for the issuer. */
  offers(certificate: StoredCertificate): boolean;
}

/** The caller asked for a method the certificate's source does not offer (failed_precondition). */
export function methodNotOffered(preferred: CheckMethod, offered: readonly CheckMethod[]): DomainError {
  const which = offered.length ? `it offers ${offered.map((m) => m.toUpperCase()).join(", ")}` : "it offers none";
  return new DomainError("check_method_not_offered", `the revocation source of this certificate does not offer ${preferred.toUpperCase()}; ${which}`, "check_method");
}

export function sourceUnavailable(message: string): DomainError {
  return new DomainError("source_unavailable", message);
}

/** The DomainError a check throws, as the item it fails in a batch; anything else still rejects. */
export function asItemError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  throw error;
}

/** A source whose batch form does the work: check() is checkMany() of one, its DomainError thrown. */
export abstract class BatchFirstSource implements RevocationSource {
  async check(certificate: StoredCertificate, preferred: CheckMethod | undefined, now: number): Promise<RevocationAnswer> {
    const [answer] = await this.checkMany([certificate], preferred, now);
    if (answer instanceof DomainError) throw answer;
    if (!answer) throw new Error("revocation source gave no answer");
    return answer;
  }

  abstract checkMany(certificates: readonly StoredCertificate[], preferred: CheckMethod | undefined, now: number): Promise<(RevocationAnswer | DomainError)[]>;
}
