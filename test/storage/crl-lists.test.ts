import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CrlLists, type CrlIssuer } from "../../src/domain/certificates/crl/crl-lists.ts";
import { CrlFetchError, type CrlFetcher } from "../../src/domain/certificates/crl/crl-fetcher.ts";
import { CrlListsRepository } from "../../src/storage/crl-lists-repository.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { OpensslCrlCa } from "../support/openssl-crl-ca.ts";
import { loadCrl } from "../../src/adapters/crl/load-crl.ts";
import { diffCrls } from "../../src/adapters/crl/diff-crl.ts";
import { ListChanges } from "../../src/domain/certificates/crl/list-changes.ts";
import { RegisteredBySerialRepository } from "../../src/storage/registered-by-serial-repository.ts";

/**
 * CrlLists on a clock the test moves, over the real repository: how long a
 * list held keeps answering, when lists are asked for again, one fetch per
 * list at a time, and crlNumber order kept by the database itself.
 */
const targets = await databaseTargets();
const hour = 3600_000;
const url = "http://crl.invalid/list.crl";

let dir: string;
let ca: OpensslCrlCa;
let issuer: CrlIssuer;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "shomei-crl-lists-"));
  ca = new OpensslCrlCa(dir, "test lists CA");
  issuer = { id: "sha256:test", name: "test lists CA", certificateDer: ca.der, crlUrls: undefined };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A promise settled by the test whenever it chooses, before or after anyone waits on it. */
