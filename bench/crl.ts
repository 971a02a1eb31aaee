/**
 * Loading a CRL of 1,000,000 entries (parse + verify + index) against
 * `openssl crl -inform DER -noout -CAfile ca.pem` on the same list, in the
 * same run (machines are noisy: read the ratios). Also: index bytes per entry,
 * the time of one lookup, and the longest the event loop was held while lists
 * loaded.
 *
 *   npm run bench -- crl
 *   BENCH_CRL_ENTRIES=200000 BENCH_CRL_ROUNDS=5 npm run bench -- crl
 *   BENCH_CRL_VERBOSE=1 npm run bench -- crl     # each load's time and event-loop block
 *
 * Two lists: random 16-octet serials in random order (what the mock CA and
 * many CAs issue; the larger index, and a sort), which the final JSON line
 * reports, and sequential 4-octet serials in serial order (as `openssl ca`
 * writes them), shown in the table.
 */
import { spawnSync } from "node:child_process";
import { createPrivateKey, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { readCrlIssuer } from "../src/domain/certificates/crl/issuer-certificate.ts";
import { loadCrl } from "../src/adapters/crl/load-crl.ts";
import type { VerifiedCrl } from "../src/domain/certificates/crl/verified-crl.ts";
import { writeCrl, type CrlEntryToWrite } from "../src/domain/certificates/crl/write-crl.ts";
import type { RevocationReasonCode } from "../src/domain/certificates/model.ts";
import { BlockProbe } from "./block-probe.ts";

const entries = Number(process.env.BENCH_CRL_ENTRIES ?? 1_000_000);
const rounds = Number(process.env.BENCH_CRL_ROUNDS ?? 3);
const lookups = 1_000_000;
const reasons: RevocationReasonCode[] = [0, 1, 3, 4, 5, 6];

/**
 * A list's serials, kept as one buffer (random) or a formula (sequential)
 * rather than a million strings: the benchmark's own heap must stay small, or
 * its garbage collections would show up as event-loop blocks of the loader.
 */
interface Scenario {
  name: string;
  serial: (index: number) => string;
  /** A serial of the same width that the list does not hold. */
  unlisted: (index: number) => string;
}

interface Result {
  name: string;
  bytes: number;
  opensslMs: number;
  coldMs: number;
  warmMs: number;
  bytesPerEntry: number;
  lookupMicros: number;
  maxBlockMs: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function run(command: string, args: string[]): { ms: number; stderr: string } {
  const start = performance.now();
  const result = spawnSync(command, args, { encoding: "utf8" });
  const ms = performance.now() - start;
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed: ${result.stderr}`);
  return { ms, stderr: result.stderr };
}

/** Random serials of 16 octets: the first bit clear and the second set (listed), or both clear (not listed). */
function randomSerials(count: number): { serial: (index: number) => string; unlisted: (index: number) => string } {
  const octets = 16;
  const listed = randomBytes(count * octets);
  const unlisted = randomBytes(count * octets);
  for (let i = 0; i < count; i++) {
    listed[i * octets] = (listed[i * octets]! & 0x3f) | 0x40;
    unlisted[i * octets] = (unlisted[i * octets]! & 0x3f) | 0x01;
  }
  return {
    serial: (index) => listed.toString("hex", index * octets, (index + 1) * octets),
    // Lookups ask about 500,000 unlisted serials whatever the list's size: smaller lists reuse theirs.
    unlisted: (index) => unlisted.toString("hex", (index % count) * octets, ((index % count) + 1) * octets),
  };
}

/** The entries of a list, in the scenario's order (random serials are in random order), alive only while it is written. */
function writeList(scenario: Scenario, write: (entries: CrlEntryToWrite[]) => Uint8Array): Uint8Array {
  const listed: CrlEntryToWrite[] = [];
  for (let i = 0; i < entries; i++) {
    listed.push({ serialNumberHex: scenario.serial(i), revokedAt: Math.floor(Date.now() / 1000) * 1000 - (i % 86_400) * 60_000, reason: reasons[i % reasons.length]! });
  }
  return write(listed);
}

async function timedLoad(der: Uint8Array, issuer: Uint8Array, probe: BlockProbe): Promise<{ ms: number; crl: VerifiedCrl; blockMs: number }> {
  // Let the probe tick before the load starts, so the gap it sees is the load's.
  await new Promise((resolve) => setTimeout(resolve, 20));
  probe.reset();
  const start = performance.now();
  const crl = await loadCrl(der, issuer);
  const ms = performance.now() - start;
  await new Promise((resolve) => setTimeout(resolve, 5));
  if (process.env.BENCH_CRL_VERBOSE) console.log(`  load ${ms.toFixed(0)} ms, block ${probe.max.toFixed(1)} ms`);
  return { ms, crl, blockMs: probe.max };
}

/**
 * One list: written, loaded cold and warm, checked by openssl, looked up. A
 * function of its own so that its large temporaries (a million query strings)
 * are gone before the next list loads: held across an await in a loop body
 * they would stay alive and their garbage collection would be counted as the
 * loader's event-loop blocks.
 */
async function measure(scenario: Scenario, context: { dir: string; caPem: string; caDer: Uint8Array; write: (entries: CrlEntryToWrite[]) => Uint8Array }): Promise<Result> {
  const { dir, caPem, caDer } = context;
  const writeStart = performance.now();
  const der = writeList(scenario, context.write);
  const writeMs = performance.now() - writeStart;
  const file = path.join(dir, "list.der");
  writeFileSync(file, der);
  console.log(`${scenario.name}: ${entries} entries, ${(der.length / 1e6).toFixed(1)} MB of DER, written in ${writeMs.toFixed(0)} ms`);

  const cold = await timedLoad(der, caDer, probe);
  let maxBlockMs = cold.blockMs;
  const opensslMs: number[] = [];
  const warmMs: number[] = [];
  let crl = cold.crl;
  for (let round = 0; round < rounds; round++) {
    const oracle = run("openssl", ["crl", "-inform", "DER", "-noout", "-CAfile", caPem, "-in", file]);
    if (oracle.stderr.trim() !== "verify OK") throw new Error(`openssl did not verify the list: ${oracle.stderr}`);
    opensslMs.push(oracle.ms);
    const warm = await timedLoad(der, caDer, probe);
    warmMs.push(warm.ms);
    maxBlockMs = Math.max(maxBlockMs, warm.blockMs);
    crl = warm.crl;
  }
  if (crl.entries !== entries) throw new Error(`indexed ${crl.entries} entries, expected ${entries}`);

  // Lookups: half listed serials, half not listed, strings made beforehand.
  const queries: string[] = [];
  for (let i = 0; i < lookups / 2; i++) queries.push(scenario.serial(Math.floor(Math.random() * entries)), scenario.unlisted(i));
  let hits = 0;
  for (let i = 0; i < 100_000; i++) if (crl.lookup(queries[i]!)) hits++; // warm-up
  hits = 0;
  const lookupStart = performance.now();
  for (const query of queries) if (crl.lookup(query)) hits++;
  const lookupMicros = ((performance.now() - lookupStart) * 1000) / queries.length;
  if (hits !== lookups / 2) throw new Error(`${hits} hits for ${lookups / 2} listed serials`);

  return {
    name: scenario.name,
    bytes: der.length,
    opensslMs: median(opensslMs),
    coldMs: cold.ms,
    warmMs: median(warmMs),
    bytesPerEntry: crl.indexBytes / crl.entries,
    lookupMicros,
    maxBlockMs,
  };
}

const dir = mkdtempSync(path.join(tmpdir(), "shomei-bench-crl-"));
const probe = new BlockProbe();
try {
  const caKey = path.join(dir, "ca.key");
  const caPem = path.join(dir, "ca.pem");
  run("openssl", [
    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", caKey, "-out", caPem, "-days", "30", "-subj", "/C=JP/O=shomei bench/CN=CRL bench CA",
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  const caDer = Buffer.from(readFileSync(caPem, "utf8").replace(/-----[^-]+-----|\s/g, ""), "base64");
  const signingKey = createPrivateKey(readFileSync(caKey));
  const issuerName = readCrlIssuer(caDer).subject;
  const now = Math.floor(Date.now() / 1000) * 1000;

  const scenarios: Scenario[] = [
    { name: "random 16-octet serials, random order", ...randomSerials(entries) },
    {
      name: "sequential 4-octet serials, in order",
      serial: (index) => (0x1000_0000 + index).toString(16),
      unlisted: (index) => (0x7000_0000 + index).toString(16),
    },
  ];
  const results: Result[] = [];
  const write = (entries: CrlEntryToWrite[]) => writeCrl({ issuerName, signingKey, thisUpdate: now, nextUpdate: now + 86_400_000, crlNumber: 1n, entries });
  for (const scenario of scenarios) results.push(await measure(scenario, { dir, caPem, caDer, write }));

  console.log(`\nmedian of ${rounds} rounds; "first load" includes starting the worker thread\n`);
  const header = ["list", "openssl ms", "ours ms", "vs openssl", "first load ms", "bytes/entry", "lookup µs", "max block ms"];
  const rows = results.map((r) => [
    r.name,
    r.opensslMs.toFixed(0),
    r.warmMs.toFixed(0),
    `${(r.warmMs / r.opensslMs).toFixed(3)}×`,
    `${r.coldMs.toFixed(0)} (${(r.coldMs / r.opensslMs).toFixed(3)}×)`,
    r.bytesPerEntry.toFixed(1),
    r.lookupMicros.toFixed(3),
    r.maxBlockMs.toFixed(1),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  for (const row of [header, ...rows]) console.log(row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  "));
  console.log("targets: vs openssl <= 0.5, bytes/entry <= 32, lookup <= 1 µs, max block <= 50 ms\n");

  const primary = results[0]!;
  const round3 = (value: number) => Math.round(value * 1000) / 1000;
  console.log(
    JSON.stringify({
      crl: {
        entries,
        vsOpenssl: round3(primary.warmMs / primary.opensslMs),
        bytesPerEntry: round3(primary.bytesPerEntry),
        lookupMicros: round3(primary.lookupMicros),
        maxBlockMs: round3(Math.max(...results.map((r) => r.maxBlockMs))),
      },
    }),
  );
} finally {
  probe.stop();
  rmSync(dir, { recursive: true, force: true });
}
