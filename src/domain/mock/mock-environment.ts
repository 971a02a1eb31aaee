import type { CertificateStore } from "../certificates/certificate-store.ts";
import type { MockCertificateState, MockStore } from "./mock-store.ts";
import { X509Certificate } from "node:crypto";
import type { CertificateType, CertificateUser, CheckMethod, RevocationReasonCode, Status, StoredCertificate } from "../certificates/model.ts";
import { creationTime, isSignatureType } from "../certificates/model.ts";
import type { JpkiFacts } from "../certificates/jpki-facts.ts";
import type { TrustAnchor } from "../trust/trust-anchor.ts";
import { certificateKinds, profileFor } from "../mock-ca/certificate-kind.ts";
import type { MockKeyAlgorithm } from "../mock-ca/keys.ts";
import { x509 } from "../mock-ca/x509-runtime.ts";
import { completeFacts, validateFacts } from "./mock-person.ts";
import { requireUuid } from "../certificates/lookup-errors.ts";
import type { Clock } from "../clock.ts";
import { DomainError, invalidField } from "../errors.ts";
import { canonicalUuid, newId } from "../ids.ts";
import {
  createMockCa,
  createMockCrl,
  issueMockCertificate,
  revocationReasonForCode,
  type MockCaMaterial,
} from "../mock-ca/index.ts";

export interface CreatedMockCertificate {
  certificate: StoredCertificate;
  user: CertificateUser;
  certificatePem: string;
  privateKeyPem: string;
}

export interface CreateMockCertificateInput {
  type: CertificateType;
  userId?: string | undefined;
  commonName?: string | undefined;
  /** The person's facts for a signature certificate; empty fields get generated values. */
  person?: Partial<JpkiFacts> | undefined;
  keyAlgorithm?: MockKeyAlgorithm | undefined;
}

export interface MockStatusInput {
  status: Status;
  revokedReason?: RevocationReasonCode | undefined;
  revokedAt?: number | undefined;
  sourceUpdatedAt?: number | undefined;
  /** Methods the source offers for this certificate; empty or absent: both. */
  offeredMethods?: CheckMethod[] | undefined;
}

const authorityId = "default";

/**
 * The mock environment: one mock CA per database (created on first use and
 * kept), real certificates issued from it for an account's users, and the
 * statuses later checks report, set freely.
 */
export class MockEnvironment {
  private authority: Promise<MockCaMaterial> | undefined;

  constructor(
    private readonly mock: MockStore,
    private readonly certificates: CertificateStore,
    private readonly clock: Clock,
    /** Where the mock CA's CRL is published; written into every certificate it issues. */
    private readonly crlUrl: string,
    /** The OCSP URL written into every certificate it issues (authorityInfoAccess). */
    private readonly ocspUrl: string,
  ) {}

  private anchor: Promise<TrustAnchor> | undefined;

  /**
   * The mock CA as a trust anchor (mock mode only), with one rule per kind of
   * certificate it issues: the kind's policy OID and exact key usages.
   */
  trustAnchor(): Promise<TrustAnchor> {
    this.anchor ??= this.ca().then((material) => ({
      id: "mock",
      name: "the mock CA",
      certificate: new X509Certificate(material.certificatePem),
      rules: certificateKinds.map((kind) => ({ type: kind, policyOid: profileFor(kind).policyOid, keyUsages: profileFor(kind).keyUsages })),
    }));
    this.anchor.catch(() => {
      this.anchor = undefined;
    });
    return this.anchor;
  }

  /** Loads the mock CA, creating it once; several instances starting together agree on one. */
  ca(): Promise<MockCaMaterial> {
    this.authority ??= (async () => {
      const existing = await this.mock.findAuthority(authorityId);
      if (existing) return existing;
      const created = await createMockCa({ commonName: "shomei Mock JPKI CA", now: new Date(this.clock()) });
      await this.mock.insertAuthorityIfAbsent({ id: authorityId, ...created, createdAt: this.clock() });
      const stored = await this.mock.findAuthority(authorityId);
      if (!stored) throw new Error("mock CA was not stored");
      return stored;
    })().catch((error: unknown) => {
      this.authority = undefined;
      throw error;
    });
    return this.authority;
  }

