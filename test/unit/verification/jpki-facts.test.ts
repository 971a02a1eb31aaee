import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JpkiFactsError, jpkiFactEntries, readJpkiFacts, type JpkiFacts } from "../../../src/domain/certificates/jpki-facts.ts";
import { DerError, encodeOid, encodeTlv } from "../../../src/domain/certificates/x509/der.ts";
import { parseCertificate } from "../../../src/domain/certificates/x509/parsed-certificate.ts";
import { encodeOtherNames, readOtherNames } from "../../../src/domain/certificates/x509/subject-alt-name.ts";
import { DomainError } from "../../../src/domain/errors.ts";
import { createMockCa, issueMockCertificate, mockJpkiMobileDigitalSignaturePolicyOid, type MockCaMaterial } from "../../../src/domain/mock-ca/index.ts";
import { completeFacts } from "../../../src/domain/mock/mock-person.ts";

let dir: string;
let ca: MockCaMaterial;

function openssl(...args: string[]): string {
  const result = spawnSync("openssl", args, { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`openssl ${args.join(" ")}: ${result.stderr}`);
  return result.stdout + result.stderr;
}

const facts: JpkiFacts = {
  name: "山田　太郎",
  nameSubstituteCharacters: "00100",
  dateOfBirth: "319851231",
  gender: "male",
  address: "大阪府大阪市北区中之島一丁目三番二十号",
  addressSubstituteCharacters: "0".repeat(19),
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "shomei-jpki-facts-"));
  ca = await createMockCa({ now: new Date(Date.now() - 60_000) });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("reading the basic four facts", () => {
  it("reads back exactly what was written, whatever the order of the entries", () => {
    const entries = jpkiFactEntries(facts);
    expect(readJpkiFacts(readOtherNames(encodeOtherNames(entries)))).toEqual(facts);
    expect(readJpkiFacts(readOtherNames(encodeOtherNames([...entries].reverse())))).toEqual(facts);
  });

  it("reads a certificate openssl wrote with the J-LIS otherName entries (UTF8String values)", () => {
    const key = join(dir, "openssl-leaf.key");
    const config = join(dir, "openssl-leaf.cnf");
    writeFileSync(
      config,
      [
        "[req]",
        "distinguished_name = dn",
        "prompt = no",
        "x509_extensions = ext",
        "[dn]",
        "CN = openssl leaf",
        "[ext]",
        "subjectAltName = @san",
        "[san]",
        `otherName.1 = 1.2.392.200149.8.5.5.1;FORMAT:UTF8,UTF8:${facts.name}`,
        `otherName.2 = 1.2.392.200149.8.5.5.4;FORMAT:UTF8,UTF8:${facts.dateOfBirth}`,
        "otherName.3 = 1.2.392.200149.8.5.5.3;FORMAT:UTF8,UTF8:1",
        `otherName.4 = 1.2.392.200149.8.5.5.5;FORMAT:UTF8,UTF8:${facts.address}`,
        `otherName.5 = 1.2.392.200149.8.5.5.2;FORMAT:UTF8,UTF8:${facts.nameSubstituteCharacters}`,
        `otherName.6 = 1.2.392.200149.8.5.5.6;FORMAT:UTF8,UTF8:${facts.addressSubstituteCharacters}`,
        "email.1 = holder@example.com",
      ].join("\n"),
    );
    const pem = join(dir, "openssl-leaf.pem");
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", pem, "-days", "1", "-config", config, "-utf8");
    const der = Buffer.from(readFileSync(pem, "utf8").replace(/-----[^-]+-----|\s/g, ""), "base64");
    expect(readJpkiFacts(parseCertificate(der).otherNames)).toEqual(facts);
  });

  it("a certificate without the entries has empty facts; an unknown gender code is no gender", () => {
    expect(readJpkiFacts([])).toEqual({
      name: "", nameSubstituteCharacters: "", dateOfBirth: "", gender: undefined, address: "", addressSubstituteCharacters: "",
    });
    expect(readJpkiFacts([{ typeId: "1.2.392.200149.8.5.5.3", value: "9" }]).gender).toBeUndefined();
    expect(readJpkiFacts([{ typeId: "1.2.392.200149.8.5.5.3", value: "3" }]).gender).toBe("not_known");
  });

  it("a fact given twice is refused; entries outside the arc are ignored", () => {
    const twice = [{ typeId: "1.2.392.200149.8.5.5.1", value: "A" }, { typeId: "1.2.392.200149.8.5.5.1", value: "B" }];
    expect(() => readJpkiFacts(twice)).toThrow(JpkiFactsError);
    expect(readJpkiFacts([{ typeId: "1.2.392.200149.8.5.51", value: "x" }, { typeId: "1.3.6.1.4.1.311.20.2.3", value: "upn" }]).name).toBe("");
  });

  it("malformed subjectAltName DER is a DerError, never a crash", () => {
    const otherName = (value: Uint8Array) => encodeTlv(0x30, encodeTlv(0xa0, encodeOid("1.2.392.200149.8.5.5.1"), encodeTlv(0xa0, value)));
    expect(() => readOtherNames(Uint8Array.of(0x30, 0x05, 0xa0))).toThrow(DerError);
    expect(() => readOtherNames(otherName(encodeTlv(0x02, Uint8Array.of(1))))).toThrow(DerError);
    expect(() => readOtherNames(otherName(encodeTlv(0x0c, Uint8Array.of(0xff, 0xfe))))).toThrow(DerError);
    // BMPString is a character string too.
    expect(readOtherNames(otherName(encodeTlv(0x1e, Uint8Array.of(0x5c, 0x71, 0x75, 0x30)))) ).toEqual([{ typeId: "1.2.392.200149.8.5.5.1", value: "山田" }]);
  });
});

