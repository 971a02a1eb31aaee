import type { MockCertificateState, MockRepository } from "../../storage/mock-repository.ts";
import type { CheckMethod, StoredCertificate } from "../certificates/model.ts";
import { DomainError } from "../errors.ts";
import type { RevocationAnswer, RevocationSource } from "../certificates/revocation-source.ts";

const bothMethods: readonly CheckMethod[] = ["crl", "ocsp"];
const dayMs = 24 * 60 * 60 * 1000;

/** JPKI CRLs are published daily; the mock pretends its list was issued at the start of the current UTC day. */
export function startOfUtcDay(now: number): number {
  return now - (now % dayMs);
}

/**
 * Answers for certificates of the mock CA from what MockService set: good
 * until told otherwise. Offers both CRL and OCSP unless MockService narrowed
 * them; the first offered (CRL, as for real JPKI certificates) when the
 * caller has no preference.
 */
export class MockRevocationSource implements RevocationSource {
  constructor(private readonly repository: MockRepository) {}

  async check(certificate: StoredCertificate, preferred: CheckMethod | undefined, now: number): Promise<RevocationAnswer> {
    const answer = answerFrom(await this.repository.findState(certificate.id), preferred, now);
    if (answer instanceof DomainError) throw answer;
    return answer;
  }

  /** Every state in one read. */
  async checkMany(
    certificates: readonly StoredCertificate[],
    preferred: CheckMethod | undefined,
    now: number,
  ): Promise<(RevocationAnswer | DomainError)[]> {
    const states = await this.repository.findStates(certificates.map((c) => c.id));
    return certificates.map((c) => answerFrom(states.get(c.id), preferred, now));
  }
}

function answerFrom(state: MockCertificateState | undefined, preferred: CheckMethod | undefined, now: number): RevocationAnswer | DomainError {
  const offered = state?.offeredMethods ?? bothMethods;
  if (preferred !== undefined && !offered.includes(preferred)) {
    return new DomainError(
      "check_method_not_offered",
      `the revocation source of this certificate does not offer ${preferred.toUpperCase()}; it offers ${offered.map((m) => m.toUpperCase()).join(", ")}`,
      "check_method",
    );
  }
  const method = preferred ?? offered[0]!;
  const sourceUpdatedAt = state?.sourceUpdatedAt ?? startOfUtcDay(now);
  if (!state || state.status !== "revoked") {
    return { status: state?.status ?? "good", method, sourceUpdatedAt, revokedAt: null, revokedReason: null };
  }
  return {
    status: "revoked",
    method,
    sourceUpdatedAt,
    revokedAt: state.revokedAt ?? state.updatedAt,
    revokedReason: state.revokedReason ?? 0,
  };
}
