import type { StoredCertificate } from "../model.ts";
import type { RevocationAnswer } from "../revocation-source.ts";
import { isFetchableCrlUrl } from "./crl-fetcher.ts";
import { coverage } from "./crl-freshness.ts";
import type { CrlEntry, VerifiedCrl } from "./verified-crl.ts";

/**
 * What one verified list says about a certificate: revoked when it names the
 * serial (`entry`, the list's entry for it), otherwise good when it covers
 * the certificate completely, or why it cannot say. The CRL source answers
 * checks with it, and a new list's changes become status records with it, so
 * a check after a list changed finds the status the change recorded.
 */
export function answerFromList(
  crl: VerifiedCrl,
  url: string,
  certificate: Pick<StoredCertificate, "crlDistributionPoints" | "notAfter">,
  entry: CrlEntry | undefined,
): RevocationAnswer | { problem: string } {
  const covered = coverage(crl, url, certificate);
  if (covered.kind === "refused") return { problem: `${url}: ${covered.why}` };
  if (entry) return { status: "revoked", method: "crl", sourceUpdatedAt: crl.thisUpdate, revokedAt: entry.revokedAt, revokedReason: entry.reason };
  if (covered.kind === "partial") return { problem: `${url}: the list covers some revocation reasons only` };
  // A CA may drop a certificate from its lists once the certificate has expired (RFC 5280 §3.3), so
  // a list issued after the expiry says nothing about it unless it declares, with expiredCertsOnCRL,
  // that it still keeps such entries. Its absence then means "not known", never "good".
  const status = accountsFor(crl, certificate.notAfter) ? "good" : "unknown";
  return { status, method: "crl", sourceUpdatedAt: crl.thisUpdate, revokedAt: null, revokedReason: null };
}

/** True when the list still accounts for a certificate that expires at `notAfter`: issued before the expiry, or keeping expired entries since. */
function accountsFor(crl: VerifiedCrl, notAfter: number): boolean {
  return crl.thisUpdate <= notAfter || (crl.expiredCertsOnCrl !== undefined && crl.expiredCertsOnCrl <= notAfter);
}

/** The lists a certificate's status comes from: those configured for the issuer, or else the certificate's distribution points that can be fetched. */
export function crlUrlsOf(issuer: { crlUrls: readonly string[] | undefined }, certificate: Pick<StoredCertificate, "crlDistributionPoints">): string[] {
  return (issuer.crlUrls ?? certificate.crlDistributionPoints).filter(isFetchableCrlUrl);
}
