import type { CertificateAndCurrentAuthVersion, CertificateStore, StatusCursor } from "../../../src/domain/certificates/certificate-store.ts";
import type { RegisteredBySerial, RegisteredCertificate } from "../../../src/domain/certificates/crl/list-changes.ts";
import type { CertificateType, CertificateUser, StatusRecord, StoredCertificate } from "../../../src/domain/certificates/model.ts";
import type { VerificationCursor, VerificationFilter, VerificationStore } from "../../../src/domain/verification/verification-store.ts";
import type { VerificationRecord } from "../../../src/domain/verification/model.ts";
import { copied } from "./tables.ts";

/**
 * The certificate half's rows in memory: users, certificates, each
 * certificate's status records in the order written, verifications. Stores
 * sharing them see each other's writes, as repositories over one database do
 * (a list's status records land in the certificate's history).
 */
export class CertificateTables {
  readonly users = new Map<string, CertificateUser>();
  readonly certificates = new Map<string, StoredCertificate>();
  /** By certificate id, oldest first. */
  readonly statuses = new Map<string, StatusRecord[]>();
  readonly verifications = new Map<string, VerificationRecord>();
  /** The API auth version the certificate reads return (see Caller); tests move it. */
  authVersion: number | undefined = 1;

  addStatuses(records: readonly StatusRecord[]): void {
    for (const record of records) this.statuses.set(record.certificateId, [...(this.statuses.get(record.certificateId) ?? []), copied(record)]);
  }
}

/** Latest notBefore, then most recently stored, then id: the order the repository picks a user's latest certificate in. */
function later(a: StoredCertificate, b: StoredCertificate): boolean {
  return a.notBefore !== b.notBefore ? a.notBefore > b.notBefore : a.createdAt !== b.createdAt ? a.createdAt > b.createdAt : a.id > b.id;
}

/** CertificateStore (and the registry by serial a new CRL's changes read) in memory: src/storage/certificates-repository.ts and registered-by-serial-repository.ts. */
export class InMemoryCertificates implements CertificateStore, RegisteredBySerial {
  constructor(readonly tables = new CertificateTables()) {}

  async insertUser(user: CertificateUser): Promise<void> {
    if (this.tables.users.has(user.id)) throw new Error("duplicate user id");
    this.tables.users.set(user.id, copied(user));
  }

  async findUser(accountId: string, userId: string): Promise<CertificateUser | undefined> {
    const user = this.tables.users.get(userId);
    return user?.accountId === accountId ? copied(user) : undefined;
  }

  async findUsers(accountId: string, userIds: readonly string[]): Promise<Map<string, CertificateUser>> {
    const found = new Map<string, CertificateUser>();
    for (const id of userIds) {
      const user = await this.findUser(accountId, id);
      if (user) found.set(id, user);
    }
    return found;
  }

  async insertCertificate(certificate: StoredCertificate): Promise<void> {
    if (!(await this.insertCertificateIfAbsent(certificate))) throw new Error("duplicate certificate");
  }

  async insertCertificateIfAbsent(certificate: StoredCertificate): Promise<boolean> {
    if (this.tables.certificates.has(certificate.id)) throw new Error("duplicate certificate id");
    if (await this.findCertificateByFingerprint(certificate.accountId, certificate.fingerprintSha256)) return false;
    this.tables.certificates.set(certificate.id, copied(certificate));
    return true;
  }

  async findCertificateByFingerprint(accountId: string, fingerprintSha256: string): Promise<StoredCertificate | undefined> {
    const found = this.owned(accountId).find((c) => c.fingerprintSha256 === fingerprintSha256);
    return found && copied(found);
  }

  async findUserByFingerprints(accountId: string, fingerprints: readonly string[]): Promise<CertificateUser | undefined> {
    const latest = this.latestOf(this.owned(accountId).filter((c) => fingerprints.includes(c.fingerprintSha256)));
    return latest && this.findUser(accountId, latest.userId);
  }

  async setCertificateUser(accountId: string, certificateId: string, userId: string): Promise<void> {
    const certificate = this.tables.certificates.get(certificateId);
    if (certificate?.accountId === accountId) certificate.userId = userId;
  }

  async deleteUserWithoutCertificates(accountId: string, userId: string): Promise<void> {
    if ([...this.tables.certificates.values()].some((c) => c.userId === userId)) return;
    if (this.tables.users.get(userId)?.accountId === accountId) this.tables.users.delete(userId);
  }

  async findCertificate(accountId: string, certificateId: string): Promise<StoredCertificate | undefined> {
    const certificate = this.tables.certificates.get(certificateId);
    return certificate?.accountId === accountId ? copied(certificate) : undefined;
  }

