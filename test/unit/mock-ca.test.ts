import { spawnSync } from "node:child_process";
import { X509Certificate, createPrivateKey, sign, verify } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.ts";
import {
  createMockCa,
  createMockCrl,
  issueMockCertificate,
  jpkiCardDigitalSignaturePolicyOid,
  jpkiCardUserAuthenticationPolicyOid,
  mockJpkiMobileDigitalSignaturePolicyOid,
  mockJpkiMobileUserAuthenticationPolicyOid,
  normalizeSerialNumberHex,
  revocationReasonForCode,
  revocationReasons,
  type CertificateKind,
  type IssuedCertificate,
  type MockCaMaterial,
  type RevocationReason,
} from "../../src/domain/mock-ca/index.ts";

// openssl is the oracle: every artefact is written to a temporary directory and judged by it.

let dir: string;
let fileCounter = 0;

function writeTemp(name: string, content: string | Uint8Array): string {
  const path = join(dir, `${fileCounter++}-${name}`);
  writeFileSync(path, content);
  return path;
}

function openssl(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync("openssl", args, { encoding: "utf8" });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function opensslOk(...args: string[]): string {
  const result = openssl(...args);
  if (result.status !== 0) throw new Error(`openssl ${args.join(" ")} failed (${result.status}): ${result.stderr}`);
  return result.stdout;
}

/** `openssl x509 -ext NAME`, one extension, each line trimmed. */
function extension(certificatePath: string, name: string): string[] {
  return opensslOk("x509", "-in", certificatePath, "-noout", "-ext", name)
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
}

function field(certificatePath: string, option: string): string {
  return opensslOk("x509", "-in", certificatePath, "-noout", option).trim();
}

const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** The way openssl prints an ASN.1 time: "Nov  2 04:08:06 2026 GMT". */
function opensslTime(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  const day = String(date.getUTCDate()).padStart(2, " ");
  return `${months[date.getUTCMonth()]} ${day} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} ${date.getUTCFullYear()} GMT`;
}

function wholeSeconds(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}

function plusUtcYears(date: Date, years: number): Date {
  const result = new Date(date.getTime());
  result.setUTCFullYear(result.getUTCFullYear() + years);
  return result;
}

function colonHex(hex: string): string {
  return hex.toUpperCase().match(/../g)!.join(":");
}

async function expectInvalidField(promise: Promise<unknown>, fieldName: string): Promise<void> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  expect((error as DomainError).code).toBe("invalid_field");
  expect((error as DomainError).field).toBe(fieldName);
}

