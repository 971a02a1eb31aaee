import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCertificate, type KeyUsage } from "../../src/domain/certificates/x509/parsed-certificate.ts";
import { RecentlyParsed } from "../../src/domain/certificates/x509/recently-parsed.ts";
import { DomainError } from "../../src/domain/errors.ts";
import { certificateKinds, createMockCa, issueMockCertificate, type MockCaMaterial } from "../../src/domain/mock-ca/index.ts";
import { x509 } from "../../src/domain/mock-ca/x509-runtime.ts";
import { completeFacts } from "../../src/domain/mock/mock-person.ts";

const keyUsageNames: KeyUsage[] = ["digitalSignature", "nonRepudiation", "keyEncipherment", "dataEncipherment", "keyAgreement", "keyCertSign", "cRLSign", "encipherOnly", "decipherOnly"];

let dir: string;
let ca: MockCaMaterial;
const pemToDer = (pem: string) => new Uint8Array(Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ""), "base64"));

function openssl(...args: string[]): void {
  const result = spawnSync("openssl", args, { encoding: "utf8", cwd: dir });
  if (result.status !== 0) throw new Error(`openssl ${args.join(" ")}: ${result.stderr}`);
}

/** What @peculiar/x509, a schema-driven parser, reads from the same bytes: the oracle for the project's own reader. */
function schemaReading(der: Uint8Array) {
  const cert = new x509.X509Certificate(der);
  const keyUsage = cert.getExtension(x509.KeyUsagesExtension);
  const crlDp = cert.getExtension(x509.CRLDistributionPointsExtension);
  const aia = cert.getExtension(x509.AuthorityInfoAccessExtension);
  return {
    issuer: cert.issuer,
    notBefore: cert.notBefore.getTime(),
    notAfter: cert.notAfter.getTime(),
    isCa: cert.getExtension(x509.BasicConstraintsExtension)?.ca ?? false,
    keyUsages: keyUsage ? keyUsageNames.filter((name) => keyUsage.usages & x509.KeyUsageFlags[name]) : undefined,
    crlDistributionPoints: (crlDp?.distributionPoints ?? []).flatMap((p) => (p.distributionPoint?.fullName ?? []).flatMap((n) => (n.uniformResourceIdentifier ? [n.uniformResourceIdentifier] : []))),
    ocspUrls: (aia?.ocsp ?? []).flatMap((n) => (n.type === "url" ? [n.value] : [])),
  };
}

function ownReading(der: Uint8Array) {
  const parsed = parseCertificate(der);
  return {
    issuer: parsed.issuer,
    notBefore: parsed.notBefore,
    notAfter: parsed.notAfter,
    isCa: parsed.isCa,
    keyUsages: parsed.keyUsages,
    crlDistributionPoints: parsed.crlDistributionPoints,
    ocspUrls: parsed.ocspUrls,
  };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "shomei-parsed-certificate-"));
  ca = await createMockCa({ now: new Date(Date.now() - 60_000) });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("parseCertificate reads what a schema-driven parser reads", () => {
  it("for every kind of mock certificate and the mock CA", async () => {
    const ders = [pemToDer(ca.certificatePem)];
    for (const kind of certificateKinds) {
      const issued = await issueMockCertificate(ca, {
        kind,
        subjectCommonName: "Mock, \"Quoted\" + Person ",
        notBefore: new Date(Date.now() - 60_000),
        crlDistributionPointUrl: "http://127.0.0.1:9/mock/ca.crl",
        ocspUrl: "http://127.0.0.1:9/mock/ocsp",
        ...(kind.endsWith("digital_signature") ? { facts: completeFacts({}) } : {}),
      });
      ders.push(pemToDer(issued.certificatePem));
    }
    for (const der of ders) expect(ownReading(der)).toEqual(schemaReading(der));
  });

  it("for an openssl certificate with several distribution points, a multi-valued name and a validity past 2049", () => {
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "20000", "-utf8",
      "-subj", "/C=JP/O=試験 組織/OU=a+CN=Multi Valued/CN=Test CA #1", "-multivalue-rdn",
      "-addext", "basicConstraints=critical,CA:TRUE,pathlen:0",
      "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature,decipherOnly",
      "-addext", "crlDistributionPoints=URI:http://a.example/1.crl,URI:http://b.example/2.crl",
      "-addext", "authorityInfoAccess=OCSP;URI:http://ocsp.example/,caIssuers;URI:http://ca.example/ca.cer");
    openssl("x509", "-in", "ca.pem", "-outform", "DER", "-out", "ca.der");
    const der = new Uint8Array(readFileSync(join(dir, "ca.der")));
    const own = ownReading(der);
    expect(own).toEqual(schemaReading(der));
    expect(own.notAfter).toBeGreaterThan(Date.UTC(2050, 0, 1));
    expect(own.crlDistributionPoints).toEqual(["http://a.example/1.crl", "http://b.example/2.crl"]);
    expect(own.keyUsages).toEqual(["digitalSignature", "keyCertSign", "cRLSign", "decipherOnly"]);
  });
});

