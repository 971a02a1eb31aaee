import type { CertificateStore } from "../certificates/certificate-store.ts";
import type { CrlIssuer } from "../certificates/crl/crl-lists.ts";
import type { OcspIssuer } from "../certificates/ocsp/ocsp-responses.ts";
import type { MockCertificateState, MockStore } from "./mock-store.ts";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { CertificateIdentity } from "../certificates/ocsp/certificate-identity.ts";
import type { MockOcspSigner, MockOcspState } from "../mock-ca/ocsp-answer.ts";
import type { CertificateType, CertificateUser, CheckMethod, RevocationReasonCode, Status, StoredCertificate } from "../certificates/model.ts";
import { creationTime, isSignatureType } from "../certificates/model.ts";
import type { JpkiFacts } from "../certificates/jpki-facts.ts";
import type { TrustAnchor } from "../trust/trust-anchor.ts";
import type { MockKeyAlgorithm } from "../mock-ca/keys.ts";
import { parseCertificate } from "../certificates/x509/parsed-certificate.ts";
import { notCoveredByMockCrl } from "./mock-crl-coverage.ts";
import { completeFacts, validateFacts } from "./mock-person.ts";
import { requireUuid } from "../certificates/lookup-errors.ts";
import type { Clock } from "../clock.ts";
import { DomainError, invalidField } from "../errors.ts";
import { canonicalUuid, newId } from "../ids.ts";
import type { MockCaMaterial } from "../mock-ca/index.ts";

/**
 * The mock CA's code, and the X.509 library it issues with, loaded on first
 * use: a server in production mode never reads them, and one in mock mode
 * starts without them.
 */
const mockCa = () => import("../mock-ca/index.ts");
const derOf = (pem: string) => new Uint8Array(new X509Certificate(pem).raw);

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
/** The delegated OCSP responder's certificate and key, kept beside the CA's. */
const responderId = "default-ocsp-responder";
const dayMs = 24 * 60 * 60 * 1000;
/** Times a CRL index holds (seconds since 1950 in 32 bits: up to 2086); both CRLs and OCSP carry whole seconds. */
const earliestTime = Date.UTC(1950, 0, 1);
const latestRevocationTime = Date.UTC(2086, 0, 1);

