import type { CertificateStore } from "../certificates/certificate-store.ts";
import type { VerificationFilter, VerificationStore } from "./verification-store.ts";
import type { CertificateRegistry } from "../certificates/registry.ts";
import type { CheckMethod, StatusRecord, StoredCertificate } from "../certificates/model.ts";
import { creationTime } from "../certificates/model.ts";
import { requireUuid } from "../certificates/lookup-errors.ts";
import { defaultPageSize, maxPageSize, type CertificateStatusChecks } from "../certificates/status-checks.ts";
import type { Clock } from "../clock.ts";
import { DomainError, invalidField } from "../errors.ts";
import { canonicalUuid, newTimeOrderedId } from "../ids.ts";
import type { ContentBox } from "./content-box.ts";
import { verifyDigestSignature } from "./digest-signature.ts";
import { digestLength, type HashAlgorithm } from "./hash-algorithm.ts";
import type { CertificateContent, VerificationRecord, VerificationResult } from "./model.ts";
import { decodeVerificationPageToken, encodeVerificationPageToken } from "./page-token.ts";

export interface VerifyInput {
  certificate: Uint8Array;
  hashAlgorithm: HashAlgorithm;
  digest: Uint8Array;
  signature: Uint8Array;
  identifyUser: boolean;
  checkMethod?: CheckMethod | undefined;
}

export interface VerificationView {
  verification: VerificationRecord;
  certificate: StoredCertificate;
  status: StatusRecord | undefined;
  /** Verify: always what the certificate says. Get: only what was kept. */
  content: CertificateContent | undefined;
}

export interface VerificationPage {
  verifications: VerificationRecord[];
  nextPageToken: string;
}

export interface VerificationSettings {
  /** Keep certificate content (sealed) with OK verifications; false keeps none at all. */
  storeContent: boolean;
}

/**
 * Signature verification for one API account at a time, in the order the
 * real service uses, stopping at the first failure: trust anchor, validity,
 * signature, revocation. Only step 1 fails the call; the others are results.
 */
export class Verifications {
  constructor(
    private readonly repository: VerificationStore,
    private readonly certificates: CertificateStore,
    private readonly registry: CertificateRegistry,
    private readonly statusChecks: CertificateStatusChecks,
    private readonly box: ContentBox,
    private readonly settings: VerificationSettings,
    private readonly clock: Clock,
  ) {}

  async verify(accountId: string, input: VerifyInput): Promise<VerificationView> {
    if (input.digest.length !== digestLength[input.hashAlgorithm]) {
      throw invalidField("digest", `digest must be ${digestLength[input.hashAlgorithm]} bytes for ${input.hashAlgorithm.toUpperCase()}, got ${input.digest.length}`);
    }
    if (input.signature.length === 0) throw invalidField("signature", "signature is required");

    // (1) Trust anchor: an error, and nothing is stored, when no anchor vouches for it.
    const recognized = await this.registry.recognize(input.certificate);
    const { certificate, user, userCreated } = await this.registry.register(accountId, recognized);
    const content: CertificateContent = { type: recognized.type, facts: recognized.facts };

    let result: VerificationResult;
    let status: StatusRecord | undefined;
    const now = this.clock();
    if (now < recognized.parsed.notBefore || now > recognized.parsed.notAfter) {
      result = "certificate_expired"; // (2)
    } else if (!verifyDigestSignature(recognized.parsed.publicKey, input.hashAlgorithm, input.digest, input.signature)) {
      result = "signature_mismatch"; // (3)
    } else {
      // (4) Throws source_unavailable when no source answers: never OK without one.
      status = await this.statusChecks.check(certificate, input.checkMethod, "signature_verification");
      if (status.status === "unknown") {
        throw new DomainError("source_unavailable", "the revocation source does not know this certificate; the verification has no result");
      }
      result = status.status === "revoked" ? "certificate_revoked" : "ok";
    }

    const id = newTimeOrderedId(now);
    const keep = this.settings.storeContent && result === "ok" && content.facts !== undefined;
    const verification: VerificationRecord = {
      id,
      accountId,
      certificateId: certificate.id,
      userId: input.identifyUser ? user.id : null,
      isNewUser: input.identifyUser && userCreated,
      result,
      hashAlgorithm: input.hashAlgorithm,
      certificateStatusId: status?.id ?? null,
      contentSealed: keep ? this.box.seal(id, content.facts!) : null,
      createdAt: creationTime(this.clock()),
    };
    await this.repository.insert(verification);
    return { verification, certificate, status, content };
  }

  async get(accountId: string, verificationId: string): Promise<VerificationView> {
    const verification = await this.find(accountId, verificationId);
    const certificate = await this.certificates.findCertificate(accountId, verification.certificateId);
    if (!certificate) throw new Error(`verification ${verification.id} has no certificate`);
    const status = verification.certificateStatusId ? await this.certificates.findStatus(accountId, verification.certificateStatusId) : undefined;
    const content = verification.contentSealed
      ? { type: certificate.type, facts: this.box.open(verification.id, verification.contentSealed) }
      : undefined;
    return { verification, certificate, status, content };
  }

  async list(accountId: string, filter: VerificationFilter, pageSize: number, pageToken: string): Promise<VerificationPage> {
    if (!Number.isInteger(pageSize) || pageSize < 0 || pageSize > maxPageSize) {
      throw invalidField("page_size", `page_size must be between 0 and ${maxPageSize}`);
    }
    const canonical: VerificationFilter = {};
    if (filter.userId) {
      requireUuid(filter.userId, "user_id");
      canonical.userId = canonicalUuid(filter.userId);
      if (!(await this.certificates.findUser(accountId, canonical.userId))) throw new DomainError("user_not_found", "no user with this id");
    }
    if (filter.certificateId) {
      requireUuid(filter.certificateId, "certificate_id");
      canonical.certificateId = canonicalUuid(filter.certificateId);
      if (!(await this.certificates.findCertificate(accountId, canonical.certificateId))) {
        throw new DomainError("certificate_not_found", "no certificate with this id");
      }
    }
    const size = pageSize || defaultPageSize;
    const after = pageToken ? decodeVerificationPageToken(canonical, pageToken) : undefined;
    const rows = await this.repository.list(accountId, canonical, size + 1, after);
    const verifications = rows.slice(0, size);
    const last = verifications.at(-1);
    return { verifications, nextPageToken: rows.length > size && last ? encodeVerificationPageToken(canonical, last) : "" };
  }

  /** Removes the verification and the content sealed in it; the certificate and its status records stay. */
  async delete(accountId: string, verificationId: string): Promise<void> {
    requireUuid(verificationId, "verification_id");
    if (!(await this.repository.delete(accountId, canonicalUuid(verificationId)))) {
      throw new DomainError("verification_not_found", "no verification with this id");
    }
  }

  private async find(accountId: string, verificationId: string): Promise<VerificationRecord> {
    requireUuid(verificationId, "verification_id");
    const verification = await this.repository.find(accountId, canonicalUuid(verificationId));
    if (!verification) throw new DomainError("verification_not_found", "no verification with this id");
    return verification;
  }
}
