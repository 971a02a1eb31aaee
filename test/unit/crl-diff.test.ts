import { createPrivateKey, type KeyObject } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { diffCrls, inlineDiffEntries } from "../../src/adapters/crl/diff-crl.ts";
import { loadCrl } from "../../src/adapters/crl/load-crl.ts";
import { readCrlIssuer } from "../../src/domain/certificates/crl/issuer-certificate.ts";
import { writeCrl, type CrlEntryToWrite } from "../../src/domain/certificates/crl/write-crl.ts";
import type { RevocationReasonCode } from "../../src/domain/certificates/model.ts";
import { OpensslCrlCa } from "../support/openssl-crl.ts";
import { SeededRandom } from "../support/seeded-random.ts";

/**
 * The diff of two lists' indexes against the obvious oracle (two sets of
 * serials), on lists written by write-crl.ts and loaded through the real
 * loader: serials of every width from 1 to 20 octets, diffed on the calling
 * thread and in the worker.
 */
let dir: string;
let signingKey: KeyObject;
let issuerName: Uint8Array;
let issuerDer: Uint8Array;
const thisUpdate = Date.UTC(2026, 10, 1);
const reasons: RevocationReasonCode[] = [0, 1, 4, 5, 6];

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "shomei-crl-diff-"));
  const ca = new OpensslCrlCa(dir, "differ");
  signingKey = createPrivateKey(readFileSync(path.join(dir, "differ", "ca.key")));
  issuerName = readCrlIssuer(ca.certificateDer).subject;
  issuerDer = ca.certificateDer;
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A serial in canonical form: 1 to 20 octets, no leading zero octet. */
function serial(random: SeededRandom): string {
  const octets = 1 + Math.floor(random.next() * 20);
  let hex = (1 + Math.floor(random.next() * 255)).toString(16).padStart(2, "0");
  for (let i = 1; i < octets; i++) hex += Math.floor(random.next() * 256).toString(16).padStart(2, "0");
  return hex;
}

function entriesOf(serials: Iterable<string>, random: SeededRandom): CrlEntryToWrite[] {
  return [...serials].map((serialNumberHex) => ({
    serialNumberHex,
    revokedAt: thisUpdate - Math.floor(random.next() * 1e6) * 1000,
    reason: reasons[Math.floor(random.next() * reasons.length)]!,
  }));
}

async function diffOf(before: CrlEntryToWrite[], after: CrlEntryToWrite[]) {
  const write = (entries: CrlEntryToWrite[], crlNumber: bigint) => writeCrl({ issuerName, signingKey, thisUpdate, nextUpdate: thisUpdate + 86_400_000, crlNumber, entries });
  const previous = await loadCrl(write(before, 1n), issuerDer);
  const next = await loadCrl(write(after, 2n), issuerDer);
  return diffCrls(previous, next);
}

/** What the diff must be: the serials of one list and not the other, each with its entry. */
function oracle(before: CrlEntryToWrite[], after: CrlEntryToWrite[]) {
  const afterSerials = new Set(after.map((e) => e.serialNumberHex));
  const beforeSerials = new Set(before.map((e) => e.serialNumberHex));
  const entry = (e: CrlEntryToWrite) => ({ revokedAt: e.revokedAt, reason: e.reason });
  return [
    ...before.filter((e) => !afterSerials.has(e.serialNumberHex)).map((e) => ({ serialHex: e.serialNumberHex, before: entry(e), after: undefined })),
    ...after.filter((e) => !beforeSerials.has(e.serialNumberHex)).map((e) => ({ serialHex: e.serialNumberHex, before: undefined, after: entry(e) })),
  ];
}

const bySerial = (a: { serialHex: string }, b: { serialHex: string }) => (a.serialHex < b.serialHex ? -1 : a.serialHex > b.serialHex ? 1 : 0);

describe("diffCrls", () => {
  for (const [title, size] of [
    ["on the calling thread", 2_000],
    ["in the worker", Math.ceil(inlineDiffEntries / 2) + 1_000],
  ] as const) {
    it(`finds exactly the serials added and removed, ${title}`, async () => {
      const random = new SeededRandom("crl-diff", size);
      const kept = new Set<string>();
      while (kept.size < size) kept.add(serial(random));
      const removed = new Set<string>();
      while (removed.size < size / 20) {
        const s = serial(random);
        if (!kept.has(s)) removed.add(s);
      }
      const added = new Set<string>();
      while (added.size < size / 10) {
        const s = serial(random);
        if (!kept.has(s) && !removed.has(s)) added.add(s);
      }
      const shared = entriesOf(kept, random);
      // A kept serial whose entry changes (a hold made permanent) is no change of status.
      const before = [...shared, ...entriesOf(removed, random)];
      const after = [...shared.map((e, i) => (i % 7 === 0 ? { ...e, reason: 1 as const } : e)), ...entriesOf(added, random)];
      const changes = await diffOf(before, after);
      expect(changes.length).toBe(removed.size + added.size);
      expect([...changes].sort(bySerial)).toEqual(oracle(before, after).sort(bySerial));
    });
  }

  it("an identical list has no changes; an emptied one removes every serial", async () => {
    const random = new SeededRandom("crl-diff-edges");
    const entries = entriesOf(["01", "7f", "80", "0100", "ffffffff", "0100000000", "7fffffffffffffffffffffffffffffffffffffff"], random);
    expect(await diffOf(entries, entries)).toEqual([]);
    expect((await diffOf(entries, [])).map((c) => c.serialHex).sort()).toEqual(entries.map((e) => e.serialNumberHex).sort());
    expect((await diffOf([], entries)).every((c) => c.before === undefined && c.after !== undefined)).toBe(true);
  });
});