const crlUrl = "http://mock.shomei.test/mock-ca/crl";
const caNow = wholeSeconds(new Date(Date.now() - 60_000));
let ca: MockCaMaterial;
let caPath: string;
let caSubjectKeyId: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "shomei-mock-ca-"));
  ca = await createMockCa({ now: caNow });
  caPath = writeTemp("ca.pem", ca.certificatePem);
  caSubjectKeyId = extension(caPath, "subjectKeyIdentifier")[1] ?? "";
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("createMockCa", () => {
  it("is a self-signed certificate that openssl accepts as its own trust anchor", () => {
    const result = openssl("verify", "-x509_strict", "-CAfile", caPath, caPath);
    expect(result.stdout).toBe(`${caPath}: OK\n`);
    expect(result.status).toBe(0);
    expect(field(caPath, "-subject")).toBe("subject=C = JP, O = shomei mock environment, CN = shomei Mock JPKI CA");
    expect(field(caPath, "-issuer")).toBe("issuer=C = JP, O = shomei mock environment, CN = shomei Mock JPKI CA");
  });

  it("is an RSA 2048, sha256WithRSAEncryption CA certificate with the CA extensions", () => {
    const text = opensslOk("x509", "-in", caPath, "-noout", "-text");
    expect(text).toContain("Public-Key: (2048 bit)");
    expect(text).toContain("Exponent: 65537 (0x10001)");
    expect(text.match(/Signature Algorithm: (\S+)/g)).toEqual([
      "Signature Algorithm: sha256WithRSAEncryption",
      "Signature Algorithm: sha256WithRSAEncryption",
    ]);
    expect(extension(caPath, "basicConstraints")).toEqual(["X509v3 Basic Constraints: critical", "CA:TRUE, pathlen:0"]);
    expect(extension(caPath, "keyUsage")).toEqual(["X509v3 Key Usage: critical", "Certificate Sign, CRL Sign"]);
    expect(caSubjectKeyId).toMatch(/^[0-9A-F]{2}(:[0-9A-F]{2}){19}$/);
  });

  it("is valid from now for twenty years", () => {
    expect(field(caPath, "-startdate")).toBe(`notBefore=${opensslTime(caNow)}`);
    expect(field(caPath, "-enddate")).toBe(`notAfter=${opensslTime(plusUtcYears(caNow, 20))}`);
  });

  it("hands out its private key as PKCS#8, and the key is the certificate's", () => {
    expect(ca.privateKeyPem.startsWith("-----BEGIN PRIVATE KEY-----\n")).toBe(true);
    const keyPath = writeTemp("ca.key", ca.privateKeyPem);
    const keyModulus = opensslOk("rsa", "-in", keyPath, "-noout", "-modulus").trim();
    expect(keyModulus).toMatch(/^Modulus=[0-9A-F]{512}$/);
    expect(field(caPath, "-modulus")).toBe(keyModulus);
  });

  it("takes a common name, kept as one attribute value even with a comma", async () => {
    const other = await createMockCa({ commonName: "Dev CA, team \"blue\"", now: caNow });
    const path = writeTemp("other-ca.pem", other.certificatePem);
    const parsed = opensslOk("asn1parse", "-in", path);
    expect(parsed.match(/:commonName\n/g)).toHaveLength(2); // subject and issuer
    expect(parsed.match(/UTF8STRING\s+:Dev CA, team "blue"\n/g)).toHaveLength(2);
    expect(openssl("verify", "-CAfile", path, path).stdout).toBe(`${path}: OK\n`);
  });
});

interface KindExpectation {
  kind: CertificateKind;
  keyUsage: string;
  policy: string;
  years: number;
}

const kinds: KindExpectation[] = [
  { kind: "jpki_card_digital_signature", keyUsage: "Digital Signature, Non Repudiation", policy: "1.2.392.200149.8.5.1.1.20", years: 5 },
  { kind: "jpki_card_user_authentication", keyUsage: "Digital Signature", policy: "1.2.392.200149.8.5.1.3.30", years: 5 },
  {
    kind: "jpki_mobile_digital_signature",
    keyUsage: "Digital Signature, Non Repudiation",
    policy: "2.25.306130024785527599992126293160258011149.1.1",
    years: 3,
  },
  {
    kind: "jpki_mobile_user_authentication",
    keyUsage: "Digital Signature",
    policy: "2.25.306130024785527599992126293160258011149.1.3",
    years: 3,
  },
];

