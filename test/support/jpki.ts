import { sign, X509Certificate } from "node:crypto";
import { expect } from "vitest";
import { challengeText } from "../../src/domain/oidc/jpki/challenges.ts";
import { createMockCa, issueMockCertificate } from "../../src/domain/mock-ca/index.ts";
import type { Reply } from "./oidc.ts";
import type { TestServer } from "./server.ts";
import { mockOf } from "../../src/app/mock/installed-mock.ts";

/** A certificate and its key, as a signing app holds them. */
export interface TestCard {
  certificatePem: string;
  privateKeyPem: string;
  fingerprint: string;
  /** The certificate's id in the API account that issued it (for SetMockCertificateStatus). */
  certificateId?: string;
}

/** A card from the server's mock CA, issued in `accountId`. */
export async function mockCard(server: TestServer, accountId: string, type: "jpki_card_digital_signature" | "jpki_card_user_authentication" = "jpki_card_digital_signature"): Promise<TestCard> {
  const issued = await mockOf(server.domain).createCertificate(accountId, { type, commonName: "Card Holder" });
  return { certificatePem: issued.certificatePem, privateKeyPem: issued.privateKeyPem, fingerprint: issued.certificate.fingerprintSha256, certificateId: issued.certificate.id };
}

/** A card from a CA of its own, which no trust anchor of the server vouches for. */
export async function foreignCard(): Promise<TestCard> {
  const ca = await createMockCa({ commonName: "Some Other CA", now: new Date() });
  const issued = await issueMockCertificate(ca, {
    kind: "jpki_card_digital_signature",
    subjectCommonName: "Foreign Holder",
    notBefore: new Date(Date.now() - 60_000),
    crlDistributionPointUrl: "http://127.0.0.1:9/other.crl",
  });
  return { certificatePem: issued.certificatePem, privateKeyPem: issued.privateKeyPem, fingerprint: issued.sha256FingerprintHex };
}

export function derOf(card: TestCard): Uint8Array {
  return new Uint8Array(new X509Certificate(card.certificatePem).raw);
}

/** What the card makes for a challenge: RSA PKCS#1 v1.5 over the SHA-256 of the challenge text, base64. */
export function signChallenge(card: TestCard, challenge: string, text = challengeText(challenge)): string {
  return sign("sha256", Buffer.from(text, "utf8"), card.privateKeyPem).toString("base64");
}

/** The challenge a JPKI page shows. */
export function challengeOf(html: string): string {
  const match = /name="challenge" value="([A-Za-z0-9_-]{43})"/.exec(html);
  expect(match, "the page has a challenge").not.toBeNull();
  return match![1]!;
}

/** Asserts a JPKI page that refused a signature: status, the error code and (part of) its message. */
export function expectJpkiRefusal(reply: Reply, status: number, code: string, message: RegExp): void {
  expect(reply.status, reply.body).toBe(status);
  expect(reply.location).toBeUndefined();
  const match = /data-error="([a-z_]+)"><p>([^<]*)<\/p>/.exec(reply.body);
  expect(match, "the page shows a refusal").not.toBeNull();
  expect(match![1]).toBe(code);
  expect(match![2]).toMatch(message);
}
