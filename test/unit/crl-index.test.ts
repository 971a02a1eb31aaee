import { createHash, createPrivateKey, type KeyObject } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readCrlIssuer } from "../../src/domain/certificates/crl/issuer-certificate.ts";
import { inlineCrlBytes, loadCrl } from "../../src/adapters/crl/load-crl.ts";
import { CrlRejectedError, type CrlRejection } from "../../src/domain/certificates/crl/verified-crl.ts";
import { encodeExtension, writeCrl, type CrlEntryToWrite, type CrlToWrite } from "../../src/domain/certificates/crl/write-crl.ts";
import type { RevocationReasonCode } from "../../src/domain/certificates/model.ts";
import { OpensslCrlCa, opensslCrlText, opensslVerifiesCrl } from "../support/openssl-crl.ts";
import { SeededRandom } from "../support/seeded-random.ts";

/** Lists written by write-crl.ts (checked by openssl), read back through every path of the index. */

let dir: string;
let ca: OpensslCrlCa;
let signingKey: KeyObject;
let issuerName: Uint8Array;
const thisUpdate = Date.UTC(2026, 10, 1, 0, 0, 0);
const nextUpdate = Date.UTC(2026, 10, 2, 0, 0, 0);

function list(entries: CrlEntryToWrite[], more: Partial<CrlToWrite> = {}): Uint8Array {
  return writeCrl({ issuerName, signingKey, thisUpdate, nextUpdate, crlNumber: 7n, entries, ...more });
}

async function rejection(der: Uint8Array, issuer: Uint8Array = ca.certificateDer): Promise<{ rejection: CrlRejection; message: string }> {
  try {
    await loadCrl(der, issuer);
  } catch (error) {
    if (error instanceof CrlRejectedError) return { rejection: error.rejection, message: error.message };
    throw error;
  }
  throw new Error("the list was accepted");
}

function verifiedByOpenssl(der: Uint8Array): boolean {
  return opensslVerifiesCrl(der, ca.certificatePath, dir);
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "shomei-crl-index-"));
  ca = new OpensslCrlCa(dir, "writer");
  signingKey = createPrivateKey(readFileSync(path.join(dir, "writer", "ca.key")));
  issuerName = readCrlIssuer(ca.certificateDer).subject;
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("writeCrl", () => {
  it("writes what openssl reads: dates, number, entries with and without reasons", () => {
    const entries: CrlEntryToWrite[] = [
      { serialNumberHex: "0a", revokedAt: thisUpdate - 1000, reason: 1 },
      { serialNumberHex: "80", revokedAt: thisUpdate - 2000 },
      { serialNumberHex: "7fffffffffffffffffffffffffffffffffffffff", revokedAt: Date.UTC(2051, 0, 2, 3, 4, 5), reason: 6 },
    ];
    const der = list(entries, { authorityKeyId: Uint8Array.of(1, 2, 3), issuingDistributionPoint: { uris: ["http://x.test/a.crl"] } });
    expect(verifiedByOpenssl(der)).toBe(true);
    const oracle = opensslCrlText(der, dir);
    expect(oracle).toEqual({
      thisUpdate,
      nextUpdate,
      crlNumber: 7n,
      entries: entries.map((e) => ({ serialHex: e.serialNumberHex, revokedAt: e.revokedAt, reason: e.reason ?? 0 })),
    });
  });

  it("signs with an EC key", async () => {
    const ec = new OpensslCrlCa(dir, "writer-ec", { key: "ec:P-256" });
    const key = createPrivateKey(readFileSync(path.join(dir, "writer-ec", "ca.key")));
    const der = writeCrl({ issuerName: readCrlIssuer(ec.certificateDer).subject, signingKey: key, thisUpdate, entries: [{ serialNumberHex: "01", revokedAt: thisUpdate, reason: 4 }] });
    expect((await loadCrl(der, ec.certificateDer)).lookup("01")).toEqual({ revokedAt: thisUpdate, reason: 4 });
    expect((await loadCrl(der, ec.certificateDer)).nextUpdate).toBeUndefined();
  });
});