describe("issueMockCertificate", () => {
  const notBefore = new Date(Date.now() - 30_500);
  const issued = new Map<CertificateKind, { certificate: IssuedCertificate; path: string }>();

  beforeAll(async () => {
    for (const { kind } of kinds) {
      const certificate = await issueMockCertificate(ca, {
        kind,
        subjectCommonName: `Mock ${kind}`,
        notBefore,
        crlDistributionPointUrl: crlUrl,
      });
      issued.set(kind, { certificate, path: writeTemp(`${kind}.pem`, certificate.certificatePem) });
    }
  });

  function get(kind: CertificateKind): { certificate: IssuedCertificate; path: string } {
    const entry = issued.get(kind);
    if (!entry) throw new Error(`no certificate for ${kind}`);
    return entry;
  }

  it("exports the policy identifiers the tests expect", () => {
    expect([
      jpkiCardDigitalSignaturePolicyOid,
      jpkiCardUserAuthenticationPolicyOid,
      mockJpkiMobileDigitalSignaturePolicyOid,
      mockJpkiMobileUserAuthenticationPolicyOid,
    ]).toEqual(kinds.map((k) => k.policy));
  });

  describe.each(kinds)("$kind", ({ kind, keyUsage, policy, years }) => {
    it("verifies against the mock CA", () => {
      const { path } = get(kind);
      const result = openssl("verify", "-x509_strict", "-CAfile", caPath, path);
      expect(result.stdout).toBe(`${path}: OK\n`);
      expect(result.status).toBe(0);
    });

    it("is RSA 2048 signed with sha256WithRSAEncryption, issued by the CA to the subject", () => {
      const { path } = get(kind);
      const text = opensslOk("x509", "-in", path, "-noout", "-text");
      expect(text).toContain("Version: 3 (0x2)");
      expect(text).toContain("Public-Key: (2048 bit)");
      expect(text.match(/Signature Algorithm: (\S+)/g)).toEqual([
        "Signature Algorithm: sha256WithRSAEncryption",
        "Signature Algorithm: sha256WithRSAEncryption",
      ]);
      expect(field(path, "-issuer")).toBe("issuer=C = JP, O = shomei mock environment, CN = shomei Mock JPKI CA");
      expect(field(path, "-subject")).toBe(`subject=C = JP, CN = Mock ${kind}`);
    });

    it("carries the kind's profile in its extensions", () => {
      const { path } = get(kind);
      expect(extension(path, "keyUsage")).toEqual(["X509v3 Key Usage: critical", keyUsage]);
      expect(extension(path, "certificatePolicies")).toEqual(["X509v3 Certificate Policies: critical", `Policy: ${policy}`]);
      expect(extension(path, "crlDistributionPoints")).toEqual(["X509v3 CRL Distribution Points:", "Full Name:", `URI:${crlUrl}`]);
      expect(extension(path, "basicConstraints")).toEqual(["X509v3 Basic Constraints: critical", "CA:FALSE"]);
      expect(extension(path, "authorityKeyIdentifier")).toEqual(["X509v3 Authority Key Identifier:", caSubjectKeyId]);
      expect(extension(path, "subjectKeyIdentifier")[1]).toMatch(/^[0-9A-F]{2}(:[0-9A-F]{2}){19}$/);
      expect(extension(path, "extendedKeyUsage")).toEqual([]);
    });

    it("reports its serial, fingerprint, validity and kind as written in it", () => {
      const { certificate, path } = get(kind);
      expect(certificate.kind).toBe(kind);
      expect(certificate.serialNumberHex).toMatch(/^[0-9a-f]+$/);
      expect(field(path, "-serial")).toBe(`serial=${certificate.serialNumberHex.toUpperCase()}`);
      expect(certificate.sha256FingerprintHex).toMatch(/^[0-9a-f]{64}$/);
      expect(opensslOk("x509", "-in", path, "-noout", "-fingerprint", "-sha256").trim()).toBe(
        `sha256 Fingerprint=${colonHex(certificate.sha256FingerprintHex)}`,
      );
      expect(certificate.notBefore).toEqual(wholeSeconds(notBefore));
      expect(certificate.notAfter).toEqual(plusUtcYears(wholeSeconds(notBefore), years));
      expect(field(path, "-startdate")).toBe(`notBefore=${opensslTime(certificate.notBefore)}`);
      expect(field(path, "-enddate")).toBe(`notAfter=${opensslTime(certificate.notAfter)}`);
    });

    it("comes with its PKCS#8 private key", () => {
      const { certificate, path } = get(kind);
      expect(certificate.privateKeyPem.startsWith("-----BEGIN PRIVATE KEY-----\n")).toBe(true);
      const keyPath = writeTemp(`${kind}.key`, certificate.privateKeyPem);
      expect(opensslOk("rsa", "-in", keyPath, "-noout", "-modulus").trim()).toBe(field(path, "-modulus"));

      const message = Buffer.from(`signed by the holder of ${kind}`);
      const signature = sign("sha256", message, createPrivateKey(certificate.privateKeyPem));
      const publicKey = new X509Certificate(certificate.certificatePem).publicKey;
      expect(verify("sha256", message, publicKey, signature)).toBe(true);
      expect(verify("sha256", Buffer.from("something else"), publicKey, signature)).toBe(false);
    });
  });

  it("gives every certificate its own random serial of more than 64 bits", () => {
    const serials = kinds.map((k) => get(k.kind).certificate.serialNumberHex);
    expect(new Set(serials).size).toBe(serials.length);
    for (const serial of serials) expect(BigInt(`0x${serial}`) > 2n ** 64n).toBe(true);
    const fingerprints = kinds.map((k) => get(k.kind).certificate.sha256FingerprintHex);
    expect(new Set(fingerprints).size).toBe(fingerprints.length);
  });

  it("uses a given serial number, in canonical form", async () => {
    const certificate = await issueMockCertificate(ca, {
      kind: "jpki_card_user_authentication",
      subjectCommonName: "Given Serial",
      serialNumberHex: "00FF",
      notBefore,
      notAfter: new Date(notBefore.getTime() + 86_400_000),
      crlDistributionPointUrl: crlUrl,
    });
    expect(certificate.serialNumberHex).toBe("ff");
    const path = writeTemp("given-serial.pem", certificate.certificatePem);
    expect(field(path, "-serial")).toBe("serial=FF");
    expect(field(path, "-enddate")).toBe(`notAfter=${opensslTime(wholeSeconds(new Date(notBefore.getTime() + 86_400_000)))}`);
    expect(openssl("verify", "-CAfile", caPath, path).status).toBe(0);
  });

  it("writes a name in kanji as UTF8String", async () => {
    const certificate = await issueMockCertificate(ca, {
      kind: "jpki_card_digital_signature",
      subjectCommonName: "山田 太郎",
      notBefore,
      crlDistributionPointUrl: crlUrl,
    });
    expect(new X509Certificate(certificate.certificatePem).subject).toBe("C=JP\nCN=山田 太郎");
    const path = writeTemp("kanji.pem", certificate.certificatePem);
    expect(opensslOk("asn1parse", "-in", path)).toMatch(/UTF8STRING\s+:山田 太郎/);
  });

  it("ends a default validity no later than the CA certificate", async () => {
    const oldCa = await createMockCa({ now: new Date(Date.now() - 19 * 365 * 86_400_000) });
    const caNotAfter = new Date(new X509Certificate(oldCa.certificatePem).validTo);
    const certificate = await issueMockCertificate(oldCa, {
      kind: "jpki_card_digital_signature",
      subjectCommonName: "Near CA expiry",
      notBefore,
      crlDistributionPointUrl: crlUrl,
    });
    expect(certificate.notAfter).toEqual(caNotAfter);
  });

  it("refuses input it cannot issue from, with the field at fault", async () => {
    const base = { kind: "jpki_card_digital_signature" as const, subjectCommonName: "X", notBefore, crlDistributionPointUrl: crlUrl };
    await expectInvalidField(issueMockCertificate(ca, { ...base, serialNumberHex: "xyz" }), "serial_number_hex");
    await expectInvalidField(issueMockCertificate(ca, { ...base, serialNumberHex: "0000" }), "serial_number_hex");
    await expectInvalidField(issueMockCertificate(ca, { ...base, subjectCommonName: "   " }), "subject_common_name");
    await expectInvalidField(issueMockCertificate(ca, { ...base, subjectCommonName: "x".repeat(65) }), "subject_common_name");
    await expectInvalidField(issueMockCertificate(ca, { ...base, crlDistributionPointUrl: "not a url" }), "crl_distribution_point_url");
    await expectInvalidField(issueMockCertificate(ca, { ...base, notAfter: notBefore }), "not_after");
    await expectInvalidField(issueMockCertificate(ca, { ...base, notBefore: new Date(Number.NaN) }), "not_before");
    await expectInvalidField(issueMockCertificate(ca, { ...base, kind: "x509_server" as CertificateKind }), "kind");
  });

  it("refuses CA material whose key is not the certificate's, or that is not a CA", async () => {
    const leaf = get("jpki_card_digital_signature").certificate;
    const input = { kind: "jpki_card_digital_signature" as const, subjectCommonName: "X", notBefore, crlDistributionPointUrl: crlUrl };
    await expect(issueMockCertificate({ certificatePem: ca.certificatePem, privateKeyPem: leaf.privateKeyPem }, input)).rejects.toThrow(
      "mock CA private key does not belong to the mock CA certificate",
    );
    await expect(issueMockCertificate({ certificatePem: leaf.certificatePem, privateKeyPem: leaf.privateKeyPem }, input)).rejects.toThrow(
      "not a CA certificate",
    );
  });
});

