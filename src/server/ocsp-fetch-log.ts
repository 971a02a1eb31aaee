import type { OcspFetchReport } from "../domain/certificates/ocsp/ocsp-responses.ts";
import type { Logger } from "../observability/logger.ts";

/**
 * One line per exchange with an OCSP responder. A failure or a refusal is a
 * warning (the check falls back or answers unavailable); a response used is
 * debug, since there is one per certificate per response lifetime. The line
 * names the issuer and the responder, never the certificate.
 */
export function logOcspFetch(logger: Logger, report: OcspFetchReport): void {
  const line = { ocsp: { url: report.url, issuer: report.issuerName, outcome: report.outcome, detail: report.detail, durationMs: report.durationMs } };
  if (report.outcome === "fetched") logger.debug(line, "OCSP response fetched");
  else logger.warn(line, "OCSP request failed; the response was not used");
}