describe("the index", () => {
  it("keeps one entry per duplicated serial: the earliest date, the first of equal dates", async () => {
    const crl = await loadCrl(
      list([
        { serialNumberHex: "0a", revokedAt: thisUpdate - 1000, reason: 1 },
        { serialNumberHex: "0b", revokedAt: thisUpdate, reason: 3 },
        { serialNumberHex: "0a", revokedAt: thisUpdate - 5000, reason: 4 },
        { serialNumberHex: "0a", revokedAt: thisUpdate - 5000, reason: 2 },
        { serialNumberHex: "01", revokedAt: thisUpdate, reason: 5 },
      ]),
      ca.certificateDer,
    );
    expect(crl.lookup("0a")).toEqual({ revokedAt: thisUpdate - 5000, reason: 4 });
    expect(crl.lookup("0b")).toEqual({ revokedAt: thisUpdate, reason: 3 });
    expect(crl.lookup("01")).toEqual({ revokedAt: thisUpdate, reason: 5 });
    expect(crl.entries).toBe(3);
  });

  it("leaves out removeFromCRL entries and reads an unknown reason code as unspecified", async () => {
    const crl = await loadCrl(
      list([
        { serialNumberHex: "01", revokedAt: thisUpdate, reason: 8 },
        { serialNumberHex: "02", revokedAt: thisUpdate, reason: 7 as RevocationReasonCode },
        { serialNumberHex: "03", revokedAt: thisUpdate, reason: 10 },
      ]),
      ca.certificateDer,
    );
    expect(crl.lookup("01")).toBeUndefined();
    expect(crl.lookup("02")).toEqual({ revokedAt: thisUpdate, reason: 0 });
    expect(crl.lookup("03")).toEqual({ revokedAt: thisUpdate, reason: 10 });
    expect(crl.entries).toBe(2);
  });

  it("keeps serials of every width apart, and finds none of their neighbours", async () => {
    const serials = ["01", "ff", "0100", "ffffffff", "0100000000", "ffffffffffffffff", "010000000000000000", "7f" + "00".repeat(15), "01" + "00".repeat(19), "ff".repeat(20)];
    const crl = await loadCrl(list(serials.map((serialNumberHex, i) => ({ serialNumberHex, revokedAt: thisUpdate - i * 1000, reason: 1 }))), ca.certificateDer);
    serials.forEach((serial, i) => expect(crl.lookup(serial), serial).toEqual({ revokedAt: thisUpdate - i * 1000, reason: 1 }));
    for (const serial of ["02", "fe", "0101", "fffffffe", "0100000001", "fffffffffffffffe", "010000000000000001", "7f" + "00".repeat(14) + "01", "02" + "00".repeat(19)]) {
      expect(crl.lookup(serial), serial).toBeUndefined();
    }
    // Rows of 9 to 25 bytes by width, and one 8-byte directory (one bucket) for each of the five tables.
    expect(crl.indexBytes).toBe(4 * 9 + 2 * 13 + 17 + 21 + 2 * 25 + 5 * 8);
  });

  it("reads the flags of an issuingDistributionPoint", async () => {
    const crl = await loadCrl(list([], { issuingDistributionPoint: { uris: [], onlyContainsUserCerts: true, onlySomeReasons: true, indirectCRL: true } }), ca.certificateDer);
    expect(crl.issuingDistributionPoint).toEqual({
      uris: [],
      onlyContainsUserCerts: true,
      onlyContainsCACerts: false,
      onlySomeReasons: true,
      indirectCRL: true,
      onlyContainsAttributeCerts: false,
    });
    expect(crl.entries).toBe(0);
  });

  it("refuses entries naming another issuer and unknown critical entry extensions, not unknown non-critical ones", async () => {
    const directoryName = encodeExtension("2.5.29.29", true, Uint8Array.of(0x30, 0x00));
    expect(await rejection(list([{ serialNumberHex: "01", revokedAt: thisUpdate, extensions: [directoryName] }]))).toEqual({
      rejection: "unknown_critical_extension",
      message: "an entry has certificateIssuer (an indirect CRL naming another issuer), which is not supported",
    });
    const critical = encodeExtension("1.2.3.4", true, Uint8Array.of(0x05, 0x00));
    expect(await rejection(list([{ serialNumberHex: "01", revokedAt: thisUpdate, reason: 1, extensions: [critical] }]))).toEqual({
      rejection: "unknown_critical_extension",
      message: "an entry has an unknown critical extension 1.2.3.4",
    });
    const lenient = encodeExtension("1.2.3.4", false, Uint8Array.of(0x05, 0x00));
    const crl = await loadCrl(list([{ serialNumberHex: "01", revokedAt: thisUpdate, reason: 1, extensions: [lenient] }]), ca.certificateDer);
    expect(crl.lookup("01")?.reason).toBe(1);
  });

  it("refuses an entry with two reason codes", async () => {
    const second = encodeExtension("2.5.29.21", false, Uint8Array.of(0x0a, 0x01, 0x04));
    expect(await rejection(list([{ serialNumberHex: "01", revokedAt: thisUpdate, reason: 1, extensions: [second] }]))).toEqual({
      rejection: "malformed",
      message: "crlEntryExtensions: an extension appears twice",
    });
  });
});