describe("normalizeSerialNumberHex", () => {
  it("gives lowercase hex of the positive integer, even length, no leading zero octets", () => {
    expect(normalizeSerialNumberHex("0A1B")).toBe("0a1b");
    expect(normalizeSerialNumberHex("000a1b")).toBe("0a1b");
    expect(normalizeSerialNumberHex("abc")).toBe("0abc");
    expect(normalizeSerialNumberHex("80")).toBe("80");
  });

  it("refuses zero, non-hex and more than 20 octets (counting DER's sign octet)", () => {
    expect(normalizeSerialNumberHex("0")).toBeUndefined();
    expect(normalizeSerialNumberHex("")).toBeUndefined();
    expect(normalizeSerialNumberHex("0x12")).toBeUndefined();
    expect(normalizeSerialNumberHex("-12")).toBeUndefined();
    expect(normalizeSerialNumberHex("7f" + "ff".repeat(19))).toBe("7f" + "ff".repeat(19));
    expect(normalizeSerialNumberHex("80" + "00".repeat(19))).toBeUndefined();
    expect(normalizeSerialNumberHex("01" + "00".repeat(20))).toBeUndefined();
  });
});

/** Parses the "Revoked Certificates:" part of `openssl crl -text`. */
function revokedEntries(text: string): { serial: string; revocationDate: string; reason: string | undefined }[] {
  const section = text.split("Revoked Certificates:")[1]?.split("Signature Algorithm:")[0] ?? "";
  return section
    .split("Serial Number: ")
    .slice(1)
    .map((block) => {
      const lines = block.split("\n").map((line) => line.trim());
      const reasonIndex = lines.indexOf("X509v3 CRL Reason Code:");
      return {
        serial: lines[0] ?? "",
        revocationDate: (lines.find((line) => line.startsWith("Revocation Date: ")) ?? "").slice("Revocation Date: ".length),
        reason: reasonIndex >= 0 ? lines[reasonIndex + 1] : undefined,
      };
    });
}

