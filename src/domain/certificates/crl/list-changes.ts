import type { Clock } from "../../clock.ts";
import { creationTime, type Status, type StatusRecord, type StoredCertificate } from "../model.ts";
import type { RevocationAnswer } from "../revocation-source.ts";
import { statusRecord } from "../status-record.ts";
import type { CrlDiffer, SerialChange } from "./crl-diff.ts";
import { answerFromList, crlUrlsOf } from "./list-answer.ts";
import type { VerifiedCrl } from "./verified-crl.ts";

/** The issuer of a list as its changes need it (a CrlIssuer). */
export interface ListIssuer {
  /** The trust anchor id its certificates are registered under. */
  id: string;
  /** The lists configured for it instead of its certificates' distribution points. */
  crlUrls: readonly string[] | undefined;
  /**
   * The ids of those of these registered certificates that its lists do not
   * speak for, though a list may name or drop their serials. An issuer may
   * know such certificates (the mock CA's list does not cover a certificate
   * set to STATUS_UNKNOWN: only its OCSP responder speaks for it), and a
   * list's change must not record a status the list does not give. Absent:
   * a list covers every certificate that names it.
   */
  notCoveredBy?(certificates: readonly StoredCertificate[]): Promise<ReadonlySet<string>>;
}

/** A registered certificate (of any account) and the status of its newest status record, if it has one. */
export interface RegisteredCertificate {
  certificate: StoredCertificate;
  status: Status | undefined;
}

/** The registry as a new list's changes need it: every account's certificates by issuer and serial number. */
export interface RegisteredBySerial {
  /** The certificates of this trust anchor whose serial number (canonical hex) is one of these, in every account. */
  findBySerials(trustAnchor: string, serialNumbers: readonly string[]): Promise<RegisteredCertificate[]>;
}

/**
 * What a new list changes for the registered certificates: the serials it
 * adds or drops (a diff of the two lists' indexes, never a check of every
 * certificate), looked up in the registry, become status records, one per
 * certificate whose status the new list changes, each what a check would
 * now record (answerFromList). Stored in the transaction that installs the
 * list, they record their events through the status history's trigger, as a
 * check's record does, so there is one way an event comes to be, and a later
 * check finds the status already recorded and records nothing more.
 *
 * A registered certificate without a status record yet gets the previous
 * list's answer first, so its change has a previous status (a certificate's
 * first record records no event). A certificate the issuer says its lists do
 * not cover (notCoveredBy) gets none: its next check records its change.
 */
export class ListChanges {
  constructor(
    private readonly diff: CrlDiffer,
    private readonly registry: RegisteredBySerial,
    private readonly clock: Clock,
  ) {}

  async records(issuer: ListIssuer, url: string, previous: VerifiedCrl, next: VerifiedCrl): Promise<StatusRecord[]> {
    const changes = await this.diff(previous, next);
    if (changes.length === 0) return [];
    const bySerial = new Map<string, SerialChange>(changes.map((change) => [change.serialHex, change]));
    const registered = await this.registry.findBySerials(issuer.id, [...bySerial.keys()]);
    const listed = registered.filter(({ certificate }) => bySerial.has(certificate.serialNumber) && crlUrlsOf(issuer, certificate).includes(url));
    const notCovered = listed.length > 0 && issuer.notCoveredBy ? await issuer.notCoveredBy(listed.map((r) => r.certificate)) : noCertificates;
    const createdAt = creationTime(this.clock());
    const records: StatusRecord[] = [];
    for (const { certificate, status } of listed) {
      if (notCovered.has(certificate.id)) continue;
      const change = bySerial.get(certificate.serialNumber)!;
      const after = answerFromList(next, url, certificate, change.after);
      if (!isAnswer(after) || after.status === status) continue;
      if (status === undefined) {
        const before = answerFromList(previous, url, certificate, change.before);
        if (!isAnswer(before) || before.status === after.status) continue;
        records.push(statusRecord(certificate, before, createdAt));
      }
      records.push(statusRecord(certificate, after, createdAt));
    }
    return records;
  }
}

const noCertificates: ReadonlySet<string> = new Set();

function isAnswer(answer: RevocationAnswer | { problem: string }): answer is RevocationAnswer {
  return !("problem" in answer);
}