describe("the mock CA's signature certificates, judged by openssl", () => {
  it("carry the facts as otherName entries openssl prints as on a real card, an OCSP URL, and verify against the CA", async () => {
    const written = completeFacts({ name: "見本　一郎", dateOfBirth: "520200101", gender: "male" });
    const leaf = await issueMockCertificate(ca, {
      kind: "jpki_card_digital_signature",
      subjectCommonName: "mock",
      notBefore: new Date(Date.now() - 60_000),
      crlDistributionPointUrl: "http://127.0.0.1:9/mock/ca.crl",
      ocspUrl: "http://127.0.0.1:9/mock/ocsp",
      facts: written,
      keyAlgorithm: "ec_p256",
    });
    const leafPath = join(dir, "mock-leaf.pem");
    const caPath = join(dir, "mock-ca.pem");
    writeFileSync(leafPath, leaf.certificatePem);
    writeFileSync(caPath, ca.certificatePem);
    const text = openssl("x509", "-in", leafPath, "-noout", "-text");
    expect(text).toContain(
      `othername: 1.2.392.200149.8.5.5.1::${written.name}, othername: 1.2.392.200149.8.5.5.4::520200101, othername: 1.2.392.200149.8.5.5.3::1, ` +
        `othername: 1.2.392.200149.8.5.5.5::${written.address}, othername: 1.2.392.200149.8.5.5.2::00000, ` +
        `othername: 1.2.392.200149.8.5.5.6::${"0".repeat([...written.address].length)}`,
    );
    expect(text).toContain("OCSP - URI:http://127.0.0.1:9/mock/ocsp");
    expect(text).toContain("URI:http://127.0.0.1:9/mock/ca.crl");
    expect(text).toContain("ASN1 OID: prime256v1");
    expect(text).toContain("Policy: 1.2.392.200149.8.5.1.1.20");
    expect(openssl("verify", "-CAfile", caPath, leafPath)).toContain(`${leafPath}: OK`);

    const der = Buffer.from(leaf.certificatePem.replace(/-----[^-]+-----|\s/g, ""), "base64");
    expect(readJpkiFacts(parseCertificate(der).otherNames)).toEqual(written);
  });

  it("user authentication certificates carry no facts, and the mock refuses to write some", async () => {
    const leaf = await issueMockCertificate(ca, {
      kind: "jpki_card_user_authentication",
      subjectCommonName: "mock",
      notBefore: new Date(Date.now() - 60_000),
      crlDistributionPointUrl: "http://127.0.0.1:9/mock/ca.crl",
    });
    const leafPath = join(dir, "mock-auth.pem");
    writeFileSync(leafPath, leaf.certificatePem);
    expect(openssl("x509", "-in", leafPath, "-noout", "-text")).not.toContain("Subject Alternative Name");
    await expect(
      issueMockCertificate(ca, {
        kind: "jpki_card_user_authentication",
        subjectCommonName: "mock",
        notBefore: new Date(),
        crlDistributionPointUrl: "http://127.0.0.1:9/mock/ca.crl",
        facts,
      }),
    ).rejects.toMatchObject({ code: "invalid_field", field: "facts" });
  });
});

describe("parseCertificate", () => {
  it("reads a policy OID with a 128-bit arc (the mock profile's 2.25.<uuid>) digit for digit", async () => {
    const leaf = await issueMockCertificate(ca, {
      kind: "jpki_mobile_digital_signature",
      subjectCommonName: "mock",
      notBefore: new Date(Date.now() - 60_000),
      crlDistributionPointUrl: "http://127.0.0.1:9/mock/ca.crl",
    });
    const leafPath = join(dir, "mobile.pem");
    writeFileSync(leafPath, leaf.certificatePem);
    expect(openssl("x509", "-in", leafPath, "-noout", "-ext", "certificatePolicies")).toContain(`Policy: ${mockJpkiMobileDigitalSignaturePolicyOid}`);
    expect(parseCertificate(Buffer.from(leaf.certificatePem.replace(/-----[^-]+-----|\s/g, ""), "base64")).policyOids).toEqual([mockJpkiMobileDigitalSignaturePolicyOid]);
  });

  it("refuses what is not exactly one DER certificate, as invalid_field certificate", () => {
    for (const bytes of [new Uint8Array(0), Buffer.from("not a certificate"), Buffer.from(ca.certificatePem)]) {
      let error: unknown;
      try {
        parseCertificate(bytes);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(DomainError);
      expect(error).toMatchObject({ code: "invalid_field", field: "certificate" });
    }
    const der = Buffer.from(ca.certificatePem.replace(/-----[^-]+-----|\s/g, ""), "base64");
    expect(() => parseCertificate(Buffer.concat([der, Buffer.of(0)]))).toThrow(DomainError);
    expect(parseCertificate(der).isCa).toBe(true);
  });
});
