import type { CertificateType } from "../certificates/model.ts";
import type { ParsedCertificate } from "../certificates/x509/parsed-certificate.ts";
import { DomainError } from "../errors.ts";
import { isSupportedSigningKey } from "../verification/digest-signature.ts";
import type { IssuanceRule, TrustAnchor } from "./trust-anchor.ts";

export interface AnchorMatch {
  anchor: TrustAnchor;
  type: CertificateType;
}

function unsupported(message: string): DomainError {
  return new DomainError("unsupported_certificate", message, "certificate");
}

function matches(rule: IssuanceRule, certificate: ParsedCertificate): boolean {
  if (!certificate.policyOids.includes(rule.policyOid)) return false;
  if (!rule.keyUsages) return true;
  const usages = certificate.keyUsages ?? [];
  return usages.length === rule.keyUsages.length && rule.keyUsages.every((u) => usages.includes(u));
}

/**
 * The anchor that issued the certificate and the certificate's type.
 * JPKI CAs issue end-entity certificates directly, so the chain is one link:
 * the anchor's subject is the certificate's issuer and the anchor's key
 * verifies the certificate's signature. Validity is not checked here (a
 * verification reports an expired certificate as a result, not an error).
 * Throws DomainError "unsupported_certificate" otherwise.
 */
export function matchTrustAnchor(anchors: readonly TrustAnchor[], certificate: ParsedCertificate): AnchorMatch {
  if (certificate.isCa) throw unsupported("the certificate is a CA certificate, not a signer's certificate");
  const anchor = anchors.find((a) => certificate.native.checkIssued(a.certificate) && certificate.native.verify(a.certificate.publicKey));
  if (!anchor) throw unsupported("the certificate does not chain to a trust anchor this server is configured with");
  const rule = anchor.rules.find((r) => matches(r, certificate));
  if (!rule) throw unsupported(`the certificate's policy and key usage match no certificate type that ${anchor.name} is configured to issue`);
  if (!isSupportedSigningKey(certificate.publicKey)) {
    throw unsupported("the certificate's key is neither RSA nor ECDSA P-256");
  }
  return { anchor, type: rule.type };
}
