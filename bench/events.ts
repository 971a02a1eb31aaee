/**
 * `npm run bench -- events`: events detected from the lists themselves. Two
 * lists of 1,000,000 entries (random 16-octet serials) that differ by 10,000
 * serials (5,000 dropped, 5,000 added), against a registry of 1,000,000
 * certificates of which 1,000 are among the changed (and 10,000 are listed
 * in both, which is no change): the second list is installed through
 * CrlLists, as a scheduled refresh does, and must record exactly those 1,000
 * events. Ends with one JSON line:
 *
 *   {"events":{"diffSeconds":…,"events":…,"maxBlockMs":…,"deliveriesPerSecond":…,"checkOverhead":…}}
 *
 * - diffSeconds: from the new list verified and indexed (the CRL bench
 *   measures that part) to the transaction with its events committed: the
 *   diff, the registry lookups, the status records and storing the list.
 * - maxBlockMs: the longest the event loop was held during the whole refresh.
 * - deliveriesPerSecond: the events of a revocation of 8,000 certificates in
 *   eight accounts, sent by the delivery loop to receivers on loopback
 *   (bench/deliveries.ts).
 * - checkOverhead: a status check that records no event (the status is the
 *   same), on a database with event recording, over the same check on one
 *   without (migration 0025 undone), in the same run: CPU time per round,
 *   rounds alternating, the ratio of the medians.
 *
 *   npm run bench -- events
 *   BENCH_EVENTS_REGISTRY=100000 npm run bench -- events      # a smaller registry, quicker to seed
 *
 * On SQLite, where every statement runs on the event loop's thread (the
 * service tests run the same path on PostgreSQL).
 */
