import { x509 } from "./x509-runtime.ts";
import {
  jpkiCardDigitalSignaturePolicyOid,
  jpkiCardUserAuthenticationPolicyOid,
  mockJpkiMobileDigitalSignaturePolicyOid,
  mockJpkiMobileUserAuthenticationPolicyOid,
} from "./oids.ts";

/** The JPKI certificates the mock CA issues: the card's two and the smartphone's two. */
export type CertificateKind =
  | "jpki_card_digital_signature"
  | "jpki_card_user_authentication"
  | "jpki_mobile_digital_signature"
  | "jpki_mobile_user_authentication";

export const certificateKinds: readonly CertificateKind[] = [
  "jpki_card_digital_signature",
  "jpki_card_user_authentication",
  "jpki_mobile_digital_signature",
  "jpki_mobile_user_authentication",
];

export type KeyUsageName = "digitalSignature" | "nonRepudiation";

export interface CertificateProfile {
  /** Key usages, written as a critical keyUsage extension. */
  keyUsages: readonly KeyUsageName[];
  /** The one policy in the (critical) certificatePolicies extension. */
  policyOid: string;
  /** Default validity in whole years from notBefore, when the caller gives no notAfter. */
  validityYears: number;
  /** Signature certificates carry the holder's basic four facts; user authentication ones none. */
  carriesFacts: boolean;
}

/**
 * Signing certificates (署名用電子証明書) carry digitalSignature and
 * nonRepudiation, as the J-LIS signing certificate profile does; user
 * authentication certificates (利用者証明用電子証明書) prove a login, not
 * consent to content, and carry digitalSignature alone.
 *
 * Validity: a real card certificate runs until the holder's fifth birthday
 * after issuance (or the card's own expiry, if earlier); the mock has no
 * birthdays and uses five years. The smartphone certificates' three years are
 * the mock profile's choice, shorter than the card's, not a published figure.
 */
const profiles: Record<CertificateKind, CertificateProfile> = {
  jpki_card_digital_signature: {
    keyUsages: ["digitalSignature", "nonRepudiation"],
    policyOid: jpkiCardDigitalSignaturePolicyOid,
    validityYears: 5,
    carriesFacts: true,
  },
  jpki_card_user_authentication: {
    keyUsages: ["digitalSignature"],
    policyOid: jpkiCardUserAuthenticationPolicyOid,
    validityYears: 5,
    carriesFacts: false,
  },
  jpki_mobile_digital_signature: {
    keyUsages: ["digitalSignature", "nonRepudiation"],
    policyOid: mockJpkiMobileDigitalSignaturePolicyOid,
    validityYears: 3,
    carriesFacts: true,
  },
  jpki_mobile_user_authentication: {
    keyUsages: ["digitalSignature"],
    policyOid: mockJpkiMobileUserAuthenticationPolicyOid,
    validityYears: 3,
    carriesFacts: false,
  },
};

export function isCertificateKind(value: string): value is CertificateKind {
  return (certificateKinds as readonly string[]).includes(value);
}

export function profileFor(kind: CertificateKind): CertificateProfile {
  const profile = profiles[kind];
  if (!profile) throw new RangeError(`unknown certificate kind: ${String(kind)}`);
  return profile;
}

/** The keyUsage bit flags of a profile, as @peculiar/x509 wants them. */
export function keyUsageFlags(usages: readonly KeyUsageName[]): x509.KeyUsageFlags {
  let flags = 0;
  for (const usage of usages) flags |= x509.KeyUsageFlags[usage];
  return flags;
}
