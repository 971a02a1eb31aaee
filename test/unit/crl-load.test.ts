import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCrl, maxCrlBytes } from "../../src/adapters/crl/load-crl.ts";
import { CrlRejectedError, type CrlRejection, type VerifiedCrl } from "../../src/domain/certificates/crl/verified-crl.ts";
import { OpensslCrlCa, opensslCrlText } from "../support/openssl-crl.ts";

/** Lists made by `openssl ca`, read back by loadCrl and checked against `openssl crl -text`. */

let dir: string;
let ca: OpensslCrlCa;

async function rejection(der: Uint8Array, issuer: Uint8Array = ca.certificateDer): Promise<{ rejection: CrlRejection; message: string }> {
  try {
    await loadCrl(der, issuer);
  } catch (error) {
    if (error instanceof CrlRejectedError) return { rejection: error.rejection, message: error.message };
    throw error;
  }
  throw new Error("the list was accepted");
}

const longSerial = "7f0102030405060708090a0b0c0d0e0f";
const listed: [serial: string, reason: string | undefined][] = [
  ["01", "keyCompromise"],
  ["0203", "affiliationChanged"],
  ["80ff", "certificateHold"],
  [longSerial, "superseded"],
  ["0a0b0c0d0e0f1011", undefined],
  ["123456789a", "cessationOfOperation"],
];

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "shomei-crl-"));
  ca = new OpensslCrlCa(dir, "issuer");
  for (const [serial, reason] of listed) ca.revoke(serial, reason);
  ca.setRevocationDate("123456789a", "250203040506Z");
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a list made by openssl ca", () => {
  let der: Buffer;
  let crl: VerifiedCrl;

  beforeAll(async () => {
    // The number set here: other tests' lists, made before or after, move the CA's count on.
    der = ca.gencrl({ crlNumber: 0x1000n, extensions: ["authorityKeyIdentifier = keyid:always", "issuingDistributionPoint = critical, @idp"] });
    crl = await loadCrl(der, ca.certificateDer);
  });

  it("finds every entry openssl lists, with its reason and revocation date", () => {
    const oracle = opensslCrlText(der, dir);
    expect(oracle.entries).toHaveLength(listed.length);
    for (const entry of oracle.entries) {
      expect(crl.lookup(entry.serialHex), entry.serialHex).toEqual({ revokedAt: entry.revokedAt, reason: entry.reason });
    }
    expect(crl.lookup("01")?.reason).toBe(1);
    expect(crl.lookup("0203")?.reason).toBe(3);
    expect(crl.lookup("80ff")?.reason).toBe(6);
    expect(crl.lookup(longSerial)?.reason).toBe(4);
    expect(crl.lookup("0a0b0c0d0e0f1011")?.reason).toBe(0);
    expect(crl.lookup("123456789a")).toEqual({ revokedAt: Date.UTC(2025, 1, 3, 4, 5, 6), reason: 5 });
    expect(crl.entries).toBe(listed.length);
  });

  it("does not find serials it does not list, neighbours included", () => {
    for (const serial of ["02", "0202", "0204", "80fe", "8100", "7f0102030405060708090a0b0c0d0e10", "0a0b0c0d0e0f1012", "0102", "ff"]) {
      expect(crl.lookup(serial), serial).toBeUndefined();
    }
  });

  it("reads the dates, the CRL number, the distribution point and the hash of the list", () => {
    const oracle = opensslCrlText(der, dir);
    expect(crl.thisUpdate).toBe(oracle.thisUpdate);
    expect(crl.nextUpdate).toBe(oracle.nextUpdate);
    expect(crl.crlNumber).toBe(oracle.crlNumber);
    expect(crl.crlNumber).toBe(0x1000n);
    expect(crl.issuingDistributionPoint).toEqual({
      uris: ["http://crl.shomei.test/a.crl", "http://crl.shomei.test/b.crl"],
      onlyContainsUserCerts: false,
      onlyContainsCACerts: false,
      onlySomeReasons: false,
      indirectCRL: false,
      onlyContainsAttributeCerts: false,
    });
    expect(crl.sha256).toBe(createHash("sha256").update(der).digest("hex"));
    // Short serials take 9 or 13 bytes, the 16-octet one 21; each of the three tables has an 8-byte directory.
    expect(crl.indexBytes).toBe(9 * 3 + 13 * 2 + 21 + 3 * 8);
  });

  it("refuses a serial that is not in canonical form instead of missing it", () => {
    for (const serial of ["1", "0001", "0A", "", "zz", "01 ", "00" + longSerial]) {
      expect(() => crl.lookup(serial), serial).toThrow(TypeError);
    }
  });
});