  /** The auth version comes with a found certificate only, as the repository's one statement reads it beside the row. */
  async findCertificateAndCurrentAuthVersion(accountId: string, certificateId: string): Promise<CertificateAndCurrentAuthVersion> {
    const certificate = await this.findCertificate(accountId, certificateId);
    return { certificate, authVersion: certificate ? this.tables.authVersion : undefined };
  }

  async findCertificates(accountId: string, certificateIds: readonly string[]): Promise<Map<string, StoredCertificate>> {
    const found = new Map<string, StoredCertificate>();
    for (const id of certificateIds) {
      const certificate = await this.findCertificate(accountId, id);
      if (certificate) found.set(id, certificate);
    }
    return found;
  }

  async findLatestCertificate(accountId: string, userId: string, type?: CertificateType): Promise<StoredCertificate | undefined> {
    const latest = this.latestOf(this.owned(accountId).filter((c) => c.userId === userId && (type === undefined || c.type === type)));
    return latest && copied(latest);
  }

  async findLatestCertificates(accountId: string, userIds: readonly string[], type?: CertificateType): Promise<Map<string, StoredCertificate>> {
    const found = new Map<string, StoredCertificate>();
    for (const id of userIds) {
      const certificate = await this.findLatestCertificate(accountId, id, type);
      if (certificate) found.set(id, certificate);
    }
    return found;
  }

  async listCertificates(accountId: string): Promise<StoredCertificate[]> {
    return copied(this.owned(accountId).sort((a, b) => a.createdAt - b.createdAt));
  }

  async insertStatus(record: StatusRecord): Promise<void> {
    this.tables.addStatuses([record]);
  }

  async insertStatuses(records: readonly StatusRecord[]): Promise<void> {
    this.tables.addStatuses(records);
  }

  async findStatus(accountId: string, statusId: string): Promise<StatusRecord | undefined> {
    for (const records of this.tables.statuses.values()) {
      const found = records.find((r) => r.id === statusId && r.accountId === accountId);
      if (found) return copied(found);
    }
    return undefined;
  }

  async listStatuses(accountId: string, certificateId: string, limit: number, after?: StatusCursor): Promise<StatusRecord[]> {
    const newestFirst = [...(this.tables.statuses.get(certificateId) ?? [])].filter((r) => r.accountId === accountId).reverse();
    const start = after ? newestFirst.findIndex((r) => r.id === after.id) + 1 : 0;
    if (after && start === 0) return [];
    return copied(newestFirst.slice(start, start + limit));
  }

  async countStatuses(accountId: string): Promise<number> {
    return [...this.tables.statuses.values()].flat().filter((r) => r.accountId === accountId).length;
  }

  async findBySerials(trustAnchor: string, serialNumbers: readonly string[]): Promise<RegisteredCertificate[]> {
    return [...this.tables.certificates.values()]
      .filter((c) => c.trustAnchor === trustAnchor && serialNumbers.includes(c.serialNumber))
      .map((c) => ({ certificate: copied(c), status: this.tables.statuses.get(c.id)?.at(-1)?.status }));
  }

  private owned(accountId: string): StoredCertificate[] {
    return [...this.tables.certificates.values()].filter((c) => c.accountId === accountId);
  }

  private latestOf(certificates: StoredCertificate[]): StoredCertificate | undefined {
    return certificates.reduce<StoredCertificate | undefined>((best, c) => (!best || later(c, best) ? c : best), undefined);
  }
}

/** VerificationStore in memory (src/storage/verifications-repository.ts). */
export class InMemoryVerifications implements VerificationStore {
  constructor(readonly tables = new CertificateTables()) {}

  async insert(record: VerificationRecord): Promise<void> {
    if (this.tables.verifications.has(record.id)) throw new Error("duplicate verification id");
    this.tables.verifications.set(record.id, copied(record));
  }

  async find(accountId: string, id: string): Promise<VerificationRecord | undefined> {
    const record = this.tables.verifications.get(id);
    return record?.accountId === accountId ? copied(record) : undefined;
  }

  /** Newest first, ties by id (descending), as the repository orders them. */
  async list(accountId: string, filter: VerificationFilter, limit: number, after?: VerificationCursor): Promise<VerificationRecord[]> {
    const before = (r: VerificationRecord) => !after || r.createdAt < after.createdAt || (r.createdAt === after.createdAt && r.id < after.id);
    return copied(
      [...this.tables.verifications.values()]
        .filter((r) => r.accountId === accountId && (!filter.userId || r.userId === filter.userId) && (!filter.certificateId || r.certificateId === filter.certificateId))
        .filter(before)
        .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1))
        .slice(0, limit),
    );
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    if (this.tables.verifications.get(id)?.accountId !== accountId) return false;
    return this.tables.verifications.delete(id);
  }
}
