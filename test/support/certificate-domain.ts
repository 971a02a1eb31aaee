import { createHash, createPrivateKey, randomBytes, sign, X509Certificate } from "node:crypto";
import { diffCrls } from "../../src/adapters/crl/diff-crl.ts";
import { loadCrl } from "../../src/adapters/crl/load-crl.ts";
import { CrlLists, type CrlIssuer } from "../../src/domain/certificates/crl/crl-lists.ts";
import { CrlRevocationSource } from "../../src/domain/certificates/crl/crl-revocation-source.ts";
import { ListChanges } from "../../src/domain/certificates/crl/list-changes.ts";
import { noLinkSource } from "../../src/domain/certificates/link-source.ts";
import { MethodSelectingSource } from "../../src/domain/certificates/method-selecting-source.ts";
import { CertificateIdentity } from "../../src/domain/certificates/ocsp/certificate-identity.ts";
import { OcspResponses, type OcspIssuer } from "../../src/domain/certificates/ocsp/ocsp-responses.ts";
import { OcspRevocationSource } from "../../src/domain/certificates/ocsp/ocsp-revocation-source.ts";
import { CertificateRegistry } from "../../src/domain/certificates/registry.ts";
import { CertificateStatusChecks } from "../../src/domain/certificates/status-checks.ts";
import type { TrustAnchor } from "../../src/domain/trust/trust-anchor.ts";
import { TrustAnchorSet } from "../../src/domain/trust/trust-anchor-set.ts";
import { ContentBox } from "../../src/domain/verification/content-box.ts";
import { Verifications } from "../../src/domain/verification/verifications.ts";
import {
  answerOcspRequest,
  certificateKinds,
  createMockCrl,
  createMockCa,
  issueMockCertificate,
  issueOcspResponderCertificate,
  profileFor,
  type MockCaMaterial,
  type MockCrlEntry,
  type MockOcspSigner,
  type MockOcspState,
} from "../../src/domain/mock-ca/index.ts";
import { CertificateTables, InMemoryCertificates, InMemoryVerifications } from "./in-memory/certificates.ts";
import { ManualClock } from "./in-memory/clock.ts";
import { InMemoryCrlLists, InMemoryOcspResponses } from "./in-memory/revocation-lists.ts";

/*
 * The certificate half's status checks and verifications, built as
 * src/app/compose.ts builds them for a configured trust anchor, over the
 * in-memory stores, a clock the test moves, and an issuer the test plays:
 * a CA (made with the mock CA's code, but configured as an ordinary anchor)
 * whose CRL and OCSP responder answer from what the test sets, through
 * fetchers that count how often they are asked. For unit tests that read as
 * the rules.
 */

export const crlUrl = "http://ca.example.test/ca.crl";
export const ocspUrl = "http://ca.example.test/ocsp";
const anchorId = "sha256:test-anchor";
const hour = 3_600_000;

/** One CA and its OCSP responder for a whole test file: making RSA keys takes longer than the rules under test. */
export interface TestIssuer {
  ca: MockCaMaterial;
  signer: MockOcspSigner;
  anchor: TrustAnchor;
}

export async function testIssuer(now: number): Promise<TestIssuer> {
  const ca = await createMockCa({ now: new Date(now - 365 * 24 * hour), commonName: "Test Anchor CA" });
  const responder = await issueOcspResponderCertificate(ca, new Date(now - 24 * hour));
  const der = (pem: string) => new Uint8Array(new X509Certificate(pem).raw);
  const signer: MockOcspSigner = {
    ca: new CertificateIdentity(der(ca.certificatePem)),
    responder: new CertificateIdentity(der(responder.certificatePem)),
    responderDer: der(responder.certificatePem),
    responderKey: createPrivateKey(responder.privateKeyPem),
  };
  const anchor: TrustAnchor = {
    id: anchorId,
    name: "Test Anchor CA",
    certificate: new X509Certificate(ca.certificatePem),
    rules: certificateKinds.map((kind) => ({ type: kind, policyOid: profileFor(kind).policyOid, keyUsages: profileFor(kind).keyUsages })),
  };
  return { ca, signer, anchor };
}

/** A certificate of the test issuer, as a holder presents it: its DER, and its key to sign with. */
export interface HeldCertificate {
  der: Uint8Array;
  serialNumber: string;
  privateKeyPem: string;
}

export class CertificateDomain {
  readonly time = new ManualClock();
  readonly tables = new CertificateTables();
  readonly certificates = new InMemoryCertificates(this.tables);
  readonly verificationStore = new InMemoryVerifications(this.tables);
  readonly crlStore = new InMemoryCrlLists(this.tables);
  readonly ocspStore = new InMemoryOcspResponses();
  /** What the CA's CRL lists now (a new list is signed on each fetch), and how often it was fetched. */
  readonly revokedOnList: MockCrlEntry[] = [];
  crlFetches = 0;
  crlNumber = 1;
  /** What the OCSP responder says of each serial (good when not set), and how often it was asked. */
  readonly ocspStates = new Map<string, MockOcspState>();
  ocspFetches = 0;
  readonly statusChecks: CertificateStatusChecks;
  readonly verifications: Verifications;
  readonly registry: CertificateRegistry;

