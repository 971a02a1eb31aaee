import type { CertificateStore } from "./certificate-store.ts";
import type { Clock } from "../clock.ts";
import { DomainError } from "../errors.ts";
import { canonicalUuid, newId } from "../ids.ts";
import { matchTrustAnchor, type AnchorMatch } from "../trust/chain.ts";
import type { TrustAnchors } from "../trust/trust-anchor.ts";
import { JpkiFactsError, readJpkiFacts, type JpkiFacts } from "./jpki-facts.ts";
import type { LinkSource } from "./link-source.ts";
import type { CertificateType, CertificateUser, StoredCertificate } from "./model.ts";
import { creationTime, isSignatureType } from "./model.ts";
import { requireUuid } from "./lookup-errors.ts";
import { parseCertificate, type ParsedCertificate } from "./x509/parsed-certificate.ts";

/** A certificate shomei can work with: parsed, chained to an anchor, typed, and its facts read. */
export interface RecognizedCertificate {
  parsed: ParsedCertificate;
  match: AnchorMatch;
  type: CertificateType;
  /** The holder's facts, for signature certificates; undefined for user authentication ones. */
  facts: JpkiFacts | undefined;
}

export interface Registration {
  certificate: StoredCertificate;
  user: CertificateUser;
  /** The user was created by this registration. */
  userCreated: boolean;
}

/**
 * The certificates of each account: one id per certificate (by SHA-256
 * fingerprint), its type from the anchor that issued it, and its user from
 * the link source or an operator's explicit link.
 */
export class CertificateRegistry {
  constructor(
    private readonly repository: CertificateStore,
    private readonly anchors: TrustAnchors,
    private readonly links: LinkSource,
    private readonly clock: Clock,
  ) {}

  /** Throws invalid_field for bytes that are not a certificate, unsupported_certificate for one no anchor vouches for. */
  async recognize(der: Uint8Array): Promise<RecognizedCertificate> {
    const parsed = parseCertificate(der);
    const match = matchTrustAnchor(await this.anchors.all(), parsed);
    let facts: JpkiFacts | undefined;
    if (isSignatureType(match.type)) {
      try {
        facts = readJpkiFacts(parsed.otherNames);
      } catch (error) {
        if (error instanceof JpkiFactsError) throw new DomainError("unsupported_certificate", error.message, "certificate");
        throw error;
      }
    }
    return { parsed, match, type: match.type, facts };
  }

  /** The account's record of the certificate, created (with its user) the first time. */
  async register(accountId: string, recognized: RecognizedCertificate): Promise<Registration> {
    const { parsed } = recognized;
    const existing = await this.withUser(await this.repository.findCertificateByFingerprint(accountId, parsed.fingerprintSha256));
    if (existing) return { ...existing, userCreated: false };

    const now = this.clock();
    const linked = await this.repository.findUserByFingerprints(accountId, await this.links.samePerson(parsed));
    const user: CertificateUser = linked ?? { id: newId(), accountId, createdAt: creationTime(now) };
    if (!linked) await this.repository.insertUser(user);
    const certificate: StoredCertificate = {
      id: newId(),
      accountId,
      userId: user.id,
      type: recognized.type,
      origin: "verified",
      serialNumber: parsed.serialNumber,
      issuer: parsed.issuer,
      notBefore: parsed.notBefore,
      notAfter: parsed.notAfter,
      fingerprintSha256: parsed.fingerprintSha256,
      crlDistributionPoints: [...parsed.crlDistributionPoints],
      ocspUrls: [...parsed.ocspUrls],
      trustAnchor: recognized.match.anchor.id,
      createdAt: creationTime(now),
    };
    if (await this.repository.insertCertificateIfAbsent(certificate)) return { certificate, user, userCreated: !linked };

    // Another call registered it first: use theirs, and drop the user made for nothing.
    if (!linked) await this.repository.deleteUserWithoutCertificates(accountId, user.id);
    const winner = await this.withUser(await this.repository.findCertificateByFingerprint(accountId, parsed.fingerprintSha256));
    if (!winner) throw new Error("certificate vanished after a conflicting insert");
    return { ...winner, userCreated: false };
  }

  /** An operator's explicit link: the certificate belongs to this user of the same account from now on. */
  async link(accountId: string, certificateId: string, userId: string): Promise<Registration> {
    requireUuid(certificateId, "certificate_id");
    requireUuid(userId, "user_id");
    const certificate = await this.repository.findCertificate(accountId, canonicalUuid(certificateId));
    if (!certificate) throw new DomainError("certificate_not_found", "no certificate with this id");
    const user = await this.repository.findUser(accountId, canonicalUuid(userId));
    if (!user) throw new DomainError("user_not_found", "no user with this id");
    await this.repository.setCertificateUser(accountId, certificate.id, user.id);
    return { certificate: { ...certificate, userId: user.id }, user, userCreated: false };
  }

  private async withUser(certificate: StoredCertificate | undefined): Promise<{ certificate: StoredCertificate; user: CertificateUser } | undefined> {
    if (!certificate) return undefined;
    const user = await this.repository.findUser(certificate.accountId, certificate.userId);
    if (!user) throw new Error(`certificate ${certificate.id} has no user`);
    return { certificate, user };
  }
}