describe("a large list, indexed in the worker", () => {
  const count = 200_000;
  let entries: CrlEntryToWrite[];
  let der: Uint8Array;

  beforeAll(() => {
    const random = new SeededRandom("crl-index", count);
    const reasons: RevocationReasonCode[] = [0, 1, 3, 4, 6, 9];
    const seen = new Set<string>();
    entries = [];
    while (entries.length < count) {
      const octets = random.weighted([[1, 3], [3, 8], [1, 12], [4, 16], [1, 20]] as const);
      const bytes = random.bytes(octets);
      bytes[0] = (bytes[0]! & 0x7f) | 0x01;
      const serialNumberHex = bytes.toString("hex");
      if (seen.has(serialNumberHex)) continue;
      seen.add(serialNumberHex);
      entries.push({ serialNumberHex, revokedAt: thisUpdate - random.int(10 ** 9) * 1000, reason: random.pick(reasons) });
    }
    der = list(entries);
    expect(der.length).toBeGreaterThan(inlineCrlBytes);
  });

  it("is a list openssl verifies", () => {
    expect(verifiedByOpenssl(der)).toBe(true);
    const tampered = Uint8Array.from(der);
    tampered[1000]! ^= 0x01;
    expect(verifiedByOpenssl(tampered)).toBe(false);
  });

  it("finds every entry, in any order, and none of the serials it does not list", async () => {
    const crl = await loadCrl(der, ca.certificateDer);
    expect(crl.entries).toBe(count);
    let wrong = 0;
    for (const entry of entries) {
      const found = crl.lookup(entry.serialNumberHex);
      if (!found || found.revokedAt !== entry.revokedAt || found.reason !== entry.reason) wrong++;
    }
    expect(wrong).toBe(0);
    const random = new SeededRandom("crl-index-misses");
    const listed = new Set(entries.map((e) => e.serialNumberHex));
    let falseHits = 0;
    for (let i = 0; i < 20_000; i++) {
      const bytes = random.bytes(random.pick([3, 8, 12, 16, 20]));
      bytes[0] = (bytes[0]! & 0x7f) | 0x01;
      const serial = bytes.toString("hex");
      if (!listed.has(serial) && crl.lookup(serial)) falseHits++;
    }
    expect(falseHits).toBe(0);
    expect(crl.indexBytes / crl.entries).toBeLessThanOrEqual(25);
  });

  it("hashes exactly the caller's bytes and leaves them as they were, with loads at once kept apart", async () => {
    const before = createHash("sha256").update(der).digest("hex");
    const truncated = der.subarray(0, der.length - 100);
    const [first, refused, second] = await Promise.allSettled([loadCrl(der, ca.certificateDer), loadCrl(truncated, ca.certificateDer), loadCrl(der, ca.certificateDer)]);
    expect(createHash("sha256").update(der).digest("hex")).toBe(before);
    for (const loaded of [first, second]) {
      expect(loaded.status === "fulfilled" && loaded.value.sha256).toBe(before);
      expect(loaded.status === "fulfilled" && loaded.value.entries).toBe(count);
    }
    expect(refused.status === "rejected" && refused.reason instanceof CrlRejectedError && refused.reason.rejection).toBe("malformed");
  });

  it("reports refusals from the worker as the same errors", async () => {
    const tampered = Uint8Array.from(der);
    tampered[der.length >> 1]! ^= 0x01;
    expect((await rejection(tampered)).rejection).toMatch(/^(signature_invalid|malformed)$/);
    const signatureBroken = Uint8Array.from(der);
    signatureBroken[der.length - 3]! ^= 0x01;
    expect(await rejection(signatureBroken)).toEqual({ rejection: "signature_invalid", message: "the signature does not verify with the issuer's key" });
    expect((await rejection(der.subarray(0, der.length - 100))).rejection).toBe("malformed");
    await expect(loadCrl(der, Uint8Array.of(0x30, 0x00))).rejects.toThrow(TypeError);
  });
});