import { spawnSync } from "node:child_process";
import { createPrivateKey, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { diffCrls } from "../src/adapters/crl/diff-crl.ts";
import { loadCrl } from "../src/adapters/crl/load-crl.ts";
import type { CrlDiffer } from "../src/domain/certificates/crl/crl-diff.ts";
import type { VerifiedListToStore } from "../src/domain/certificates/crl/crl-list-store.ts";
import { CrlLists, type CrlIssuer } from "../src/domain/certificates/crl/crl-lists.ts";
import { readCrlIssuer } from "../src/domain/certificates/crl/issuer-certificate.ts";
import { ListChanges } from "../src/domain/certificates/crl/list-changes.ts";
import type { CrlLoader } from "../src/domain/certificates/crl/verified-crl.ts";
import { writeCrl, type CrlEntryToWrite } from "../src/domain/certificates/crl/write-crl.ts";
import type { RevocationReasonCode } from "../src/domain/certificates/model.ts";
import type { RevocationSource } from "../src/domain/certificates/revocation-source.ts";
import type { CertificateRegistry } from "../src/domain/certificates/registry.ts";
import { CertificateStatusChecks } from "../src/domain/certificates/status-checks.ts";
import { newId } from "../src/domain/ids.ts";
import { CertificatesRepository } from "../src/storage/certificates-repository.ts";
import { CrlListsRepository } from "../src/storage/crl-lists-repository.ts";
import { openDatabase, type Database } from "../src/storage/database.ts";
import { migrateToLatest } from "../src/storage/migrate.ts";
import * as eventsMigration from "../src/storage/migrations/0025_certificate_events.ts";
import { RegisteredBySerialRepository } from "../src/storage/registered-by-serial-repository.ts";
import { BlockProbe } from "./block-probe.ts";
import { measureDeliveries } from "./deliveries.ts";

const listEntries = 1_000_000;
const changedEach = 5_000; // dropped, and as many added
const registrySize = Number(process.env.BENCH_EVENTS_REGISTRY ?? 1_000_000);
const registeredChanged = 1_000; // 500 dropped, 500 added
const registeredUnchanged = 10_000; // listed in both lists
const checks = 10_000;
const checkRounds = 21;
const octets = 16;
const url = "http://lists.bench.invalid/bench.crl";
const anchor = "sha256:events-bench";
const reasons: RevocationReasonCode[] = [0, 1, 3, 4, 5, 6];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed: ${result.stderr}`);
}

/**
 * Serials kept in one buffer, not a million strings (the bench's own heap
 * stays small, or its garbage collections would count as the refresh's
 * blocks). Listed serials start with 0x40–0x7f, registered serials that no
 * list names with 0x01–0x3f: the two never meet.
 */
const listed = randomBytes((listEntries + changedEach) * octets);
for (let i = 0; i < listEntries + changedEach; i++) listed[i * octets] = (listed[i * octets]! & 0x3f) | 0x40;
const listedSerial = (i: number) => listed.toString("hex", i * octets, (i + 1) * octets);

/** The first list: serials [0, 1M); the second: [5,000, 1M + 5,000): 5,000 dropped, 5,000 added. */
function writeList(first: number, crlNumber: bigint, thisUpdate: number, issuerName: Uint8Array, signingKey: ReturnType<typeof createPrivateKey>): Uint8Array {
  const entries: CrlEntryToWrite[] = [];
  for (let i = first; i < first + listEntries; i++) {
    // The dropped serials were on hold: their release is certificate.reinstated.
    entries.push({ serialNumberHex: listedSerial(i), revokedAt: thisUpdate - (i % 86_400) * 60_000, reason: i < changedEach ? 6 : reasons[i % reasons.length]! });
  }
  return writeCrl({ issuerName, signingKey, thisUpdate, nextUpdate: thisUpdate + 86_400_000, crlNumber, entries });
}

/** The serial of the registry's i-th certificate: first the changed, then some listed in both, then the rest. */
function registeredSerial(i: number, unlisted: Buffer): string {
  if (i < registeredChanged / 2) return listedSerial(i); // dropped
  if (i < registeredChanged) return listedSerial(listEntries + i - registeredChanged / 2); // added
  if (i < registeredChanged + registeredUnchanged) return listedSerial(changedEach + i); // in both
  const at = (i % (unlisted.length / octets)) * octets;
  return unlisted.toString("hex", at, at + octets);
}

/** One account's registry of `registrySize` certificates of the bench anchor, never checked (no status record). */
async function seedRegistry(database: Database): Promise<void> {
  const now = Date.now();
  const accountId = newId();
  const userId = newId();
  await database.db.insertInto("accounts").values({ id: accountId, name: `events-bench-${accountId}`, api_status: "active", created_at: now, updated_at: now }).execute();
  await database.db.insertInto("certificate_users").values({ id: userId, account_id: accountId, created_at: now }).execute();
  const unlisted = randomBytes(registrySize * octets);
  for (let i = 0; i < registrySize; i++) unlisted[i * octets] = (unlisted[i * octets]! & 0x3f) | 0x01;
  const rowsPerInsert = 2_000;
  await database.db.transaction().execute(async (trx) => {
    for (let start = 0; start < registrySize; start += rowsPerInsert) {
      const rows = [];
      for (let i = start; i < Math.min(registrySize, start + rowsPerInsert); i++) {
        rows.push({
          id: newId(), account_id: accountId, user_id: userId, type: "jpki_card_digital_signature", origin: "verified",
          serial_number: registeredSerial(i, unlisted), issuer: "CN=events bench CA", subject: "", not_before: now - 86_400_000,
          not_after: now + 365 * 86_400_000, fingerprint_sha256: i.toString(16).padStart(64, "0"), crl_distribution_points: "[]",
          certificate_pem: "", created_at: now, trust_anchor: anchor, ocsp_urls: "[]",
        });
      }
      await trx.insertInto("certificates").values(rows).execute();
    }
  });
}

/** A refresh of the second list, timed from the list verified to its transaction committed. */
async function measureDetection(database: Database, lists: { first: Uint8Array; second: Uint8Array }, caDer: Uint8Array, probe: BlockProbe) {
  let current = lists.first;
  let loadedAt = 0;
  let savedAt = 0;
  let diffMs = 0;
  // Each stage marked on the probe, so the longest block is named by the work that held the loop.
  const loader: CrlLoader = async (der, issuer) => {
    probe.mark("load (verify, index on the worker)");
    const crl = await loadCrl(der, issuer);
    loadedAt = performance.now();
    probe.mark("between load and diff");
    return crl;
  };
  const differ: CrlDiffer = async (previous, next) => {
    probe.mark("diff");
    const started = performance.now();
    const changes = await diffCrls(previous, next);
    diffMs = performance.now() - started;
    probe.mark("registry lookups");
    return changes;
  };
  const store = new (class extends CrlListsRepository {
    override async saveList(list: VerifiedListToStore): Promise<boolean> {
      probe.mark("store (list parts, status records, commit)");
      const stored = await super.saveList(list);
      savedAt = performance.now();
      probe.mark("after the commit");
      return stored;
    }
  })(database);
  const issuer: CrlIssuer = { id: anchor, name: "events bench CA", certificateDer: caDer, crlUrls: [url] };
  const crlLists = new CrlLists(
    new Map([[anchor, issuer]]),
    store,
    async () => ({ kind: "fetched", der: current, etag: undefined, lastModified: undefined }),
    loader,
    new ListChanges(differ, new RegisteredBySerialRepository(database), Date.now),
    { fetchTimeoutMs: 60_000, maxBytes: 512 * 1024 * 1024, refreshIntervalMs: 3_600_000 },
    Date.now,
  );
  const first = await crlLists.refresh(issuer, url);
  if (first.outcome !== "fetched") throw new Error(`the first list was not installed: ${first.outcome} ${first.detail ?? ""}`);
  current = lists.second;
  // As in a running service, whose checkpointer thread (src/storage/sqlite-checkpointer.ts) is running and has
  // copied the log the seeding wrote; otherwise the commit that finds the log long copies it back.
  await database.logCopied();
  probe.reset();
  probe.mark("fetch and digest");
  const started = performance.now();
  const second = await crlLists.refresh(issuer, url);
  const refreshMs = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 5));
  const maxBlockMs = probe.max;
  if (second.outcome !== "fetched") throw new Error(`the second list was not installed: ${second.outcome} ${second.detail ?? ""}`);
  const events = Number((await sql<{ n: number }>`select count(*) as n from certificate_events`.execute(database.db)).rows[0]!.n);
  const byType = (await sql<{ type: string; n: number }>`select type, count(*) as n from certificate_events group by type order by type`.execute(database.db)).rows;
  return { diffSeconds: (savedAt - loadedAt) / 1000, refreshMs, loadMs: refreshMs - (savedAt - loadedAt), diffMs, events, byType, maxBlockMs, maxBlockIn: probe.where() };
}

/** Status checks that record no event (good after good), through the domain and the real repository, on one database. */
async function checkRunner(file: string, withEvents: boolean): Promise<{ database: Database; run: () => Promise<number> }> {
  const database = await openDatabase(`sqlite:${file}`);
  await migrateToLatest(database);
  if (!withEvents) await eventsMigration.down(database.db as never);
  const now = Date.now();
  const accountId = newId();
  const userId = newId();
  const certificateId = newId();
  await database.db.insertInto("accounts").values({ id: accountId, name: "checks", api_status: "active", created_at: now, updated_at: now }).execute();
  await database.db.insertInto("certificate_users").values({ id: userId, account_id: accountId, created_at: now }).execute();
  await database.db.insertInto("certificates").values({
    id: certificateId, account_id: accountId, user_id: userId, type: "jpki_card_digital_signature", origin: "verified", serial_number: "0a",
    issuer: "CN=checks", subject: "", not_before: now - 1, not_after: now + 86_400_000, fingerprint_sha256: "0".repeat(64),
    crl_distribution_points: "[]", certificate_pem: "", created_at: now, trust_anchor: anchor, ocsp_urls: "[]",
  }).execute();
  const good = { status: "good" as const, method: "crl" as const, sourceUpdatedAt: now, revokedAt: null, revokedReason: null };
  const source: RevocationSource = { check: async () => good, checkMany: async (certificates) => certificates.map(() => good) };
  // A check by id never reaches the registry (it registers certificates given by content).
  const statusChecks = new CertificateStatusChecks(new CertificatesRepository(database), () => source, Date.now, undefined as unknown as CertificateRegistry);
  await statusChecks.checkCertificate({ accountId }, certificateId);
  return {
    database,
    // The round's CPU time: the checks and their SQLite statements all run on this thread, and time the
    // scheduler gives other processes (which moved wall-clock rounds by ±30 % on a busy machine) is not counted.
    run: async () => {
      const started = process.cpuUsage();
      for (let i = 0; i < checks; i++) await statusChecks.checkCertificate({ accountId }, certificateId);
      const used = process.cpuUsage(started);
      return (used.user + used.system) / 1000;
    },
  };
}

async function measureCheckOverhead(dir: string): Promise<{ ratio: number; withMs: number; withoutMs: number }> {
  const on = await checkRunner(path.join(dir, "checks-events.db"), true);
  const off = await checkRunner(path.join(dir, "checks-no-events.db"), false);
  try {
    await on.run(); // warm-up
    await off.run();
    const withMs: number[] = [];
    const withoutMs: number[] = [];
    for (let round = 0; round < checkRounds; round++) {
      // Alternating which goes first, so neither always runs on a warmer or a busier machine.
      if (round % 2 === 0) {
        withMs.push(await on.run());
        withoutMs.push(await off.run());
      } else {
        withoutMs.push(await off.run());
        withMs.push(await on.run());
      }
    }
    const recorded = Number((await sql<{ n: number }>`select count(*) as n from certificate_events`.execute(on.database.db)).rows[0]!.n);
    if (recorded !== 0) throw new Error(`checks of an unchanged status recorded ${recorded} events`);
    return { ratio: median(withMs) / median(withoutMs), withMs: median(withMs), withoutMs: median(withoutMs) };
  } finally {
    await on.database.close();
    await off.database.close();
  }
}

const dir = mkdtempSync(path.join(tmpdir(), "shomei-bench-events-"));
const probe = new BlockProbe();
try {
  const caKey = path.join(dir, "ca.key");
  const caPem = path.join(dir, "ca.pem");
  run("openssl", [
    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", caKey, "-out", caPem, "-days", "30", "-subj", "/C=JP/O=shomei bench/CN=events bench CA",
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  const caDer = Buffer.from(readFileSync(caPem, "utf8").replace(/-----[^-]+-----|\s/g, ""), "base64");
  const signingKey = createPrivateKey(readFileSync(caKey));
  const issuerName = readCrlIssuer(caDer).subject;
  const now = Math.floor(Date.now() / 1000) * 1000;

  let started = performance.now();
  const lists = { first: writeList(0, 1n, now - 60_000, issuerName, signingKey), second: writeList(changedEach, 2n, now, issuerName, signingKey) };
  console.log(`two lists of ${listEntries} entries differing by ${2 * changedEach} serials, written in ${(performance.now() - started).toFixed(0)} ms`);

  const database = await openDatabase(`sqlite:${path.join(dir, "registry.db")}`);
  let detection: Awaited<ReturnType<typeof measureDetection>>;
  try {
    await migrateToLatest(database);
    started = performance.now();
    await seedRegistry(database);
    console.log(`registry of ${registrySize} certificates (${registeredChanged} among the changed serials, ${registeredUnchanged} listed in both) on ${database.dialect}, seeded in ${(performance.now() - started).toFixed(0)} ms`);
    detection = await measureDetection(database, lists, caDer, probe);
  } finally {
    await database.close();
  }
  console.log(
    `second list: refresh ${detection.refreshMs.toFixed(0)} ms (load ${detection.loadMs.toFixed(0)} ms, then diff ${detection.diffMs.toFixed(0)} ms, ` +
      `lookups, records and install: ${(detection.diffSeconds * 1000 - detection.diffMs).toFixed(0)} ms); events ${detection.events} ` +
      `(${detection.byType.map((t) => `${t.type} ${t.n}`).join(", ")}); max block ${detection.maxBlockMs.toFixed(1)} ms (${detection.maxBlockIn})`,
  );
  if (detection.events !== registeredChanged) throw new Error(`${detection.events} events recorded, expected exactly ${registeredChanged}`);

  const deliveries = await measureDeliveries(dir, probe);
  console.log(
    `${deliveries.deliveries} deliveries to ${deliveries.endpoints} endpoints on loopback: ${deliveries.seconds.toFixed(1)} s, ` +
      `${deliveries.perSecond.toFixed(0)} a second, ${deliveries.cpuMicrosEach.toFixed(0)} µs of CPU each, max block ${deliveries.maxBlockMs.toFixed(1)} ms`,
  );

  const overhead = await measureCheckOverhead(dir);
  console.log(`${checks} checks recording no event: ${overhead.withMs.toFixed(0)} ms of CPU with event recording, ${overhead.withoutMs.toFixed(0)} ms without (median of ${checkRounds} rounds)`);
  console.log("targets: diffSeconds <= 2, events = 1000, maxBlockMs <= 50, deliveriesPerSecond >= 1000, checkOverhead <= 1.05\n");

  const round3 = (value: number) => Math.round(value * 1000) / 1000;
  console.log(
    JSON.stringify({
      events: {
        diffSeconds: round3(detection.diffSeconds),
        events: detection.events,
        maxBlockMs: round3(detection.maxBlockMs),
        deliveriesPerSecond: Math.round(deliveries.perSecond),
        checkOverhead: round3(overhead.ratio),
      },
    }),
  );
} finally {
  probe.stop();
  rmSync(dir, { recursive: true, force: true });
}