describe("what a list must be to be used", () => {
  it("refuses a list whose every byte, changed, would say something else", async () => {
    const der = ca.gencrl({ extensions: ["authorityKeyIdentifier = keyid:always"] });
    const seen = new Set<CrlRejection>();
    for (let offset = 0; offset < der.length; offset++) {
      for (const mask of [0x01, 0x80]) {
        const tampered = Buffer.from(der);
        tampered[offset]! ^= mask;
        const { rejection: reason } = await rejection(tampered);
        expect(["malformed", "signature_invalid", "issuer_mismatch", "unknown_critical_extension"], `offset ${offset} mask ${mask}`).toContain(reason);
        seen.add(reason);
      }
    }
    expect([...seen].sort()).toEqual(["issuer_mismatch", "malformed", "signature_invalid"]);
  });

  it("says a changed revocation date or serial breaks the signature", async () => {
    const der = ca.gencrl();
    const at = der.indexOf(Buffer.from("0203", "hex"));
    const tampered = Buffer.from(der);
    tampered[at + 1] = 0x04;
    expect(await rejection(tampered)).toEqual({ rejection: "signature_invalid", message: "the signature does not verify with the issuer's key" });
  });

  it("refuses every truncation with CrlRejectedError, never another error", async () => {
    const der = ca.gencrl({ extensions: ["authorityKeyIdentifier = keyid:always", "issuingDistributionPoint = critical, @idp"] });
    for (let length = 0; length < der.length; length++) {
      expect((await rejection(der.subarray(0, length))).rejection, `length ${length}`).toBe("malformed");
    }
    const longer = Buffer.concat([der, Buffer.of(0)]);
    expect(await rejection(longer)).toEqual({ rejection: "malformed", message: "CertificateList: trailing data after the list" });
  });

  it("refuses a list signed by another key under the same name", async () => {
    const impostor = new OpensslCrlCa(dir, "impostor", { subject: "/C=JP/O=shomei test/CN=issuer" });
    impostor.revoke("01", "keyCompromise");
    expect(await rejection(impostor.gencrl())).toEqual({ rejection: "signature_invalid", message: "the signature does not verify with the issuer's key" });
  });

  it("refuses a list from another issuer name", async () => {
    const other = new OpensslCrlCa(dir, "other");
    expect(await rejection(other.gencrl())).toEqual({ rejection: "issuer_mismatch", message: "the list's issuer name is not the issuer certificate's subject" });
  });

  it("refuses a list from an issuer whose keyUsage does not allow cRLSign, and accepts one without keyUsage", async () => {
    const signer = new OpensslCrlCa(dir, "no-crl-sign", { keyUsage: "critical,keyCertSign,digitalSignature" });
    expect((await rejection(signer.gencrl(), signer.certificateDer)).rejection).toBe("issuer_cannot_sign_crls");
    const unrestricted = new OpensslCrlCa(dir, "no-key-usage", { keyUsage: null });
    expect((await loadCrl(unrestricted.gencrl(), unrestricted.certificateDer)).entries).toBe(0);
  });

  it("refuses an unknown critical extension and ignores an unknown non-critical one", async () => {
    expect(await rejection(ca.gencrl({ extensions: ["1.2.3.4 = critical, ASN1:NULL"] }))).toEqual({
      rejection: "unknown_critical_extension",
      message: "the list has an unknown critical extension 1.2.3.4",
    });
    const lenient = await loadCrl(ca.gencrl({ extensions: ["1.2.3.5 = ASN1:NULL"] }), ca.certificateDer);
    expect(lenient.lookup("01")?.reason).toBe(1);
  });

  it("refuses a delta CRL", async () => {
    expect((await rejection(ca.gencrl({ extensions: ["2.5.29.27 = critical, ASN1:INTEGER:1"] }))).rejection).toBe("delta_crl_unsupported");
  });

  it("refuses a list larger than the limit before reading it", async () => {
    expect((await rejection(new Uint8Array(maxCrlBytes + 1))).rejection).toBe("too_large");
  });

  it("reports an issuer certificate it cannot read as the caller's mistake", async () => {
    await expect(loadCrl(ca.gencrl(), Buffer.from("not a certificate"))).rejects.toThrow(TypeError);
  });
});

describe("signature algorithms", () => {
  it("verifies RSA PKCS#1 v1.5 with SHA-384 and SHA-512, and RSA-PSS", async () => {
    for (const md of ["sha384", "sha512"] as const) {
      expect((await loadCrl(ca.gencrl({ md }), ca.certificateDer)).lookup("01")?.reason).toBe(1);
    }
    const pss = ca.gencrl({ sigopts: ["rsa_padding_mode:pss", "rsa_pss_saltlen:32"] });
    expect((await loadCrl(pss, ca.certificateDer)).lookup("01")?.reason).toBe(1);
    const tampered = Buffer.from(pss);
    tampered[tampered.length - 5]! ^= 1;
    expect((await rejection(tampered)).rejection).toBe("signature_invalid");
  });

  it("verifies ECDSA on P-256 with SHA-256 and on P-384 with SHA-384", async () => {
    for (const [key, md] of [["ec:P-256", "sha256"], ["ec:P-384", "sha384"]] as const) {
      const issuer = new OpensslCrlCa(dir, `ecdsa-${key.slice(3)}`, { key });
      issuer.revoke("2a", "superseded");
      const der = issuer.gencrl({ md, extensions: ["authorityKeyIdentifier = keyid:always"] });
      const crl = await loadCrl(der, issuer.certificateDer);
      expect(crl.lookup("2a")).toEqual(expect.objectContaining({ reason: 4 }));
      expect((await rejection(der, ca.certificateDer)).rejection).toBe("issuer_mismatch");
    }
  });

  it("reads a v1 list: no extensions, no reasons", async () => {
    const issuer = new OpensslCrlCa(dir, "v1");
    issuer.revoke("05");
    const der = issuer.gencrl({ days: 9000, crlNumber: false });
    const crl = await loadCrl(der, issuer.certificateDer);
    expect(der[6]).not.toBe(0x02); // no version field
    expect(crl.crlNumber).toBeUndefined();
    expect(crl.issuingDistributionPoint).toBeUndefined();
    expect(crl.lookup("05")?.reason).toBe(0);
    // nextUpdate after 2049 is GeneralizedTime.
    expect(crl.nextUpdate).toBe(opensslCrlText(der, dir).nextUpdate);
    expect(new Date(crl.nextUpdate!).getUTCFullYear()).toBeGreaterThan(2049);
  });
});
