import type { X509Certificate } from "node:crypto";
import type { CertificateType } from "../certificates/model.ts";
import type { KeyUsage } from "../certificates/x509/parsed-certificate.ts";

/**
 * One certificate type an anchor issues, and how to tell it: the policy OID
 * the certificate carries and, when given, its exact set of key usages.
 * The type of a certificate always comes from here, never from a caller.
 */
export interface IssuanceRule {
  type: CertificateType;
  policyOid: string;
  keyUsages?: readonly KeyUsage[] | undefined;
}

/** A CA certificate shomei trusts, and the certificate types it issues. */
export interface TrustAnchor {
  /** "mock" for the mock CA; "sha256:<fingerprint>" for a configured anchor. */
  id: string;
  name: string;
  certificate: X509Certificate;
  rules: readonly IssuanceRule[];
  /**
   * CRLs to fetch for this anchor's certificates instead of the distribution
   * points they name (trust anchors file, crlUrls); undefined: theirs.
   */
  crlUrls?: readonly string[] | undefined;
  /**
   * OCSP responders to ask about this anchor's certificates instead of the
   * ones their authorityInfoAccess names (trust anchors file, ocspUrls).
   */
  ocspUrls?: readonly string[] | undefined;
}

/** Where the anchors come from; the mock CA's exists only once it has been created, hence async. */
export interface TrustAnchors {
  all(): Promise<readonly TrustAnchor[]>;
}