describe("createMockCrl", () => {
  const thisUpdate = wholeSeconds(new Date(Date.now() - 60_000));
  const nextUpdate = new Date(thisUpdate.getTime() + 86_400_000);
  let revokedLeaf: IssuedCertificate;
  let goodLeaf: IssuedCertificate;
  let crlPath: string;
  let crlText: string;
  const revokedAt = new Date(thisUpdate.getTime() - 3_600_000 + 250);

  beforeAll(async () => {
    const input = { subjectCommonName: "CRL subject", notBefore: new Date(Date.now() - 120_000), crlDistributionPointUrl: crlUrl };
    revokedLeaf = await issueMockCertificate(ca, { ...input, kind: "jpki_card_digital_signature" });
    goodLeaf = await issueMockCertificate(ca, { ...input, kind: "jpki_mobile_user_authentication" });
    const der = await createMockCrl(ca, {
      entries: [
        { serialNumberHex: revokedLeaf.serialNumberHex, revokedAt, reason: "keyCompromise" },
        { serialNumberHex: "0A", revokedAt: thisUpdate, reason: "unspecified" },
        { serialNumberHex: "8001", revokedAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)), reason: "certificateHold" },
      ],
      thisUpdate,
      nextUpdate,
      crlNumber: 42,
    });
    expect(der).toBeInstanceOf(Uint8Array);
    expect(der[0]).toBe(0x30);
    crlPath = writeTemp("crl.der", der);
    crlText = opensslOk("crl", "-inform", "DER", "-in", crlPath, "-noout", "-text");
  });

  it("is signed by the mock CA", () => {
    const result = openssl("crl", "-inform", "DER", "-in", crlPath, "-CAfile", caPath, "-noout");
    expect(result.status).toBe(0);
    expect(result.stderr).toContain("verify OK");
  });

  it("is a v2 CRL with its dates, CRL number and authority key identifier", () => {
    expect(crlText).toContain("Version 2 (0x1)");
    expect(crlText.match(/Signature Algorithm: (\S+)/g)).toEqual([
      "Signature Algorithm: sha256WithRSAEncryption",
      "Signature Algorithm: sha256WithRSAEncryption",
    ]);
    expect(crlText).toContain("Issuer: C = JP, O = shomei mock environment, CN = shomei Mock JPKI CA");
    expect(crlText).toContain(`Last Update: ${opensslTime(thisUpdate)}\n`);
    expect(crlText).toContain(`Next Update: ${opensslTime(nextUpdate)}\n`);
    expect(crlText).toMatch(/X509v3 CRL Number: *\n\s+42\n/);
    expect(crlText).toMatch(new RegExp(`X509v3 Authority Key Identifier: *\\n\\s+${caSubjectKeyId}\\n`));
  });

  it("lists each serial with its revocation date and reason, unspecified written out too", () => {
    expect(revokedEntries(crlText)).toEqual([
      { serial: revokedLeaf.serialNumberHex.toUpperCase(), revocationDate: opensslTime(wholeSeconds(revokedAt)), reason: "Key Compromise" },
      { serial: "0A", revocationDate: opensslTime(thisUpdate), reason: "Unspecified" },
      { serial: "8001", revocationDate: "Jan  2 03:04:05 2026 GMT", reason: "Certificate Hold" },
    ]);
  });

  it("revokes the listed certificate and only it, as openssl's CRL check sees it", () => {
    const crlPemPath = writeTemp("crl.pem", opensslOk("crl", "-inform", "DER", "-in", crlPath));
    const revokedPath = writeTemp("revoked.pem", revokedLeaf.certificatePem);
    const goodPath = writeTemp("good.pem", goodLeaf.certificatePem);
    const revoked = openssl("verify", "-crl_check", "-CAfile", caPath, "-CRLfile", crlPemPath, revokedPath);
    expect(revoked.status).not.toBe(0);
    expect(revoked.stdout + revoked.stderr).toContain("error 23 at 0 depth lookup: certificate revoked");
    const good = openssl("verify", "-crl_check", "-CAfile", caPath, "-CRLfile", crlPemPath, goodPath);
    expect(good.stdout).toBe(`${goodPath}: OK\n`);
    expect(good.status).toBe(0);
  });

  it("writes every RFC 5280 reason with its own code", async () => {
    expect(revocationReasons.map((reason) => revocationReasonForCode(revocationReasonCodeOf(reason)))).toEqual(revocationReasons);
    const der = await createMockCrl(ca, {
      entries: revocationReasons.map((reason, index) => ({ serialNumberHex: (index + 1).toString(16), revokedAt: thisUpdate, reason })),
      thisUpdate,
      nextUpdate,
      crlNumber: 43,
    });
    const path = writeTemp("all-reasons.der", der);
    expect(openssl("crl", "-inform", "DER", "-in", path, "-CAfile", caPath, "-noout").stderr).toContain("verify OK");
    const entries = revokedEntries(opensslOk("crl", "-inform", "DER", "-in", path, "-noout", "-text"));
    expect(entries.map((e) => [e.serial, e.reason])).toEqual([
      ["01", "Unspecified"],
      ["02", "Key Compromise"],
      ["03", "CA Compromise"],
      ["04", "Affiliation Changed"],
      ["05", "Superseded"],
      ["06", "Cessation Of Operation"],
      ["07", "Certificate Hold"],
      ["08", "Remove From CRL"],
      ["09", "Privilege Withdrawn"],
      ["0A", "AA Compromise"],
    ]);
    const codes = opensslOk("asn1parse", "-inform", "DER", "-in", path)
      .split("\n")
      .filter((line) => line.includes("[HEX DUMP]:0A01"))
      .map((line) => line.slice(line.indexOf("[HEX DUMP]:") + "[HEX DUMP]:".length));
    expect(codes).toEqual(["0A0100", "0A0101", "0A0102", "0A0103", "0A0104", "0A0105", "0A0106", "0A0108", "0A0109", "0A010A"]);
  });

  it("makes a valid empty CRL", async () => {
    const der = await createMockCrl(ca, { entries: [], thisUpdate, nextUpdate, crlNumber: 0 });
    const path = writeTemp("empty.der", der);
    const result = openssl("crl", "-inform", "DER", "-in", path, "-CAfile", caPath, "-noout");
    expect(result.status).toBe(0);
    expect(result.stderr).toContain("verify OK");
    const text = opensslOk("crl", "-inform", "DER", "-in", path, "-noout", "-text");
    expect(text).toContain("No Revoked Certificates.");
    expect(text).toMatch(/X509v3 CRL Number: *\n\s+0\n/);
  });

  it("writes times after 2049 as GeneralizedTime", async () => {
    const later = new Date(Date.UTC(2051, 5, 7, 8, 9, 10));
    const der = await createMockCrl(ca, { entries: [], thisUpdate, nextUpdate: later, crlNumber: 1 });
    const path = writeTemp("late.der", der);
    expect(opensslOk("crl", "-inform", "DER", "-in", path, "-noout", "-nextupdate").trim()).toBe("nextUpdate=Jun  7 08:09:10 2051 GMT");
    expect(opensslOk("asn1parse", "-inform", "DER", "-in", path)).toContain("GENERALIZEDTIME   :20510607080910Z");
  });

  it("refuses input it cannot encode, with the field at fault", async () => {
    const base = { entries: [], thisUpdate, nextUpdate, crlNumber: 1 };
    const entry = (serialNumberHex: string) => ({ serialNumberHex, revokedAt: thisUpdate, reason: "superseded" as RevocationReason });
    await expectInvalidField(createMockCrl(ca, { ...base, entries: [entry("0a"), entry("000A")] }), "entries");
    await expectInvalidField(createMockCrl(ca, { ...base, entries: [entry("zz")] }), "entries");
    await expectInvalidField(createMockCrl(ca, { ...base, entries: [{ ...entry("01"), reason: "reserved" as RevocationReason }] }), "entries");
    await expectInvalidField(createMockCrl(ca, { ...base, nextUpdate: thisUpdate }), "next_update");
    await expectInvalidField(createMockCrl(ca, { ...base, crlNumber: -1 }), "crl_number");
    await expectInvalidField(createMockCrl(ca, { ...base, crlNumber: 1.5 }), "crl_number");
  });
});

function revocationReasonCodeOf(reason: RevocationReason): number {
  const codes: Record<RevocationReason, number> = {
    unspecified: 0,
    keyCompromise: 1,
    cACompromise: 2,
    affiliationChanged: 3,
    superseded: 4,
    cessationOfOperation: 5,
    certificateHold: 6,
    removeFromCRL: 8,
    privilegeWithdrawn: 9,
    aACompromise: 10,
  };
  return codes[reason];
}
