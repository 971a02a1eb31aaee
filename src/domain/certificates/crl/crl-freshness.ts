import type { StoredCertificate } from "../model.ts";
import type { VerifiedCrl } from "./verified-crl.ts";

/** RFC 5280 §6.3.3 (a): thisUpdate <= now < nextUpdate. A list without nextUpdate is never current. */
export function isCurrent(crl: Pick<VerifiedCrl, "thisUpdate" | "nextUpdate">, now: number): boolean {
  return crl.thisUpdate <= now && crl.nextUpdate !== undefined && now < crl.nextUpdate;
}

/** True when `candidate` is a later issue of the list than `held` (by crlNumber, else by thisUpdate). */
export function isNewer(candidate: Pick<VerifiedCrl, "thisUpdate" | "crlNumber">, held: Pick<VerifiedCrl, "thisUpdate" | "crlNumber">): boolean {
  if (candidate.crlNumber !== undefined && held.crlNumber !== undefined && candidate.crlNumber !== held.crlNumber) {
    return candidate.crlNumber > held.crlNumber;
  }
  return candidate.thisUpdate > held.thisUpdate;
}

/**
 * Why a verified list may not replace the one held, or undefined when it may.
 * crlNumber never goes backwards (nor does thisUpdate), and a list that is
 * not current never displaces one that is.
 */
export function replacementRefusal(held: VerifiedCrl | undefined, next: VerifiedCrl, now: number): string | undefined {
  if (!held) return undefined;
  if (held.crlNumber !== undefined && next.crlNumber === undefined) {
    return `the new list has no crlNumber, the list held has ${held.crlNumber}`;
  }
  if (held.crlNumber !== undefined && next.crlNumber !== undefined && next.crlNumber < held.crlNumber) {
    return `the new list's crlNumber ${next.crlNumber} is lower than ${held.crlNumber}, the list held`;
  }
  if (next.thisUpdate < held.thisUpdate) return "the new list's thisUpdate is earlier than the list held";
  if (isCurrent(held, now) && !isCurrent(next, now)) return "the new list is not current (thisUpdate <= now < nextUpdate) and the list held is";
  return undefined;
}

export type Coverage = { kind: "complete" } | { kind: "partial" } | { kind: "refused"; why: string };

/**
 * Whether a list covers an end-entity certificate (RFC 5280 §6.3.3 (b)):
 * its issuingDistributionPoint, when it names URIs, must name the point the
 * list was fetched from or one the certificate names; a list of CA or
 * attribute certificates only, or an indirect list, covers none of ours; a
 * list of some reasons only is partial: it can say "revoked", never "good".
 */
export function coverage(crl: VerifiedCrl, fetchedFrom: string, certificate: Pick<StoredCertificate, "crlDistributionPoints">): Coverage {
  const idp = crl.issuingDistributionPoint;
  if (!idp) return { kind: "complete" };
  if (idp.onlyContainsCACerts) return { kind: "refused", why: "the list covers CA certificates only" };
  if (idp.onlyContainsAttributeCerts) return { kind: "refused", why: "the list covers attribute certificates only" };
  if (idp.indirectCRL) return { kind: "refused", why: "indirect lists are not supported" };
  if (idp.uris.length > 0 && !idp.uris.some((uri) => uri === fetchedFrom || certificate.crlDistributionPoints.includes(uri))) {
    return { kind: "refused", why: `its issuingDistributionPoint (${idp.uris.join(", ")}) is not the distribution point it was fetched for` };
  }
  return idp.onlySomeReasons ? { kind: "partial" } : { kind: "complete" };
}
