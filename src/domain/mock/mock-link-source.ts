import type { MockStore } from "./mock-store.ts";
import type { LinkSource } from "../certificates/link-source.ts";

/**
 * The mock environment's stand-in for J-LIS's linking services: the mock CA
 * knows which mock person each certificate it issued belongs to (the user it
 * was issued for), so it can name that person's other certificates. It knows
 * nothing of certificates it did not issue.
 */
export class MockLinkSource implements LinkSource {
  constructor(private readonly repository: Pick<MockStore, "samePersonFingerprints">) {}

  samePerson(certificate: { fingerprintSha256: string }): Promise<readonly string[]> {
    return this.repository.samePersonFingerprints(certificate.fingerprintSha256);
  }
}
