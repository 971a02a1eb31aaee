import type { RevocationReasonCode } from "../model.ts";
import type { SerialTable } from "./serial-table.ts";

/**
 * A certificate revocation list (RFC 5280 §5) whose signature and structure
 * have been checked against its issuer, indexed for lookups by serial number.
 * It keeps no DER and no per-entry objects: lists hold up to millions of
 * entries, and every list of every JPKI distribution point may be loaded at
 * once.
 *
 * What it does not decide, because it depends on the moment and on the
 * certificate asked about, is left to the revocation source: whether the list
 * is current (thisUpdate <= now < nextUpdate), whether its crlNumber went
 * backwards, and whether its issuingDistributionPoint covers the certificate.
 */
export interface VerifiedCrl {
  /** thisUpdate, epoch milliseconds. */
  thisUpdate: number;
  /** nextUpdate, epoch milliseconds; undefined when the list has none (such a list is never current). */
  nextUpdate: number | undefined;
  /** The cRLNumber extension, if present. */
  crlNumber: bigint | undefined;
  /** The issuingDistributionPoint extension, if present (RFC 5280 §5.2.5). */
  issuingDistributionPoint: IssuingDistributionPoint | undefined;
  /**
   * The expiredCertsOnCRL extension, epoch milliseconds, if present: the list
   * keeps entries of certificates that expired at or after this time. Without
   * it a list may drop a certificate once it has expired (RFC 5280 §3.3).
   */
  expiredCertsOnCrl: number | undefined;
  /** SHA-256 of the whole DER, hex: what instances compare to know they hold the same list. */
  sha256: string;
  /** Entries listed (entries with reason removeFromCRL are not, see lookup). */
  entries: number;
  /** Bytes held by the index, for the metrics and the memory target. */
  indexBytes: number;
  /** The index's tables, sorted by serial: what the diff with the next list walks (see crl-diff.ts). */
  tables: readonly SerialTable[];
  /**
   * The entry for a serial number in canonical form (lowercase hex, even
   * length, no leading zero octets: see normalizeSerialNumberHex), or
   * undefined when the list does not revoke it. An entry's reason is its
   * reasonCode extension, unspecified (0) when absent; certificateHold (6) is
   * returned as such (the certificate is revoked while on hold); an entry
   * with removeFromCRL (8), which only delta lists carry, is not returned.
   */
  lookup(serialHex: string): CrlEntry | undefined;
}

export interface CrlEntry {
  /** revocationDate, epoch milliseconds. */
  revokedAt: number;
  reason: RevocationReasonCode;
}

export interface IssuingDistributionPoint {
  /** The fullName URIs of distributionPoint, when given as URIs. */
  uris: string[];
  onlyContainsUserCerts: boolean;
  onlyContainsCACerts: boolean;
  /** True when onlySomeReasons is present: such a list is partial and never enough to answer GOOD. */
  onlySomeReasons: boolean;
  indirectCRL: boolean;
  onlyContainsAttributeCerts: boolean;
}

/** Why a list was refused; the source keeps its previous list, or answers unavailable. */
export type CrlRejection =
  | "malformed"
  | "signature_invalid"
  | "issuer_mismatch"
  | "issuer_cannot_sign_crls"
  | "unknown_critical_extension"
  | "delta_crl_unsupported"
  | "too_large";

export class CrlRejectedError extends Error {
  override name = "CrlRejectedError";
  constructor(
    readonly rejection: CrlRejection,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Parses, verifies and indexes a DER CRL issued by `issuerCertificateDer`
 * (the trust anchor's certificate): the issuer name must match, the issuer's
 * key must verify the signature over the raw tbsCertList bytes, and the
 * issuer's keyUsage, when present, must allow cRLSign. Unknown critical
 * extensions (in the list or an entry) reject it; so does a delta CRL
 * (deltaCRLIndicator). Runs off the event loop (a worker thread) for large
 * lists. Throws CrlRejectedError.
 */
export type CrlLoader = (der: Uint8Array, issuerCertificateDer: Uint8Array) => Promise<VerifiedCrl>;
