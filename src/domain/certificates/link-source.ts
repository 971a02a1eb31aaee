/**
 * Who a certificate belongs to, beyond what the account has seen. A person's
 * renewed or re-issued certificate has a new key and serial; only the
 * registry that issued both knows they are the same person (for JPKI, J-LIS's
 * linking services, which shomei cannot reach). A link source answers with
 * the fingerprints of the person's other certificates; the registry puts the
 * new certificate with the user of any of them the account already has.
 */
export interface LinkSource {
  samePerson(certificate: { fingerprintSha256: string; issuer: string; serialNumber: string }): Promise<readonly string[]>;
}

/** Production: no registry is reachable, so every person's first certificate in an account starts a user. */
export const noLinkSource: LinkSource = {
  samePerson: async () => [],
};