function deferred<T>() {
  let resolve: (value: T) => void = () => undefined;
  let reject: (error: Error) => void = () => undefined;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/** A source the test scripts: the next answer, and how many times it was asked. */
class ScriptedSource {
  calls = 0;
  next: () => Promise<Uint8Array> = () => Promise.reject(new CrlFetchError(`${url}: HTTP 500`));
  readonly fetcher: CrlFetcher = async () => {
    this.calls++;
    return { kind: "fetched", der: await this.next(), etag: undefined, lastModified: undefined };
  };
}

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(`CRL lists, ${targetTitle(target)}`, () => {
    let scratch: ScratchDatabase;
    let database: Database;

    beforeAll(async () => {
      scratch = await target.create();
      database = await openDatabase(scratch.url);
      await migrateToLatest(database);
    });
    afterAll(async () => {
      await database?.close();
      await scratch?.drop();
    });

    function lists(source: ScriptedSource, clock: { now: number }, key = issuer): CrlLists {
      return new CrlLists(
        new Map([[key.id, key]]),
        new CrlListsRepository(database),
        source.fetcher,
        loadCrl,
        new ListChanges(diffCrls, new RegisteredBySerialRepository(database), () => clock.now),
        { fetchTimeoutMs: 1000, maxBytes: 1 << 20, refreshIntervalMs: hour },
        () => clock.now,
        undefined,
        () => 0.5, // no jitter
      );
    }

    it("the list held answers while its source fails, until its nextUpdate; then nothing does", async () => {
      const thisUpdate = Math.floor(Date.now() / 1000) * 1000;
      const list = ca.gencrl({ thisUpdate, nextUpdate: thisUpdate + 2 * hour });
      const clock = { now: thisUpdate + 1000 };
      const source = new ScriptedSource();
      source.next = async () => list.der;
      const issuerA = { ...issuer, id: "sha256:a" };
      const crls = lists(source, clock, issuerA);
      expect("crl" in (await crls.current(issuerA, url, clock.now))).toBe(true);
      const gate = deferred<Uint8Array>();
      source.next = () => gate.promise;

      // Due after min(interval, half the time to nextUpdate) = 1 hour: asked in the background while the list answers.
      clock.now = thisUpdate + hour + 2000;
      const found = await crls.current(issuerA, url, clock.now);
      expect("crl" in found && found.crl.sha256).toBe(createHash("sha256").update(list.der).digest("hex"));
      const background = crls.refresh(issuerA, url, false); // joins the refresh under way
      gate.reject(new CrlFetchError(`${url}: HTTP 500`));
      expect((await background).outcome).toBe("fetch_failed");
      expect(source.calls).toBe(2);
      expect("crl" in (await crls.current(issuerA, url, clock.now))).toBe(true);

      clock.now = thisUpdate + 2 * hour; // nextUpdate: no longer current
      const lapsed = await crls.current(issuerA, url, clock.now);
      expect(lapsed).toEqual({ problem: expect.stringMatching(/the list is not current .*HTTP 500/) });
    });

    it("after a failure the source is asked again after a back-off, not by every check", async () => {
      const clock = { now: Date.now() };
      const source = new ScriptedSource();
      const issuerB = { ...issuer, id: "sha256:b" };
      const crls = lists(source, clock, issuerB);
      expect(await crls.current(issuerB, url, clock.now)).toEqual({ problem: `${url}: HTTP 500` });
      clock.now += 5000;
      await crls.current(issuerB, url, clock.now);
      expect(source.calls).toBe(1);
      clock.now += 6000; // 10 s after the failure
      await crls.current(issuerB, url, clock.now);
      expect(source.calls).toBe(2);
      clock.now += 11_000; // the second failure doubles the wait to 20 s
      await crls.current(issuerB, url, clock.now);
      expect(source.calls).toBe(2);
    });

    it("concurrent checks share one fetch", async () => {
      const clock = { now: Date.now() };
      const source = new ScriptedSource();
      const gate = deferred<Uint8Array>();
      source.next = () => gate.promise;
      const issuerC = { ...issuer, id: "sha256:c" };
      const crls = lists(source, clock, issuerC);
      const checks = Array.from({ length: 5 }, () => crls.current(issuerC, url, clock.now));
      gate.resolve(ca.gencrl().der);
      const answers = await Promise.all(checks);
      expect(answers.every((a) => "crl" in a)).toBe(true);
      expect(source.calls).toBe(1);
    });

    it("the database keeps crlNumber order whoever writes: a lower number is not stored", async () => {
      const repository = new CrlListsRepository(database);
      const key = { issuerAnchor: "sha256:d", url };
      const base = { ...key, replacing: undefined, statusRecords: [], der: new Uint8Array([1, 2, 3]), etag: undefined, lastModified: undefined, nextUpdate: undefined, entries: 0, at: 1 };
      expect(await repository.saveList({ ...base, sha256: "a".repeat(64), thisUpdate: 1000, crlNumber: 2n ** 150n })).toBe(true);
      expect(await repository.saveList({ ...base, sha256: "b".repeat(64), thisUpdate: 2000, crlNumber: 2n ** 149n })).toBe(false);
      expect(await repository.saveList({ ...base, sha256: "c".repeat(64), thisUpdate: 2000, crlNumber: undefined })).toBe(false);
      expect(await repository.saveList({ ...base, sha256: "d".repeat(64), thisUpdate: 500, crlNumber: 2n ** 150n + 1n })).toBe(false);
      expect((await repository.find(key))?.sha256).toBe("a".repeat(64));
      expect(await repository.saveList({ ...base, sha256: "e".repeat(64), thisUpdate: 3000, crlNumber: 2n ** 150n + 1n })).toBe(true);
      const stored = await repository.find(key);
      expect({ sha256: stored?.sha256, crlNumber: stored?.crlNumber }).toEqual({ sha256: "e".repeat(64), crlNumber: 2n ** 150n + 1n });
      expect(Buffer.from((await repository.der(key, "e".repeat(64)))!)).toEqual(Buffer.from([1, 2, 3]));
    });

    it("a list is stored only over the list its changes were computed against", async () => {
      const repository = new CrlListsRepository(database);
      const key = { issuerAnchor: "sha256:e", url };
      const base = { ...key, replacing: undefined, statusRecords: [], der: new Uint8Array([1]), etag: undefined, lastModified: undefined, nextUpdate: undefined, entries: 0, at: 1, crlNumber: undefined };
      expect(await repository.saveList({ ...base, sha256: "a".repeat(64), thisUpdate: 1000 })).toBe(true);
      // Another instance installed "b" over "a" meanwhile: "c", diffed against "a", is not stored.
      expect(await repository.saveList({ ...base, replacing: "a".repeat(64), sha256: "b".repeat(64), thisUpdate: 2000 })).toBe(true);
      expect(await repository.saveList({ ...base, replacing: "a".repeat(64), sha256: "c".repeat(64), thisUpdate: 3000 })).toBe(false);
      expect((await repository.find(key))?.sha256).toBe("b".repeat(64));
      expect(await repository.saveList({ ...base, replacing: "b".repeat(64), sha256: "c".repeat(64), thisUpdate: 3000 })).toBe(true);
    });

    it("a list larger than a part comes back byte for byte; the parts of the list it replaced are gone", async () => {
      const repository = new CrlListsRepository(database);
      const key = { issuerAnchor: "sha256:f", url };
      const first = randomBytes(2.5 * 1024 * 1024);
      const second = randomBytes(1024 * 1024 + 1);
      const base = { ...key, statusRecords: [], etag: undefined, lastModified: undefined, nextUpdate: undefined, entries: 0, at: 1, crlNumber: undefined };
      expect(await repository.saveList({ ...base, replacing: undefined, der: first, sha256: "a".repeat(64), thisUpdate: 1000 })).toBe(true);
      expect(Buffer.from((await repository.der(key, "a".repeat(64)))!).equals(first)).toBe(true);
      // Refused (it replaces a list no longer stored): its parts do not stay either.
      expect(await repository.saveList({ ...base, replacing: "x".repeat(64), der: second, sha256: "b".repeat(64), thisUpdate: 2000 })).toBe(false);
      expect(await repository.saveList({ ...base, replacing: "a".repeat(64), der: second, sha256: "c".repeat(64), thisUpdate: 2000 })).toBe(true);
      expect(Buffer.from((await repository.der(key, "c".repeat(64)))!).equals(second)).toBe(true);
      expect(await repository.der(key, "a".repeat(64))).toBeUndefined();
      const parts = await database.db.selectFrom("crl_list_parts").select(["sha256", "part"]).where("issuer_anchor", "=", key.issuerAnchor).orderBy("part").execute();
      expect(parts).toEqual([{ sha256: "c".repeat(64), part: 0 }, { sha256: "c".repeat(64), part: 1 }]);
    });
  });
}
