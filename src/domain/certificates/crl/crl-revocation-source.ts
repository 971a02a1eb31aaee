import type { DomainError } from "../../errors.ts";
import type { CheckMethod, StoredCertificate } from "../model.ts";
import { asItemError, methodNotOffered, sourceUnavailable as unavailable, type RevocationAnswer, type SingleMethodSource } from "../revocation-source.ts";
import { coverage } from "./crl-freshness.ts";
import type { CrlLists } from "./crl-lists.ts";
import type { VerifiedCrl } from "./verified-crl.ts";
import { isFetchableCrlUrl } from "./crl-fetcher.ts";

/**
 * Statuses from the CRLs of the certificate's issuer: the lists its CRL
 * distribution points name (http:, https:, file:), or the lists configured
 * for the issuer instead, and only for issuers that are configured trust
 * anchors. It answers from a verified list that is current and covers the
 * certificate, and otherwise not at all: never "good" without one. An
 * expired certificate that the list does not name is "unknown" (see check).
 */
export class CrlRevocationSource implements SingleMethodSource {
  readonly method = "crl";

  constructor(private readonly lists: CrlLists) {}

  offers(certificate: StoredCertificate): boolean {
    return this.urls(certificate).length > 0;
  }

  async check(certificate: StoredCertificate, preferred: CheckMethod | undefined, now: number): Promise<RevocationAnswer> {
    if (preferred !== undefined && preferred !== "crl") throw methodNotOffered(preferred, ["crl"]);
    const issuer = this.lists.issuer(certificate.trustAnchor);
    if (!issuer) throw unavailable("the certificate's issuer is not a configured trust anchor");
    const urls = this.urls(certificate);
    if (urls.length === 0) throw unavailable("the certificate names no CRL distribution point with an http:, https: or file: URL");
    const problems: string[] = [];
    for (const url of urls) {
      const found = await this.lists.current(issuer, url, now);
      if ("problem" in found) {
        problems.push(found.problem);
        continue;
      }
      const { crl } = found;
      const covered = coverage(crl, url, certificate);
      if (covered.kind === "refused") {
        problems.push(`${url}: ${covered.why}`);
        continue;
      }
      const entry = crl.lookup(certificate.serialNumber);
      if (entry) {
        return { status: "revoked", method: "crl", sourceUpdatedAt: crl.thisUpdate, revokedAt: entry.revokedAt, revokedReason: entry.reason };
      }
      if (covered.kind === "partial") {
        problems.push(`${url}: the list covers some revocation reasons only`);
        continue;
      }
      // A CA may drop a certificate from its lists once the certificate has expired (RFC 5280 §3.3), so
      // a list issued after the expiry says nothing about it unless it declares, with expiredCertsOnCRL,
      // that it still keeps such entries. Its absence then means "not known", never "good".
      const status = accountsFor(crl, certificate.notAfter) ? "good" : "unknown";
      return { status, method: "crl", sourceUpdatedAt: crl.thisUpdate, revokedAt: null, revokedReason: null };
    }
    throw unavailable(`no current, verified CRL covers this certificate (${problems.join("; ")})`);
  }

  /**
   * Lists are held in memory, so answering many certificates reads no
   * database per certificate: a list that needs refreshing is refreshed once,
   * for every certificate waiting on it.
   */
  checkMany(
    certificates: readonly StoredCertificate[],
    preferred: CheckMethod | undefined,
    now: number,
  ): Promise<(RevocationAnswer | DomainError)[]> {
    return Promise.all(
      certificates.map((certificate) => this.check(certificate, preferred, now).catch(asItemError)),
    );
  }

  /** The lists configured for the issuer, or else the certificate's distribution points that can be fetched. */
  private urls(certificate: StoredCertificate): string[] {
    const issuer = this.lists.issuer(certificate.trustAnchor);
    return issuer ? (issuer.crlUrls ?? certificate.crlDistributionPoints).filter(isFetchableCrlUrl) : [];
  }
}

/** True when the list still accounts for a certificate that expires at `notAfter`: issued before the expiry, or keeping expired entries since. */
function accountsFor(crl: VerifiedCrl, notAfter: number): boolean {
  return crl.thisUpdate <= notAfter || (crl.expiredCertsOnCrl !== undefined && crl.expiredCertsOnCrl <= notAfter);
}
