import type { StoredCertificate } from "../certificates/model.ts";
import type { MockCertificateState, MockStore } from "./mock-store.ts";

/**
 * The mock states of these certificates, in their order (undefined: never
 * set): one read by id, one more by fingerprint when some are mock
 * certificates verified by another account. Such a copy is a row of that
 * account, and its state is the issued certificate's: revocation belongs to
 * the certificate, not to whoever registered it.
 */
export async function mockStatesOf(store: MockStore, certificates: readonly StoredCertificate[]): Promise<(MockCertificateState | undefined)[]> {
  const byId = await store.findStates(certificates.map((c) => c.id));
  const own = certificates.map((c) => byId.get(c.id));
  const verified = certificates.filter((c, i) => !own[i] && c.origin !== "mock");
  const byFingerprint = verified.length ? await store.findStatesByFingerprints(verified.map((c) => c.fingerprintSha256)) : new Map<string, MockCertificateState>();
  return certificates.map((c, i) => own[i] ?? byFingerprint.get(c.fingerprintSha256));
}
