import type { StoredCertificate } from "../certificates/model.ts";
import { mockStatesOf } from "./mock-states.ts";
import type { MockCertificateState, MockStore } from "./mock-store.ts";

/**
 * Whether the mock CA's CRL speaks for a certificate in this state. A
 * certificate set to STATUS_UNKNOWN is one the list does not cover: a list
 * can only say revoked or good, and only OCSP can say "unknown". So a check
 * finds the CRL unavailable for it (MockCaSource), and a re-issued list that
 * drops its serial records no change for it (ListChanges): the next check
 * records its change from the one source that speaks for it.
 */
export function crlCovers(state: MockCertificateState | undefined): boolean {
  return state?.status !== "unknown";
}

/** The ids of the registered certificates the mock CA's CRL does not cover now (the CRL issuer's notCoveredBy). */
export async function notCoveredByMockCrl(store: MockStore, certificates: readonly StoredCertificate[]): Promise<ReadonlySet<string>> {
  const states = await mockStatesOf(store, certificates);
  return new Set(certificates.filter((_, i) => !crlCovers(states[i])).map((c) => c.id));
}
