/** The vocabulary of certificate status checks, independent of any transport. */

export const certificateTypes = [
  "jpki_card_digital_signature",
  "jpki_card_user_authentication",
  "jpki_mobile_digital_signature",
  "jpki_mobile_user_authentication",
] as const;
export type CertificateType = (typeof certificateTypes)[number];

export type Status = "good" | "revoked" | "unknown";
export type CheckMethod = "crl" | "ocsp";
export type CheckPurpose = "signature_verification" | "liveness_check";
export type CertificateOrigin = "mock" | "verified";

/** RFC 5280 CRLReason codes (7 is unused). */
export const revocationReasonCodes = [0, 1, 2, 3, 4, 5, 6, 8, 9, 10] as const;
export type RevocationReasonCode = (typeof revocationReasonCodes)[number];

export function isRevocationReasonCode(value: number): value is RevocationReasonCode {
  return (revocationReasonCodes as readonly number[]).includes(value);
}

export interface CertificateUser {
  id: string;
  accountId: string;
  createdAt: number;
}

/**
 * A certificate registered with an account. The certificate itself is not
 * kept: a signature certificate carries its holder's personal facts, and
 * status checks need only what is here.
 */
export interface StoredCertificate {
  id: string;
  accountId: string;
  userId: string;
  type: CertificateType;
  origin: CertificateOrigin;
  serialNumber: string;
  issuer: string;
  notBefore: number;
  notAfter: number;
  fingerprintSha256: string;
  crlDistributionPoints: string[];
  ocspUrls: string[];
  /** The trust anchor it chains to: "mock" for the mock CA, "sha256:<hex>" for a configured one; null if unknown (stored before anchors were recorded). */
  trustAnchor: string | null;
  createdAt: number;
}

/** Signature certificates carry the holder's facts; user authentication certificates carry none. */
export function isSignatureType(type: CertificateType): boolean {
  return type === "jpki_card_digital_signature" || type === "jpki_mobile_digital_signature";
}

export interface StatusRecord {
  id: string;
  accountId: string;
  certificateId: string;
  status: Status;
  checkMethod: CheckMethod;
  checkPurpose: CheckPurpose;
  sourceUpdatedAt: number;
  revokedAt: number | null;
  revokedReason: RevocationReasonCode | null;
  createdAt: number;
}

/**
 * Creation times are kept in milliseconds. One in a thousand falls exactly on a
 * second, and protobuf JSON then drops the fraction; moving such a time by one
 * millisecond keeps the documented format (fractional seconds) for every record.
 */
export function creationTime(now: number): number {
  return now % 1000 === 0 ? now + 1 : now;
}
