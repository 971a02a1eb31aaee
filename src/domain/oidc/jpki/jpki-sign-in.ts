import type { CertificateRegistry, RecognizedCertificate } from "../../certificates/registry.ts";
import { isSignatureType, type CertificateType } from "../../certificates/model.ts";
import type { CertificateStatusChecks } from "../../certificates/status-checks.ts";
import type { Clock } from "../../clock.ts";
import { DomainError } from "../../errors.ts";
import type { Verifications } from "../../verification/verifications.ts";
import type { AuthMethod } from "../acr.ts";
import { challengeDigest, type ChallengeBinding, type JpkiChallenges } from "./challenges.ts";
import { JpkiError } from "./jpki-error.ts";
import { isUsableLink, type JpkiLinkRow, type JpkiLinkStore } from "./model.ts";
import type { ProviderAccount } from "./provider-account.ts";
import { certificateDer, signatureOctets, type SignedChallengeForm } from "./signed-challenge.ts";

/** A signature the provider accepted: whose it is and what the session may say about it. */
export interface JpkiProof {
  userId: string;
  link: JpkiLinkRow;
  /** The ACR policy's method: `jpki_sig` for a signature certificate, `jpki_auth` for a user authentication one. */
  method: AuthMethod;
  /** The `amr` of the authentication: the method, then RFC 8176 `hwk` (a hardware-held key) and `sc` (a smart card). */
  amr: string[];
}

/** The ACR policy's method a certificate of this type performs. */
export function methodOf(type: CertificateType): AuthMethod {
  return isSignatureType(type) ? "jpki_sig" : "jpki_auth";
}

/** At sign-in nobody is signed in: "your account" would be untrue, so the words say what to do instead. */
export const notLinkedToAnyone = () =>
  new JpkiError(
    "certificate_not_linked",
    "This certificate is not linked to any account yet. Sign in with your username and password, then link it on the My Number card certificates page.",
    "certificate_not_linked_to_anyone",
  );

const notLinked = () =>
  new JpkiError("certificate_not_linked", "This certificate is not linked to your account. Link it on the JPKI certificates page first, or use the card you linked.");

/**
 * Sign-in and step-up with a JPKI card: the card signs a fresh challenge,
 * the certificate half's verification service checks the certificate (trust
 * anchor, validity, signature, revocation through the real sources), and only
 * a certificate linked to the user counts. Linking itself needs the same
 * signature (or an operator).
 */
export class JpkiSignIn {
  constructor(
    readonly challenges: JpkiChallenges,
    private readonly links: JpkiLinkStore,
    private readonly account: ProviderAccount,
    private readonly registry: CertificateRegistry,
    private readonly verifications: Verifications,
    private readonly statusChecks: CertificateStatusChecks,
    private readonly clock: Clock,
  ) {}

  /** The user's linked certificates, oldest first. */
  linksOf(userId: string): Promise<JpkiLinkRow[]> {
    return this.links.listLinks(userId);
  }

  /** The methods the user's usable certificates (linked, last found good, not expired) can perform. */
  async methodsOf(userId: string): Promise<AuthMethod[]> {
    const methods = (await this.usable(userId)).map((link) => methodOf(link.type));
    return [...new Set(methods)];
  }

  /** `jpki_verified`: the user has a linked certificate that is current and was last found good. */
  async isVerified(userId: string): Promise<boolean> {
    return (await this.usable(userId)).length > 0;
  }

  /**
   * Checks a signed challenge. With `expected` (step-up) the certificate must
   * be linked to that user and perform one of the methods asked for (a
   * signature certificate also does where a user authentication one is
   * asked for); without (sign-in) the link says whose it is, and a
   * certificate linked to nobody is refused once its signature is good. The challenge is
   * used up first, so a failed attempt needs a new one; a revoked status is
   * remembered on the link (jpki_verified turns false).
   */
  async prove(binding: ChallengeBinding, form: SignedChallengeForm, expected?: { userId: string; methods: readonly AuthMethod[] }): Promise<JpkiProof> {
    const der = certificateDer(form.certificate);
    const signature = signatureOctets(form.signature);
    await this.challenges.consume(binding, form.challenge);
    const recognized = await this.recognize(der);
    const link = await this.links.findLinkByFingerprint(recognized.parsed.fingerprintSha256);
    if (expected !== undefined && (!link || link.userId !== expected.userId)) throw notLinked();
    if (!link) {
      // Sign-in with a card linked to nobody: only its holder (a good signature) learns that, and is told how to link it.
      await this.verify(der, form.challenge, signature, undefined);
      throw notLinkedToAnyone();
    }
    const method = methodOf(link.type);
    if (expected && !expected.methods.includes(method) && !(method === "jpki_sig" && expected.methods.includes("jpki_auth"))) {
      throw new JpkiError("certificate_wrong_type", "This step needs your signature certificate (署名用電子証明書), not your user authentication certificate.");
    }
    await this.verify(der, form.challenge, signature, link);
    return { userId: link.userId, link, method, amr: [method, "hwk", "sc"] };
  }

