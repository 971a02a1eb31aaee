import type { DomainError } from "../../errors.ts";
import type { CheckMethod, StoredCertificate } from "../model.ts";
import { asItemError, methodNotOffered, sourceUnavailable as unavailable, type RevocationAnswer, type SingleMethodSource } from "../revocation-source.ts";
import type { CrlLists } from "./crl-lists.ts";
import { answerFromList, crlUrlsOf } from "./list-answer.ts";

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
      const answer = answerFromList(found.crl, url, certificate, found.crl.lookup(certificate.serialNumber));
      if ("problem" in answer) problems.push(answer.problem);
      else return answer;
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

  private urls(certificate: StoredCertificate): string[] {
    const issuer = this.lists.issuer(certificate.trustAnchor);
    return issuer ? crlUrlsOf(issuer, certificate) : [];
  }
}

