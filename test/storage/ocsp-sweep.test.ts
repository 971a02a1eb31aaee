import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createDomain, type Domain } from "../../src/app/compose.ts";
import { loadConfig } from "../../src/config/load.ts";
import type { SettingName } from "../../src/config/schema.ts";
import type { PaceTimer } from "../../src/domain/certificates/ocsp/request-pace.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { OcspSweepQueueRepository } from "../../src/storage/ocsp-sweep-queue-repository.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { OcspProxy } from "../support/ocsp-proxy.ts";
import { OpensslCrlCa, type IssuedLeaf } from "../support/openssl-crl-ca.ts";
import { OpensslOcspResponder, responderCertificate, type ResponderCertificate } from "../support/openssl-ocsp.ts";

/**
 * The OCSP sweep over the real repositories, against `openssl ocsp` on
 * loopback behind a counting proxy: certificates registered without a
 * check, rounds run by the test. The responder answers from the CA's
 * database as it was when it started, so a revocation restarts it.
 */
const targets = await databaseTargets();
const policy = "1.2.392.200149.8.5.1.1.20";
const hour = 3600_000;
const minute = 60_000;

/** A clock of the test's own for the rate limit: sleeping moves it, and nothing else does. */
class TestTimer implements PaceTimer {
  at = 1_000_000;
  now(): number {
    return this.at;
  }
  async sleep(ms: number): Promise<void> {
    this.at += ms;
  }
}

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(`OCSP sweep, ${targetTitle(target)}`, () => {
    let dir: string;
    let ca: OpensslCrlCa;
    let signer: ResponderCertificate;
    let responder: OpensslOcspResponder;
    let proxy: OcspProxy;
    let scratch: ScratchDatabase;
    const opened: Database[] = [];
    let leafCount = 0;
    /**
     * The instances' clock: still, moved on by the test (claims take turns on it). Responses signed with the
     * real time are within the skew a response may be ahead of it, and their nextUpdate an hour later.
     */
    let now = 0;
    const clock = () => now;
    const later = (ms: number) => {
      now += ms;
    };

    async function restartResponder(): Promise<void> {
      await responder?.stop();
      responder = new OpensslOcspResponder(ca, signer, { nextUpdateMinutes: 60 });
      await responder.start();
      proxy.upstream = responder.url;
    }

    async function instance(settings: Partial<Record<SettingName, unknown>> = {}, timer = new TestTimer()): Promise<{ domain: Domain; database: Database; timer: TestTimer }> {
      const config = loadConfig({
        env: {},
        overrides: { mode: "production", databaseUrl: scratch.url, trustAnchorsFile: path.join(dir, "anchors.json"), ocspTimeoutMs: 2000, ocspSweep: "on", ...settings },
      });
      const database = await openDatabase(scratch.url);
      opened.push(database);
      await migrateToLatest(database);
      return { domain: createDomain(config, database, randomBytes(32), clock, undefined, { ocspSweepTimer: timer }), database, timer };
    }

    /**
     * A certificate of the CA that names only the proxy as its OCSP responder (no CRL), registered without a check.
     * The responder knows it once restarted (responderKnowsAll).
     */
    async function registered(domain: Domain, accountId: string): Promise<{ leaf: IssuedLeaf; certificateId: string }> {
      const leaf = ca.issue(`leaf-${++leafCount}`, "", policy, proxy.url);
      const { certificate } = await domain.registry.register(accountId, await domain.registry.recognize(leaf.der));
      return { leaf, certificateId: certificate.id };
    }

    /** openssl reads the CA's database when it starts: restarted, it answers for the certificates issued since. */
    const responderKnowsAll = restartResponder;

    const eventsOf = async (domain: Domain, accountId: string) =>
      (await domain.events.list(accountId, { certificateId: "", type: "" }, 100, "")).events.map((e) => ({ type: e.type, certificateId: e.kind === "certificate" ? e.certificateId : undefined }));

    /**
     * The interval passes for the sweep's bookkeeping: its certificates come due and their stored answers age by it.
     * (The clock moves on by a minute only: the responder signs with the real time, which a response must not be
     * too far from.)
     */
    async function aDayPasses(database: Database): Promise<void> {
      later(minute);
      await sql`update ocsp_sweep_queue set due_at = 0`.execute(database.db);
      await sql`update ocsp_responses set fetched_at = fetched_at - ${25 * hour}`.execute(database.db);
    }

    beforeAll(async () => {
      dir = mkdtempSync(path.join(tmpdir(), "shomei-ocsp-sweep-"));
      mkdirSync(path.join(dir, "ca"));
      ca = new OpensslCrlCa(path.join(dir, "ca"), "test OCSP sweep CA");
      signer = responderCertificate(dir, "responder", ca);
      proxy = new OcspProxy(undefined);
      await proxy.start();
      await restartResponder();
      const issues = [{ type: "jpki_card_digital_signature", policyOid: policy, keyUsage: ["digitalSignature", "nonRepudiation"] }];
      writeFileSync(path.join(dir, "anchors.json"), JSON.stringify({ anchors: [{ name: "test OCSP sweep CA", certificates: "ca/ca.pem", issues }] }));
    });

    beforeEach(async () => {
      scratch = await target.create();
      now = Date.now();
      proxy.behaviour = "forward";
      proxy.requests = 0;
    });

    afterEach(async () => {
      for (const database of opened.splice(0)) await database.close();
      await scratch?.drop();
    });

    afterAll(async () => {
      await proxy?.close();
      await responder?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it("a certificate revoked at the responder after registration gets certificate.revoked from the sweep, with no check", async () => {
      const { domain, database } = await instance();
      const account = await domain.accounts.create("sweep");
      const { leaf, certificateId } = await registered(domain, account.id);
      const other = await registered(domain, account.id);
      await responderKnowsAll();

      const first = await domain.ocspSweep.round();
      expect(first).toMatchObject({ asked: 2, changes: 0, failed: 0 });
      // The first answer is the certificates' first status record: no change to report yet.
      expect(await eventsOf(domain, account.id)).toEqual([]);
      const { rows } = await sql<{ due_at: string | number }>`select due_at from ocsp_sweep_queue`.execute(database.db);
      expect(rows.map((r) => Number(r.due_at) >= clock() + 23 * hour)).toEqual([true, true]);

      ca.revoke(leaf, "affiliationChanged");
      await restartResponder();
      // Not due yet: nothing is asked before the interval.
      later(minute);
      expect(await domain.ocspSweep.round()).toMatchObject({ asked: 0, changes: 0 });
      expect(proxy.requests).toBe(2);

      await aDayPasses(database);
      expect(await domain.ocspSweep.round()).toMatchObject({ asked: 2, changes: 1, failed: 0 });
      expect(await eventsOf(domain, account.id)).toEqual([{ type: "certificate.revoked", certificateId }]);
      const status = (await domain.statusChecks.listStatuses(account.id, certificateId, 10, "")).statuses;
      expect(status.map((s) => [s.status, s.checkMethod, s.revokedReason])).toEqual([["revoked", "ocsp", 3], ["good", "ocsp", null]]);
      expect((await domain.statusChecks.listStatuses(account.id, other.certificateId, 10, "")).statuses.map((s) => s.status)).toEqual(["good"]);
      expect(domain.ocspSweep.counts).toMatchObject({ asked: 4, changes: 1, failed: 0 });

      // A check now finds the status recorded already: no second event.
      await domain.statusChecks.check((await domain.statusChecks.getCertificate(account.id, certificateId)).certificate, undefined);
      expect(await eventsOf(domain, account.id)).toHaveLength(1);
    });

    it("two accounts holding one certificate: one request, a record and an event for each", async () => {
      const { domain, database } = await instance();
      const a = await domain.accounts.create("a");
      const b = await domain.accounts.create("b");
      const { leaf, certificateId } = await registered(domain, a.id);
      const inB = (await domain.registry.register(b.id, await domain.registry.recognize(leaf.der))).certificate.id;
      await responderKnowsAll();
      expect(await domain.ocspSweep.round()).toMatchObject({ asked: 1 });
      ca.revoke(leaf, "keyCompromise");
      await restartResponder();
      await aDayPasses(database);
      expect(await domain.ocspSweep.round()).toMatchObject({ asked: 1, changes: 2 });
      expect(proxy.requests).toBe(2);
      expect(await eventsOf(domain, a.id)).toEqual([{ type: "certificate.revoked", certificateId }]);
      expect(await eventsOf(domain, b.id)).toEqual([{ type: "certificate.revoked", certificateId: inB }]);
    });

    it("with the sweep off, a round asks nothing and records nothing", async () => {
      const { domain } = await instance({ ocspSweep: undefined });
      const account = await domain.accounts.create("off");
      const { certificateId } = await registered(domain, account.id);
      expect(await domain.ocspSweep.round()).toEqual({ asked: 0, changes: 0, failed: 0, more: false });
      expect(proxy.requests).toBe(0);
      expect((await domain.statusChecks.listStatuses(account.id, certificateId, 10, "")).statuses).toEqual([]);
      expect(domain.ocspSweep.counts.rounds).toBe(0);
    });

    it("an unreachable responder: logged as a failure, not a change, nothing recorded, and asked again at the next round", async () => {
      const { domain } = await instance();
      const account = await domain.accounts.create("down");
      const { certificateId } = await registered(domain, account.id);
      await responderKnowsAll();
      proxy.behaviour = "error500";
      expect(await domain.ocspSweep.round()).toMatchObject({ asked: 1, changes: 0, failed: 1 });
      expect((await domain.statusChecks.listStatuses(account.id, certificateId, 10, "")).statuses).toEqual([]);
      proxy.behaviour = "forward";
      later(minute);
      expect(await domain.ocspSweep.round()).toMatchObject({ asked: 1, changes: 0, failed: 0 });
      expect((await domain.statusChecks.listStatuses(account.id, certificateId, 10, "")).statuses.map((s) => s.status)).toEqual(["good"]);
      expect(proxy.requests).toBe(2);
    });

    it("a certificate with a CRL is left to its list: the sweep never asks its responder", async () => {
      const { domain } = await instance();
      const account = await domain.accounts.create("crl");
      const leaf = ca.issue(`leaf-${++leafCount}`, "http://127.0.0.1:9/ca.crl", policy, proxy.url);
      await domain.registry.register(account.id, await domain.registry.recognize(leaf.der));
      expect(await domain.ocspSweep.round()).toMatchObject({ asked: 0, failed: 0 });
      expect(proxy.requests).toBe(0);
      // Looking at it made no request, so it takes none of the rate limit: a certificate due now is asked for now.
      await registered(domain, account.id);
      await responderKnowsAll();
      expect(await domain.ocspSweep.round()).toMatchObject({ asked: 1 });
    });

    it("the rate limit: never more than SHOMEI_OCSP_SWEEP_PER_SECOND requests in any second of the limit's clock", async () => {
      const timer = new TestTimer();
      const { domain } = await instance({ ocspSweepPerSecond: 2 }, timer);
      const account = await domain.accounts.create("rate");
      for (let i = 0; i < 7; i++) await registered(domain, account.id);
      await responderKnowsAll();
      const times: number[] = [];
      const countRequests = proxy.rewrite;
      proxy.rewrite = (request) => {
        times.push(timer.now());
        return request;
      };
      try {
        expect(await domain.ocspSweep.round()).toMatchObject({ asked: 7 });
      } finally {
        proxy.rewrite = countRequests;
      }
      expect(times).toHaveLength(7);
      for (const start of times) expect(times.filter((t) => t >= start && t < start + 1000).length).toBeLessThanOrEqual(2);
    });

    it("instances take turns: the rate limit holds for all of them together", async () => {
      const one = await instance({ ocspSweepPerSecond: 2 });
      const two = await instance({ ocspSweepPerSecond: 2 });
      const account = await one.domain.accounts.create("turns");
      for (let i = 0; i < 3; i++) await registered(one.domain, account.id);
      await responderKnowsAll();
      later(minute);
      expect(await one.domain.ocspSweep.round()).toMatchObject({ asked: 3 });
      for (let i = 0; i < 2; i++) await registered(one.domain, account.id);
      await responderKnowsAll();
      // Three certificates at two a second: the next claim, by any instance, is a second and a half later.
      later(1499);
      expect(await two.domain.ocspSweep.round()).toMatchObject({ asked: 0 });
      expect(await one.domain.ocspSweep.round()).toMatchObject({ asked: 0 });
      later(1);
      expect(await two.domain.ocspSweep.round()).toMatchObject({ asked: 2 });
      expect(proxy.requests).toBe(5);
    });

    it("a claim's lease keeps every other claim off its certificates until it is rescheduled", async () => {
      const one = await instance();
      const two = await instance();
      const account = await one.domain.accounts.create("lease");
      for (let i = 0; i < 3; i++) await registered(one.domain, account.id);
      const at = clock();
      const first = new OcspSweepQueueRepository(one.database);
      const second = new OcspSweepQueueRepository(two.database);
      /** A claim that gives the turn back at once, as a round that asked nothing does. */
      const claim = async (queue: OcspSweepQueueRepository, now: number, limit = 10) => {
        const claimed = await queue.claim(now, limit, 10 * minute);
        await queue.endTurn(claimed.leaseToken, now);
        return claimed;
      };
      const claimed = await first.claim(at, 2, 10 * minute);
      expect(claimed.keys).toHaveLength(2);
      // Its turn is held: another claim gets nothing, however many are due.
      expect((await second.claim(at, 10, 10 * minute)).keys).toEqual([]);
      await first.endTurn(claimed.leaseToken, at);
      expect((await claim(second, at)).keys).toHaveLength(1);
      expect((await claim(second, at + minute)).keys).toEqual([]);
      // Only the lease's holder moves a certificate on.
      await second.reschedule(claimed.keys[0]!, "another claim", at);
      expect((await claim(second, at + minute)).keys).toEqual([]);
      await first.reschedule(claimed.keys[0]!, claimed.leaseToken, at);
      expect((await claim(second, at + minute)).keys).toEqual([claimed.keys[0]]);
      // Every lease lapsed: whoever claims next takes them (their holder died, say).
      expect((await claim(second, at + 11 * minute)).keys).toHaveLength(3);
    });

    it("a turn held by an instance that died lapses with its lease", async () => {
      const { database } = await instance();
      const queue = new OcspSweepQueueRepository(database);
      const holder = async () => (await sql<{ holder: string | null }>`select holder from ocsp_sweep_turn`.execute(database.db)).rows[0]!.holder;
      const at = clock();
      const held = await queue.claim(at, 10, 10 * minute);
      await queue.claim(at + 10 * minute - 1, 10, minute);
      expect(await holder()).toBe(held.leaseToken);
      const after = await queue.claim(at + 10 * minute, 10, minute);
      expect(await holder()).toBe(after.leaseToken);
      // The late holder's giving back changes nothing now.
      await queue.endTurn(held.leaseToken, at);
      expect(await holder()).toBe(after.leaseToken);
    });

    // Instances of their own processes share a database on PostgreSQL (SQLite serves one): defined there only, not skipped.
    (target.name === "postgres" ? it : () => undefined)("two instances sweeping at once never both ask for one certificate", async () => {
      const one = await instance({ ocspSweepPerSecond: 50 });
      const two = await instance({ ocspSweepPerSecond: 50 });
      const account = await one.domain.accounts.create("two");
      for (let i = 0; i < 12; i++) await registered(one.domain, account.id);
      await responderKnowsAll();
      later(minute);
      const rounds = await Promise.all([one.domain.ocspSweep.round(), two.domain.ocspSweep.round()]);
      expect(rounds.map((r) => r.asked).sort((a, b) => a - b)).toEqual([0, 12]);
      expect(proxy.requests).toBe(12);
      later(minute);
      const again = await Promise.all([one.domain.ocspSweep.round(), two.domain.ocspSweep.round()]);
      expect(again.map((r) => r.asked)).toEqual([0, 0]);
      expect(proxy.requests).toBe(12);
    });
  });
}
