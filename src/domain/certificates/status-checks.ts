import { assertCallerConfirmed, type Caller } from "../accounts/caller.ts";
import type { CertificateStore } from "./certificate-store.ts";
import type { Clock } from "../clock.ts";
import { DomainError, invalidField } from "../errors.ts";
import { canonicalUuid } from "../ids.ts";
import type { CertificateType, CertificateUser, CheckMethod, CheckPurpose, StatusRecord, StoredCertificate } from "./model.ts";
import { creationTime } from "./model.ts";
import { certificateNotFound, requireUuid, userHasNoCertificate, userNotFound } from "./lookup-errors.ts";
import { decodePageToken, encodePageToken } from "./page-token.ts";
import type { CertificateRegistry } from "./registry.ts";
import type { RevocationSource } from "./revocation-source.ts";
import { statusRecord } from "./status-record.ts";

export interface CheckResult {
  certificate: StoredCertificate;
  status: StatusRecord;
}

export interface StatusPage {
  statuses: StatusRecord[];
  nextPageToken: string;
}

export const defaultPageSize = 20;
export const maxPageSize = 100;

/** Chooses the revocation source for a certificate (mock environment, CRL, OCSP…). */
export type SourceResolver = (certificate: StoredCertificate) => RevocationSource;

/**
 * Certificate status checks for one API account at a time. Each check asks
 * the certificate's revocation source and writes one status record: the
 * history and billing both count them.
 */
export class CertificateStatusChecks {
  constructor(
    private readonly repository: CertificateStore,
    private readonly sourceFor: SourceResolver,
    private readonly clock: Clock,
    private readonly registry: CertificateRegistry,
  ) {}

  /**
   * The certificate is read with the auth version, which confirms a caller
   * admitted on a remembered token (see Caller) before the check asks any
   * source or writes anything.
   */
  async checkCertificate(caller: Caller, certificateId: string, method?: CheckMethod): Promise<CheckResult> {
    requireUuid(certificateId, "certificate_id");
    const { certificate, authVersion } = await this.repository.findCertificateAndCurrentAuthVersion(caller.accountId, canonicalUuid(certificateId));
    assertCallerConfirmed(caller, authVersion);
    if (!certificate) throw certificateNotFound();
    return { certificate, status: await this.check(certificate, method) };
  }

  /**
   * The same check for a certificate given as DER: registered with the
   * account first if new (and trusted), so later checks can use its id.
   */
  async checkCertificateContent(accountId: string, der: Uint8Array, method?: CheckMethod): Promise<CheckResult> {
    const { certificate } = await this.registry.register(accountId, await this.registry.recognize(der));
    return { certificate, status: await this.check(certificate, method) };
  }

  async checkUser(
    accountId: string,
    userId: string,
    type: CertificateType | undefined,
    method?: CheckMethod,
  ): Promise<CheckResult & { user: CertificateUser }> {
    const user = await this.user(accountId, userId);
    const certificate = await this.repository.findLatestCertificate(accountId, user.id, type);
    if (!certificate) throw userHasNoCertificate(type);
    return { user, certificate, status: await this.check(certificate, method) };
  }

  async getCertificate(accountId: string, certificateId: string): Promise<{ certificate: StoredCertificate; user: CertificateUser }> {
    const certificate = await this.certificate(accountId, certificateId, "certificate_id");
    const user = await this.repository.findUser(accountId, certificate.userId);
    if (!user) throw new Error(`certificate ${certificate.id} has no user`);
    return { certificate, user };
  }

  async getStatus(accountId: string, statusId: string): Promise<CheckResult> {
    requireUuid(statusId, "certificate_status_id");
    const status = await this.repository.findStatus(accountId, canonicalUuid(statusId));
    if (!status) throw new DomainError("certificate_status_not_found", "no certificate status with this id");
    const certificate = await this.repository.findCertificate(accountId, status.certificateId);
    if (!certificate) throw new Error(`status ${status.id} has no certificate`);
    return { certificate, status };
  }

  async listStatuses(accountId: string, certificateId: string, pageSize: number, pageToken: string): Promise<StatusPage> {
    if (!Number.isInteger(pageSize) || pageSize < 0 || pageSize > maxPageSize) {
      throw invalidField("page_size", `page_size must be between 0 and ${maxPageSize}`);
    }
    const certificate = await this.certificate(accountId, certificateId, "certificate_id");
    const size = pageSize || defaultPageSize;
    const after = pageToken ? decodePageToken(certificate.id, pageToken) : undefined;
    const rows = await this.repository.listStatuses(accountId, certificate.id, size + 1, after);
    const statuses = rows.slice(0, size);
    const last = statuses.at(-1);
    return { statuses, nextPageToken: rows.length > size && last ? encodePageToken(certificate.id, last) : "" };
  }

  /**
   * Asks the certificate's revocation source and writes one status record.
   * Throws source_unavailable when no source can answer: never "good" without one.
   */
  async check(certificate: StoredCertificate, method: CheckMethod | undefined, purpose: CheckPurpose = "liveness_check"): Promise<StatusRecord> {
    const answer = await this.sourceFor(certificate).check(certificate, method, this.clock());
    const record = statusRecord(certificate, answer, creationTime(this.clock()), purpose);
    await this.repository.insertStatus(record);
    return record;
  }

  private async certificate(accountId: string, certificateId: string, field: string): Promise<StoredCertificate> {
    requireUuid(certificateId, field);
    const certificate = await this.repository.findCertificate(accountId, canonicalUuid(certificateId));
    if (!certificate) throw certificateNotFound();
    return certificate;
  }

  private async user(accountId: string, userId: string): Promise<CertificateUser> {
    requireUuid(userId, "user_id");
    const user = await this.repository.findUser(accountId, canonicalUuid(userId));
    if (!user) throw userNotFound();
    return user;
  }
}
