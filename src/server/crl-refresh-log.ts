import type { RefreshReport } from "../domain/certificates/crl/crl-lists.ts";
import type { Logger } from "../observability/logger.ts";

function iso(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : new Date(ms).toISOString();
}

/** One line per CRL refresh: a failure or a refusal is a warning, since the list held may soon lapse. */
export function logCrlRefresh(logger: Logger, report: RefreshReport): void {
  const line = {
    crl: {
      url: report.url,
      issuer: report.issuerName,
      outcome: report.outcome,
      detail: report.detail,
      thisUpdate: iso(report.list?.thisUpdate),
      nextUpdate: iso(report.list?.nextUpdate),
      crlNumber: report.list?.crlNumber?.toString(),
      entries: report.list?.entries,
      durationMs: report.durationMs,
    },
  };
  if (report.outcome === "fetch_failed" || report.outcome === "rejected") logger.warn(line, "CRL refresh failed; the list held keeps answering until its nextUpdate");
  else logger.info(line, "CRL refreshed");
}
