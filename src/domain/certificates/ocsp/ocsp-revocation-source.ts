import type { DomainError } from "../../errors.ts";
import type { CheckMethod, StoredCertificate } from "../model.ts";
import { BatchFirstSource, methodNotOffered, sourceUnavailable, type RevocationAnswer, type SingleMethodSource } from "../revocation-source.ts";
import { isOcspUrl } from "./ocsp-fetcher.ts";
import type { OcspResponses, OcspResult, OcspTarget } from "./ocsp-responses.ts";
import type { VerifiedOcspResponse } from "./verified-ocsp-response.ts";

/**
 * Statuses from the OCSP responders of the certificate's issuer (RFC 6960,
 * RFC 5019): the ones its authorityInfoAccess names (http:, https:), or the
 * ones configured for the issuer instead, and only for issuers that are
 * configured trust anchors. It answers from a verified response that is
 * current, and otherwise not at all: never "good" without one.
 */
export class OcspRevocationSource extends BatchFirstSource implements SingleMethodSource {
  readonly method = "ocsp";

  constructor(private readonly responses: OcspResponses) {
    super();
  }

  offers(certificate: StoredCertificate): boolean {
    return this.urls(certificate).length > 0;
  }

  /** One read of the stored responses for all, then a request for each certificate that has no usable one. */
  async checkMany(
    certificates: readonly StoredCertificate[],
    preferred: CheckMethod | undefined,
    now: number,
  ): Promise<(RevocationAnswer | DomainError)[]> {
    if (preferred !== undefined && preferred !== "ocsp") return certificates.map(() => methodNotOffered(preferred, ["ocsp"]));
    const targets = certificates.map((c) => this.target(c));
    const asked = targets.filter((t): t is OcspTarget => !(t instanceof Error));
    const results = asked.length ? await this.responses.answers(asked, now) : [];
    let next = 0;
    return targets.map((target) => (target instanceof Error ? target : answerOf(results[next++]!)));
  }

  /** What to ask which responders for this certificate; a DomainError when none can be asked. */
  target(certificate: StoredCertificate): OcspTarget | DomainError {
    const issuer = this.responses.issuer(certificate.trustAnchor);
    if (!issuer) return sourceUnavailable("the certificate's issuer is not a configured trust anchor");
    const urls = this.urls(certificate);
    if (urls.length === 0) return sourceUnavailable("the certificate names no OCSP responder with an http: or https: URL");
    return { issuer, issuerAnchor: issuer.id, serialNumber: certificate.serialNumber, urls };
  }

  /** The responders configured for the issuer, or else the ones the certificate names. */
  private urls(certificate: StoredCertificate): string[] {
    const issuer = this.responses.issuer(certificate.trustAnchor);
    return issuer ? (issuer.ocspUrls ?? certificate.ocspUrls).filter(isOcspUrl) : [];
  }
}

function answerOf(result: OcspResult): RevocationAnswer | DomainError {
  if ("problem" in result) return sourceUnavailable(`no responder gave a usable OCSP response (${result.problem})`);
  return ocspAnswer(result.response);
}

/** What a verified, current response says, as a check records it. */
export function ocspAnswer(response: VerifiedOcspResponse): RevocationAnswer {
  return {
    status: response.status,
    method: "ocsp",
    sourceUpdatedAt: response.producedAt,
    revokedAt: response.revokedAt,
    revokedReason: response.revokedReason,
  };
}