  /**
   * Links the certificate that signed the challenge to the signed-in user,
   * once its signature and status are good; `alreadyLinked` when it was the
   * user's before (its status is then checked again, nothing else changes).
   */
  async link(binding: ChallengeBinding, form: SignedChallengeForm, userId: string): Promise<{ link: JpkiLinkRow; alreadyLinked: boolean }> {
    const der = certificateDer(form.certificate);
    const signature = signatureOctets(form.signature);
    await this.challenges.consume(binding, form.challenge);
    const recognized = await this.recognize(der);
    const existing = await this.links.findLinkByFingerprint(recognized.parsed.fingerprintSha256);
    if (existing && existing.userId !== userId) throw linkedElsewhere();
    const certificateId = await this.verify(der, form.challenge, signature, existing);
    if (existing) return { link: { ...existing, status: "good", checkedAt: this.clock() }, alreadyLinked: true };
    return { link: await this.insert(userId, recognized, certificateId), alreadyLinked: false };
  }

  /**
   * The user no longer wants the certificate linked: it stops serving sign-in
   * and step-up at once (jpki_verified follows the remaining links). The
   * certificate's record in the provider's account stays, as for any checked
   * certificate. False when the user has no link to it.
   */
  unlink(userId: string, certificateId: string): Promise<boolean> {
    return this.links.deleteLink(userId, certificateId);
  }

  /**
   * An operator's link (CLI), without the holder's signature: the certificate
   * must be trusted, current and good by a status check now.
   */
  async linkByOperator(userId: string, der: Uint8Array): Promise<JpkiLinkRow> {
    const recognized = await this.recognize(der);
    const existing = await this.links.findLinkByFingerprint(recognized.parsed.fingerprintSha256);
    if (existing && existing.userId !== userId) throw linkedElsewhere();
    const now = this.clock();
    if (now < recognized.parsed.notBefore || now > recognized.parsed.notAfter) throw expired();
    const { certificate } = await this.registry.register(await this.account.accountId(), recognized);
    const { status } = await this.statusOf(() => this.statusChecks.check(certificate, undefined, "liveness_check"));
    if (status === "unknown") throw unavailable();
    if (status === "revoked") {
      if (existing) await this.links.updateLinkStatus(existing.certificateId, "revoked", this.clock());
      throw revoked();
    }
    if (existing) {
      await this.links.updateLinkStatus(existing.certificateId, "good", this.clock());
      return { ...existing, status: "good", checkedAt: this.clock() };
    }
    return this.insert(userId, recognized, certificate.id);
  }

  private async usable(userId: string): Promise<JpkiLinkRow[]> {
    const now = this.clock();
    return (await this.links.listLinks(userId)).filter((link) => isUsableLink(link, now));
  }

  private async insert(userId: string, recognized: RecognizedCertificate, certificateId: string): Promise<JpkiLinkRow> {
    const now = this.clock();
    const link: JpkiLinkRow = {
      certificateId,
      userId,
      fingerprintSha256: recognized.parsed.fingerprintSha256,
      type: recognized.type,
      notAfter: recognized.parsed.notAfter,
      status: "good",
      linkedAt: now,
      checkedAt: now,
    };
    if (await this.links.insertLinkIfAbsent(link)) return link;
    // Linked by a concurrent request: to this user is fine, to another is not.
    const winner = await this.links.findLinkByFingerprint(link.fingerprintSha256);
    if (!winner || winner.userId !== userId) throw linkedElsewhere();
    return winner;
  }

  /** The certificate half's recognition: parsed and vouched for by a trust anchor. */
  private async recognize(der: Uint8Array): Promise<RecognizedCertificate> {
    try {
      return await this.registry.recognize(der);
    } catch (error) {
      if (error instanceof DomainError && error.code === "invalid_field") {
        throw new JpkiError("certificate_invalid", "This is not an X.509 certificate. Paste the certificate your signing app gave you.", "certificate_not_x509");
      }
      if (error instanceof DomainError && error.code === "unsupported_certificate") {
        throw new JpkiError("certificate_untrusted", "This certificate was not issued by a JPKI certification authority this service trusts.");
      }
      throw error;
    }
  }

  /**
   * Verify, as the API does (the verification and its status check are
   * recorded in the provider's account); anything but OK refuses. The link's
   * status follows what the check found. Returns the provider's certificate id.
   */
  private async verify(der: Uint8Array, challenge: string, signature: Uint8Array, link: JpkiLinkRow | undefined): Promise<string> {
    const accountId = await this.account.accountId();
    const view = await this.statusOf(() =>
      this.verifications.verify(accountId, { certificate: der, hashAlgorithm: "sha256", digest: challengeDigest(challenge), signature, identifyUser: false }),
    );
    const result = view.verification.result;
    if (result === "certificate_expired") throw expired();
    if (result === "signature_mismatch") {
      throw new JpkiError("signature_mismatch", "The signature does not match this challenge and certificate. Sign the new challenge shown on this page.");
    }
    if (link) await this.links.updateLinkStatus(link.certificateId, result === "certificate_revoked" ? "revoked" : "good", this.clock());
    if (result === "certificate_revoked") throw revoked();
    return view.certificate.id;
  }

  private async statusOf<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof DomainError && error.code === "source_unavailable") throw unavailable();
      throw error;
    }
  }
}

function unavailable(): JpkiError {
  return new JpkiError("status_unavailable", "The revocation status of this certificate cannot be checked right now, so it cannot be used. Try again later.");
}

function linkedElsewhere(): JpkiError {
  return new JpkiError("certificate_linked_elsewhere", "This certificate is already linked to another account.");
}

function expired(): JpkiError {
  return new JpkiError("certificate_expired", "This certificate has expired or is not valid yet. Renew it, then link the new one.");
}

function revoked(): JpkiError {
  return new JpkiError("certificate_revoked", "This certificate has been revoked, so it can no longer be used to sign in. Link your new certificate.");
}
