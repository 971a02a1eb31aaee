import type { MockCertificateState, MockStore } from "./mock-store.ts";
import type { CheckMethod, StoredCertificate } from "../certificates/model.ts";
import { DomainError } from "../errors.ts";
import { methodNotOffered, type RevocationAnswer, type RevocationSource } from "../certificates/revocation-source.ts";

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
  constructor(private readonly repository: MockStore) {}

  async check(certificate: StoredCertificate, preferred: CheckMethod | undefined, now: number): Promise<RevocationAnswer> {
    // A mock certificate verified by another account is a row of that account: its state is the issued certificate's.
    const state =
      (await this.repository.findState(certificate.id)) ??
      (certificate.origin === "mock" ? undefined : await this.repository.findStateByFingerprint(certificate.fingerprintSha256));
    const answer = answerFrom(state, preferred, now);
    if (answer instanceof DomainError) throw answer;
    return answer;
  }

  /** Every state in one read (two when some certificates are mock certificates verified by another account). */
  async checkMany(
    certificates: readonly StoredCertificate[],
    preferred: CheckMethod | undefined,
    now: number,
  ): Promise<(RevocationAnswer | DomainError)[]> {
    const states = await this.repository.findStates(certificates.map((c) => c.id));
    const verified = certificates.filter((c) => !states.has(c.id) && c.origin !== "mock");
    const byFingerprint = verified.length
      ? await this.repository.findStatesByFingerprints(verified.map((c) => c.fingerprintSha256))
      : new Map<string, MockCertificateState>();
    return certificates.map((c) => answerFrom(states.get(c.id) ?? byFingerprint.get(c.fingerprintSha256), preferred, now));
  }
}

function answerFrom(state: MockCertificateState | undefined, preferred: CheckMethod | undefined, now: number): RevocationAnswer | DomainError {
  const offered = state?.offeredMethods ?? bothMethods;
  if (preferred !== undefined && !offered.includes(preferred)) {
    return methodNotOffered(preferred, offered);
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