  constructor(readonly issuer: TestIssuer) {
    const crlIssuer: CrlIssuer = { id: anchorId, name: issuer.anchor.name, certificateDer: new Uint8Array(issuer.anchor.certificate.raw), crlUrls: undefined };
    const ocspIssuer: OcspIssuer = { ...crlIssuer, ocspUrls: undefined };
    const crlLists = new CrlLists(
      new Map([[anchorId, crlIssuer]]),
      this.crlStore,
      async () => {
        this.crlFetches++;
        const thisUpdate = new Date(Math.floor(this.time.now / 1000) * 1000 - 60_000);
        const der = await createMockCrl(issuer.ca, { entries: this.revokedOnList, thisUpdate, nextUpdate: new Date(thisUpdate.getTime() + 24 * hour), crlNumber: this.crlNumber++ });
        return { kind: "fetched", der, etag: undefined, lastModified: undefined };
      },
      loadCrl,
      new ListChanges(diffCrls, this.certificates, this.time.clock),
      { fetchTimeoutMs: 5_000, maxBytes: 10_000_000, refreshIntervalMs: hour },
      this.time.clock,
    );
    const ocspResponses = new OcspResponses(
      new Map([[anchorId, ocspIssuer]]),
      this.ocspStore,
      async (_url, request) => {
        this.ocspFetches++;
        const lookup = async (serials: readonly string[]) =>
          new Map(serials.map((serial) => [serial, this.ocspStates.get(serial) ?? { status: "good" as const, thisUpdate: this.time.now - 60_000 }]));
        return answerOcspRequest(request, issuer.signer, lookup, this.time.now);
      },
      { timeoutMs: 5_000, nonceBytes: 0, withoutNextUpdateMs: hour },
      this.time.clock,
    );
    const source = new MethodSelectingSource([new CrlRevocationSource(crlLists), new OcspRevocationSource(ocspResponses)]);
    this.registry = new CertificateRegistry(this.certificates, new TrustAnchorSet([issuer.anchor]), noLinkSource, this.time.clock);
    this.statusChecks = new CertificateStatusChecks(this.certificates, () => source, this.time.clock, this.registry);
    this.verifications = new Verifications(this.verificationStore, this.certificates, this.registry, this.statusChecks, new ContentBox(randomBytes(32)), { storeContent: true }, this.time.clock);
  }

  /** A user authentication certificate of the issuer (P-256), valid for a year from notBefore (a day ago unless told), naming the CRL and the OCSP responder unless told not to. */
  async issue(options: { ocsp?: boolean; crl?: boolean; notBefore?: number } = {}): Promise<HeldCertificate> {
    const notBefore = new Date(options.notBefore ?? this.time.now - 24 * hour);
    const issued = await issueMockCertificate(this.issuer.ca, {
      kind: "jpki_card_user_authentication",
      subjectCommonName: "Test Holder",
      notBefore,
      notAfter: new Date(notBefore.getTime() + 365 * 24 * hour),
      crlDistributionPointUrl: options.crl === false ? "ldap://ca.example.test/none" : crlUrl,
      ...(options.ocsp === false ? {} : { ocspUrl }),
      // A P-256 key is made in a millisecond, an RSA one in a good part of a second.
      keyAlgorithm: "ec_p256",
    });
    return { der: new Uint8Array(new X509Certificate(issued.certificatePem).raw), serialNumber: issued.serialNumberHex, privateKeyPem: issued.privateKeyPem };
  }

  /** The certificate registered with the account, as a check by content does: its stored id. */
  async register(accountId: string, held: HeldCertificate): Promise<string> {
    return (await this.registry.register(accountId, await this.registry.recognize(held.der))).certificate.id;
  }

  /** Puts the certificate on the CRL the next fetch signs. */
  revokeOnList(held: HeldCertificate, reason: MockCrlEntry["reason"], revokedAt = this.time.now - 30 * 60_000): void {
    this.revokedOnList.push({ serialNumberHex: held.serialNumber, revokedAt: new Date(Math.floor(revokedAt / 1000) * 1000), reason });
  }
}

/** A SHA-256 digest of the message and the holder's ECDSA signature of it (DER), as a signing app sends them. */
export function signed(held: HeldCertificate, message: string): { digest: Uint8Array; signature: Uint8Array } {
  const digest = new Uint8Array(createHash("sha256").update(message).digest());
  return { digest, signature: new Uint8Array(sign("sha256", Buffer.from(message), createPrivateKey(held.privateKeyPem))) };
}