  async createCertificate(accountId: string, input: CreateMockCertificateInput): Promise<CreatedMockCertificate> {
    const signature = isSignatureType(input.type);
    if (input.person && !signature) {
      throw invalidField("person", "user authentication certificates carry no personal facts: give person only for a signature certificate type");
    }
    const facts = signature ? completeFacts(input.person ?? {}) : undefined;
    if (facts) validateFacts(facts);
    const user = input.userId ? await this.existingUser(accountId, input.userId) : undefined;
    const commonName = (input.commonName ?? "").trim() || `Mock User ${newId().slice(0, 8)}`;
    if (commonName.length > 64) throw invalidField("common_name", "common_name must be at most 64 characters");
    const now = this.clock();
    const issued = await issueMockCertificate(await this.ca(), {
      kind: input.type,
      subjectCommonName: commonName,
      notBefore: new Date(now - 60_000),
      crlDistributionPointUrl: this.crlUrl,
      ocspUrl: this.ocspUrl,
      ...(facts ? { facts } : {}),
      keyAlgorithm: input.keyAlgorithm ?? "rsa_2048",
    });
    const parsed = new x509.X509Certificate(issued.certificatePem);
    const owner: CertificateUser = user ?? { id: newId(), accountId, createdAt: creationTime(now) };
    if (!user) await this.certificates.insertUser(owner);
    const certificate: StoredCertificate = {
      id: newId(),
      accountId,
      userId: owner.id,
      type: input.type,
      origin: "mock",
      serialNumber: issued.serialNumberHex,
      issuer: parsed.issuer,
      notBefore: issued.notBefore.getTime(),
      notAfter: issued.notAfter.getTime(),
      fingerprintSha256: issued.sha256FingerprintHex,
      crlDistributionPoints: [this.crlUrl],
      ocspUrls: [this.ocspUrl],
      trustAnchor: "mock",
      createdAt: creationTime(now),
    };
    await this.certificates.insertCertificate(certificate);
    return { certificate, user: owner, certificatePem: issued.certificatePem, privateKeyPem: issued.privateKeyPem };
  }

  async setStatus(accountId: string, certificateId: string, input: MockStatusInput): Promise<MockCertificateState> {
    requireUuid(certificateId, "certificate_id");
    const certificate = await this.certificates.findCertificate(accountId, canonicalUuid(certificateId));
    if (!certificate || certificate.origin !== "mock") {
      throw new DomainError("certificate_not_found", "no mock certificate with this id");
    }
    const revoked = input.status === "revoked";
    if (!revoked && input.revokedReason !== undefined) {
      throw invalidField("revoked_reason", "revoked_reason is only allowed with STATUS_REVOKED");
    }
    if (!revoked && input.revokedAt !== undefined) {
      throw invalidField("revoked_at", "revoked_at is only allowed with STATUS_REVOKED");
    }
    const now = this.clock();
    const state: MockCertificateState = {
      certificateId: certificate.id,
      status: input.status,
      revokedAt: revoked ? (input.revokedAt ?? now) : null,
      revokedReason: revoked ? (input.revokedReason ?? 0) : null,
      sourceUpdatedAt: input.sourceUpdatedAt ?? null,
      updatedAt: now,
      offeredMethods: input.offeredMethods?.length ? [...new Set(input.offeredMethods)] : null,
    };
    await this.mock.saveState(state);
    return state;
  }

  /**
   * The mock CA's CRL as of now (DER): every revoked mock certificate, with
   * its reason. Issued fresh on each request; valid for a day, like JPKI's.
   */
  async currentCrl(): Promise<Uint8Array> {
    const now = this.clock();
    const revoked = await this.mock.listRevoked();
    return createMockCrl(await this.ca(), {
      entries: revoked.map((r) => ({
        serialNumberHex: r.serialNumber,
        revokedAt: new Date(r.revokedAt),
        reason: revocationReasonForCode(r.revokedReason) ?? "unspecified",
      })),
      thisUpdate: new Date(now),
      nextUpdate: new Date(now + 24 * 60 * 60 * 1000),
      crlNumber: Math.floor(now / 1000),
    });
  }

  /** The account's certificates, oldest first. */
  listCertificates(accountId: string): Promise<StoredCertificate[]> {
    return this.certificates.listCertificates(accountId);
  }

  /** What a check of this certificate would report now (good unless set otherwise). */
  async currentStatus(certificateId: string): Promise<Status> {
    return (await this.mock.findState(certificateId))?.status ?? "good";
  }

  private async existingUser(accountId: string, userId: string): Promise<CertificateUser> {
    requireUuid(userId, "user_id");
    const user = await this.certificates.findUser(accountId, canonicalUuid(userId));
    if (!user) throw new DomainError("user_not_found", "no user with this id");
    return user;
  }
}