/** Told after SetMockCertificateStatus changed what the mock CA publishes, so that the next check sees it. */
export type RevocationChangeListener = (serialNumber: string) => Promise<void>;

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
    private readonly onRevocationChange: RevocationChangeListener = async () => undefined,
  ) {}

  private responder: Promise<MockOcspSigner> | undefined;
  /** When the responder certificate held is due for renewal (a month before it expires). */
  private responderRenewAt = Number.POSITIVE_INFINITY;

  private anchor: Promise<TrustAnchor> | undefined;

  /**
   * The mock CA as a trust anchor (mock mode only), with one rule per kind of
   * certificate it issues: the kind's policy OID and exact key usages.
   */
  trustAnchor(): Promise<TrustAnchor> {
    this.anchor ??= Promise.all([this.ca(), mockCa()]).then(([material, { certificateKinds, profileFor }]) => ({
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
      const { createMockCa } = await mockCa();
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
    const { issueMockCertificate } = await mockCa();
    const issued = await issueMockCertificate(await this.ca(), {
      kind: input.type,
      subjectCommonName: commonName,
      notBefore: new Date(now - 60_000),
      crlDistributionPointUrl: this.crlUrl,
      ocspUrl: this.ocspUrl,
      ...(facts ? { facts } : {}),
      keyAlgorithm: input.keyAlgorithm ?? "rsa_2048",
    });
    const parsed = parseCertificate(derOf(issued.certificatePem));
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
    if (revoked && input.revokedReason === 8) {
      throw invalidField("revoked_reason", "removeFromCRL (8) only takes an entry off a delta CRL: it is not a reason a certificate is revoked for");
    }
    const now = this.clock();
    // CRLs and OCSP carry whole seconds: the state keeps what checks will report.
    const revokedAt = revoked ? wholeSeconds(input.revokedAt ?? now) : null;
    if (revokedAt !== null && (revokedAt < earliestTime || revokedAt >= latestRevocationTime)) {
      throw invalidField("revoked_at", "revoked_at must be between 1950-01-01 and 2085-12-31");
    }
    const sourceUpdatedAt = input.sourceUpdatedAt === undefined ? null : wholeSeconds(input.sourceUpdatedAt);
    if (sourceUpdatedAt !== null && (sourceUpdatedAt < earliestTime || sourceUpdatedAt > now)) {
      throw invalidField("source_updated_at", "source_updated_at must be between 1950-01-01 and now: a CRL or OCSP answer dated in the future is never used");
    }
    const state: MockCertificateState = {
      certificateId: certificate.id,
      status: input.status,
      revokedAt,
      revokedReason: revoked ? (input.revokedReason ?? 0) : null,
      sourceUpdatedAt,
      updatedAt: now,
      offeredMethods: input.offeredMethods?.length ? [...new Set(input.offeredMethods)] : null,
    };
    await this.ca();
    await this.mock.saveState(state);
    // A new CRL issue: the next cRLNumber, dated as the developer said (or now).
    await this.mock.nextCrlIssue(authorityId, sourceUpdatedAt ?? wholeSeconds(now));
    await this.onRevocationChange(certificate.serialNumber);
    return state;
  }

  /**
   * The delegated OCSP responder (certificate and key), issued by the mock
   * CA once and kept beside it in the database; renewed when less than a
   * month of its year is left.
   */
  ocspResponder(): Promise<MockOcspSigner> {
    if (this.responder && this.clock() >= this.responderRenewAt) this.responder = undefined;
    this.responder ??= this.loadResponder().catch((error: unknown) => {
      this.responder = undefined;
      throw error;
    });
    return this.responder;
  }

  private async loadResponder(): Promise<MockOcspSigner> {
    const [ca, { issueOcspResponderCertificate, responderRenewBeforeMs }] = await Promise.all([this.ca(), mockCa()]);
    const now = this.clock();
    const notAfter = (m: { certificatePem: string }) => Date.parse(new X509Certificate(m.certificatePem).validTo);
    let material = await this.mock.findAuthority(responderId);
    if (!material || notAfter(material) - now < responderRenewBeforeMs) {
      const issued = await issueOcspResponderCertificate(ca, new Date(now));
      if (material) await this.mock.replaceAuthority({ id: responderId, ...issued, createdAt: now });
      else await this.mock.insertAuthorityIfAbsent({ id: responderId, ...issued, createdAt: now });
      material = await this.mock.findAuthority(responderId);
      if (!material) throw new Error("mock OCSP responder was not stored");
    }
    this.responderRenewAt = notAfter(material) - responderRenewBeforeMs;
    const responderDer = derOf(material.certificatePem);
    return {
      ca: new CertificateIdentity(derOf(ca.certificatePem)),
      responder: new CertificateIdentity(responderDer),
      responderDer,
      responderKey: createPrivateKey(material.privateKeyPem),
    };
  }

  /** The mock OCSP responder's answer (DER OCSPResponse) to a DER OCSPRequest, from the mock state as it is now. */
  async answerOcsp(requestDer: Uint8Array): Promise<Uint8Array> {
    const [signer, { answerOcspRequest }] = await Promise.all([this.ocspResponder(), mockCa()]);
    const now = this.clock();
    return answerOcspRequest(requestDer, signer, async (serials) => {
      const states = await this.mock.findStatesBySerials(serials);
      return new Map([...states].map(([serial, state]) => [serial, ocspStateOf(state, now)]));
    }, now);
  }

  /**
   * The mock CA's CRL (DER): every revoked mock certificate, with its reason.
   * Its cRLNumber and thisUpdate are those of the last change (see
   * nextCrlIssue), so a list only moves forward; nextUpdate is a day from
   * now, like JPKI's daily lists.
   */
  async currentCrl(): Promise<Uint8Array> {
    const [ca, { createMockCrl, revocationReasonForCode }] = await Promise.all([this.ca(), mockCa()]);
    const now = this.clock();
    const [issue, revoked] = await Promise.all([this.mock.crlIssue(authorityId), this.mock.listRevoked()]);
    if (!issue) throw new Error("mock CA is not stored");
    const thisUpdate = issue.thisUpdate ?? issue.createdAt;
    return createMockCrl(ca, {
      entries: revoked.map((r) => ({
        serialNumberHex: r.serialNumber,
        revokedAt: new Date(r.revokedAt),
        reason: revocationReasonForCode(r.revokedReason) ?? "unspecified",
      })),
      thisUpdate: new Date(thisUpdate),
      nextUpdate: new Date(Math.max(now, thisUpdate) + dayMs),
      crlNumber: issue.crlNumber,
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

  /**
   * The mock CA as the CRL and OCSP sources know an issuer; its lists and
   * responder are this server's own routes. Its list does not cover the
   * certificates set to STATUS_UNKNOWN (see mock-crl-coverage.ts).
   */
  async issuer(): Promise<CrlIssuer & OcspIssuer> {
    const anchor = await this.trustAnchor();
    return {
      id: anchor.id,
      name: anchor.name,
      certificateDer: new Uint8Array(anchor.certificate.raw),
      crlUrls: [this.crlUrl],
      ocspUrls: [this.ocspUrl],
      notCoveredBy: (certificates) => notCoveredByMockCrl(this.mock, certificates),
    };
  }

  private async existingUser(accountId: string, userId: string): Promise<CertificateUser> {
    requireUuid(userId, "user_id");
    const user = await this.certificates.findUser(accountId, canonicalUuid(userId));
    if (!user) throw new DomainError("user_not_found", "no user with this id");
    return user;
  }
}


function wholeSeconds(ms: number): number {
  return Math.floor(ms / 1000) * 1000;
}

/**
 * What the responder says from a state: thisUpdate is the sourceUpdatedAt
 * set, else the time of the change, else (never changed) now. A certificate
 * whose source offers no OCSP is refused.
 */
function ocspStateOf(state: MockCertificateState | null, now: number): MockOcspState {
  if (state?.offeredMethods && !state.offeredMethods.includes("ocsp")) return { status: "unauthorized" };
  const thisUpdate = state ? (state.sourceUpdatedAt ?? state.updatedAt) : now;
  if (state?.status === "revoked") return { status: "revoked", thisUpdate, revokedAt: state.revokedAt ?? state.updatedAt, reason: state.revokedReason ?? 0 };
  return { status: state?.status ?? "good", thisUpdate };
}