describe("a damaged certificate", () => {
  let der: Uint8Array;
  beforeAll(async () => {
    const issued = await issueMockCertificate(ca, {
      kind: "jpki_card_digital_signature",
      subjectCommonName: "mutated",
      notBefore: new Date(Date.now() - 60_000),
      crlDistributionPointUrl: "http://127.0.0.1:9/mock/ca.crl",
      ocspUrl: "http://127.0.0.1:9/mock/ocsp",
      facts: completeFacts({}),
    });
    der = pemToDer(issued.certificatePem);
  });

  function outcome(bytes: Uint8Array): "parsed" | string {
    try {
      parseCertificate(bytes);
      return "parsed";
    } catch (error) {
      if (!(error instanceof DomainError)) throw new Error(`not a domain error: ${(error as Error).stack}`);
      expect(error).toMatchObject({ code: "invalid_field", field: "certificate" });
      return error.message;
    }
  }

  it("with a malformed subjectAltName is an invalid certificate field, naming the extension", () => {
    const hex = Buffer.from(der).toString("hex");
    expect(hex).toContain("a0110c0f");
    const damaged = new Uint8Array(Buffer.from(hex.replace("a0110c0f", "a0910c0f"), "hex"));
    expect(outcome(damaged)).toMatch(/certificate is damaged: its subjectAltName extension is malformed/);
  });

  it("is, whichever byte is changed and however, either read or refused as invalid_field certificate", () => {
    const messages = new Set<string>();
    for (let index = 0; index < der.length; index++) {
      for (const change of [(b: number) => b ^ 0x80, (b: number) => b ^ 0x01, () => 0x00, () => 0xff]) {
        const copy = der.slice();
        copy[index] = change(copy[index]!);
        if (copy[index] === der[index]) continue;
        messages.add(outcome(copy).replace(/ \(.*\)$/, ""));
      }
    }
    // The sweep reaches the extensions, the key and the validity, not only the outer structure.
    expect([...messages].filter((m) => m.startsWith("certificate is damaged")).length).toBeGreaterThanOrEqual(4);
    expect(messages).toContain("parsed");
  });
});

describe("parsed certificates are remembered", () => {
  it("by fingerprint: the same bytes give the same reading without a second parse", () => {
    const der = pemToDer(ca.certificatePem);
    expect(parseCertificate(der.slice())).toBe(parseCertificate(der.slice()));
    expect(Object.isFrozen(parseCertificate(der))).toBe(true);
  });

  it("in a bounded map that forgets the least recently used first", () => {
    const recent = new RecentlyParsed<number>(2);
    recent.set("a", 1);
    recent.set("b", 2);
    expect(recent.get("a")).toBe(1);
    recent.set("c", 3);
    expect([recent.get("a"), recent.get("b"), recent.get("c"), recent.size]).toEqual([1, undefined, 3, 2]);
  });
});
