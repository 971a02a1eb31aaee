import type { MockCertificateState, MockStore } from "./mock-store.ts";
import { crlCovers } from "./mock-crl-coverage.ts";
import { mockStatesOf } from "./mock-states.ts";
import type { CheckMethod, StoredCertificate } from "../certificates/model.ts";
import type { DomainError } from "../errors.ts";
import { MethodSelectingSource } from "../certificates/method-selecting-source.ts";
import { BatchFirstSource, sourceUnavailable, type RevocationAnswer, type SingleMethodSource } from "../certificates/revocation-source.ts";

/**
 * Statuses of the mock CA's certificates, through the same CRL and OCSP
 * sources production uses, over HTTP to this server's own /mock/ca.crl and
 * /mock/ocsp. What the mock state adds is which methods the certificate's
 * source offers (SetMockCertificateStatus offeredCheckMethods, in order of
 * preference; unset: the configured order), as a real issuer's certificate
 * names a distribution point, a responder or both. A certificate set to
 * STATUS_UNKNOWN is one the CA's CRL does not cover (crlCovers): only OCSP
 * can say "unknown", so the CRL is unavailable for it, never "good".
 */
export class MockCaSource extends BatchFirstSource {
  private readonly notCovered: SingleMethodSource;

  constructor(
    private readonly repository: MockStore,
    private readonly sources: Record<CheckMethod, SingleMethodSource>,
    private readonly defaultOrder: readonly CheckMethod[],
    /** Makes the mock CA an issuer the CRL and OCSP sources know (once; it is created on first use). */
    private readonly ready: () => Promise<void>,
  ) {
    super();
    this.notCovered = {
      method: "crl",
      offers: () => true,
      check: () => Promise.reject(notCoveredError()),
      checkMany: (certificates) => Promise.resolve(certificates.map(() => notCoveredError())),
    };
  }

  /**
   * One read of the states for the whole batch (one more when some are mock certificates verified by
   * another account), then one batch per kind of offer. The states are read here, through the mock's own
   * store, as any source reads its own data: the certificate store knows nothing of them.
   */
  async checkMany(certificates: readonly StoredCertificate[], preferred: CheckMethod | undefined, now: number): Promise<(RevocationAnswer | DomainError)[]> {
    await this.ready();
    const states = await mockStatesOf(this.repository, certificates);
    const groups = new Map<string, number[]>();
    certificates.forEach((_, i) => {
      const key = this.order(states[i]).join(",") + (crlCovers(states[i]) ? "" : " not covered");
      const group = groups.get(key);
      if (group) group.push(i);
      else groups.set(key, [i]);
    });
    const answers: (RevocationAnswer | DomainError)[] = new Array(certificates.length);
    for (const positions of groups.values()) {
      const state = states[positions[0]!];
      const sources = this.order(state).map((method) => (method === "crl" && !crlCovers(state) ? this.notCovered : this.sources[method]));
      const given = await new MethodSelectingSource(sources).checkMany(positions.map((i) => certificates[i]!), preferred, now);
      positions.forEach((position, k) => (answers[position] = given[k]!));
    }
    return answers;
  }

  private order(state: MockCertificateState | undefined): readonly CheckMethod[] {
    return state?.offeredMethods ?? this.defaultOrder;
  }
}

function notCoveredError(): DomainError {
  return sourceUnavailable("the mock CA's CRL does not cover a certificate set to STATUS_UNKNOWN; only OCSP answers unknown");
}
