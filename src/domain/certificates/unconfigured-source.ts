import { DomainError } from "../errors.ts";
import type { RevocationAnswer, RevocationSource } from "./revocation-source.ts";

/**
 * The source for certificates no configured CRL or OCSP source covers (and,
 * in production mode, for every certificate of the mock CA, which is never
 * trusted there). It cannot answer, so it never claims "good".
 */
export class UnconfiguredSource implements RevocationSource {
  async check(): Promise<RevocationAnswer> {
    throw unavailable();
  }

  async checkMany(certificates: readonly unknown[]): Promise<DomainError[]> {
    return certificates.map(unavailable);
  }
}

function unavailable(): DomainError {
  return new DomainError("source_unavailable", "no revocation source is available for this certificate's issuer");
}
