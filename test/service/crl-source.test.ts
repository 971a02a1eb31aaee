import { X509Certificate } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CertificateStatus_CheckMethod as CheckMethod, CertificateStatus_Status as Status, CrlReason } from "../../gen/service/verify/v2/certificate_pb.ts";
import type { CrlIssuer } from "../../src/domain/certificates/crl/crl-lists.ts";
import { countStatuses, createTenant, expectRpcError, setupClients, type Clients, type Tenant } from "../support/certificate-rpc.ts";
import { CrlHttpServer } from "../support/crl-http-server.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { OpensslCrlCa, type IssuedLeaf } from "../support/openssl-crl-ca.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * The CRL source through the real server in production mode: a CA run with
 * `openssl ca`, its lists served from a loopback HTTP server (and a file),
 * certificates registered with CheckCertificateStatusByContent.
 */
const targets = await databaseTargets();
const policy = "1.2.392.200149.8.5.1.1.20";
const dayMs = 24 * 3600 * 1000;

/** A thisUpdate in the past, so that a later issue's (now) is later and not in the future. */
const wholeSecondsAgo = (s: number) => Math.floor(Date.now() / 1000) * 1000 - s * 1000;

function anchorId(ca: OpensslCrlCa): string {
  return `sha256:${new X509Certificate(ca.der).fingerprint256.replace(/:/g, "").toLowerCase()}`;
}

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(`CRL source, ${targetTitle(target)}`, () => {
    let dir: string;
    let scratch: ScratchDatabase;
    let http: CrlHttpServer;
    let ca: OpensslCrlCa;
    let fileCa: OpensslCrlCa;
    let impostor: OpensslCrlCa;
    let server: TestServer;
    let tenant: Tenant;
    let api: Clients;
    let fileListPath: string;
    let cas = 0;
    const settings = () => ({
      mode: "production",
      trustAnchorsFile: path.join(dir, "anchors.json"),
      secretKeyFile: path.join(dir, "shared.key"),
      crlFetchTimeoutMs: 1000,
    });

    const check = (leaf: IssuedLeaf, checkMethod = CheckMethod.UNSPECIFIED) =>
      api.certificates.checkCertificateStatusByContent({ certificate: leaf.der, checkMethod });
    const issuer = (): CrlIssuer => server.domain.crlLists.issuer(anchorId(ca))!;

    beforeAll(() => {
      dir = mkdtempSync(path.join(tmpdir(), "shomei-crl-"));
      for (const name of ["file-ca", "impostor"]) mkdirSync(path.join(dir, name));
      fileCa = new OpensslCrlCa(path.join(dir, "file-ca"), "test file CRL CA");
      impostor = new OpensslCrlCa(path.join(dir, "impostor"), "test CRL CA");
      fileListPath = path.join(dir, "file-ca.crl");
    });

    // A CA, distribution points, server and database of each test's own: the revocations, lists, metrics and logs
    // one test makes are no other test's starting point.
    beforeEach(async () => {
      const caDir = `ca-${++cas}`;
      mkdirSync(path.join(dir, caDir));
      ca = new OpensslCrlCa(path.join(dir, caDir), "test CRL CA");
      http = new CrlHttpServer();
      await http.start();
      const issues = [{ type: "jpki_card_digital_signature", policyOid: policy, keyUsage: ["digitalSignature", "nonRepudiation"] }];
      writeFileSync(
        path.join(dir, "anchors.json"),
        JSON.stringify({
          anchors: [
            { name: "test CRL CA", certificates: `${caDir}/ca.pem`, issues },
            // Its certificates name an http point nobody serves; the anchor's crlUrls says where the list is.
            { name: "test file CRL CA", certificates: "file-ca/ca.pem", issues, crlUrls: [pathToFileURL(fileListPath).href] },
          ],
        }),
      );
      scratch = await target.create();
      server = await startTestServer(scratch.url, settings());
      tenant = await createTenant(server, "crl");
      api = setupClients(server, tenant.token);
    });

    afterEach(async () => {
      await server?.close();
      await http?.close();
      await scratch?.drop();
    });

    afterAll(() => {
      rmSync(dir, { recursive: true, force: true });
    });

    /** Four certificates on the list at `pathName`, revoked for four reasons, and one left good; the list naming them, published. */
    function revokedFour(pathName: string) {
      const url = http.url(pathName);
      const leaves = {
        keyCompromise: ca.issue("kc", url),
        affiliationChanged: ca.issue("ac", url),
        certificateHold: ca.issue("hold", url),
        superseded: ca.issue("sup", url),
      };
      const good = ca.issue("good", url);
      const revokedAt = Object.fromEntries(Object.entries(leaves).map(([reason, leaf]) => [reason, ca.revoke(leaf, reason as keyof typeof leaves)]));
      const list = ca.gencrl();
      http.publish(pathName, list.der);
      return { url, leaves, good, revokedAt, list };
    }

    /** The list at `pathName` served again with one byte changed, and refreshed: refused. */
    async function tamperWith(pathName: string) {
      const der = Buffer.from(ca.gencrl().der);
      der[der.length - 40]! ^= 0x01;
      http.publish(pathName, der);
      const report = await server.domain.crlLists.refresh(issuer(), http.url(pathName));
      expect(report.outcome).toBe("rejected");
      return report;
    }

    it("revoked entries answer REVOKED with openssl's reason and time; others GOOD by CRL as of thisUpdate", async () => {
      const { leaves, good, revokedAt, list } = revokedFour("/main.crl");
      const expected: Record<keyof typeof leaves, CrlReason> = {
        keyCompromise: CrlReason.KEY_COMPROMISE,
        affiliationChanged: CrlReason.AFFILIATION_CHANGED,
        certificateHold: CrlReason.CERTIFICATE_HOLD,
        superseded: CrlReason.SUPERSEDED,
      };
      for (const [reason, leaf] of Object.entries(leaves) as [keyof typeof leaves, IssuedLeaf][]) {
        const { certificateStatus: status } = await check(leaf);
        expect({ reason, status: status?.status, why: status?.revokedReason, method: status?.checkMethod }).toEqual({
          reason, status: Status.REVOKED, why: expected[reason], method: CheckMethod.CRL,
        });
        expect(timestampMs(status!.revokedAt!)).toBe(revokedAt[reason]);
        expect(timestampMs(status!.sourceUpdatedAt!)).toBe(list.thisUpdate);
      }
      const { certificateStatus: status } = await check(good, CheckMethod.CRL);
      expect(status?.status).toBe(Status.GOOD);
      expect(status?.checkMethod).toBe(CheckMethod.CRL);
      expect(status?.revokedReason).toBeUndefined();
      expect(timestampMs(status!.sourceUpdatedAt!)).toBe(list.thisUpdate);
      // Five checks, one download.
      expect(http.count("/main.crl").requests).toBe(1);
    });

    it("OCSP asked of a CRL-only source is failed_precondition CHECK_METHOD_UNSUPPORTED", async () => {
      const leaf = ca.issue("ocsp-asked", http.url("/main.crl"));
      await expectRpcError(check(leaf, CheckMethod.OCSP), Code.FailedPrecondition, "ERROR_REASON_CHECK_METHOD_UNSUPPORTED", "check_method");
    });

    it("an expired certificate the list does not name is UNKNOWN, unless the list keeps expired entries", async () => {
      const url = http.url("/expired.crl");
      const validity = { notBefore: wholeSecondsAgo(40 * 24 * 3600), notAfter: wholeSecondsAgo(10 * 24 * 3600) };
      const expired = ca.issue("expired", url, policy, undefined, validity);
      const expiredRevoked = ca.issue("expired-revoked", url, policy, undefined, validity);
      const current = ca.issue("current", url);
      ca.revoke(expiredRevoked, "keyCompromise");
      http.publish("/expired.crl", ca.gencrl().der);

      const dropped = (await check(expired)).certificateStatus!;
      expect({ status: dropped.status, method: dropped.checkMethod, reason: dropped.revokedReason }).toEqual({
        status: Status.UNKNOWN, method: CheckMethod.CRL, reason: undefined,
      });
      expect((await check(expiredRevoked)).certificateStatus).toMatchObject({ status: Status.REVOKED, revokedReason: CrlReason.KEY_COMPROMISE });
      expect((await check(current)).certificateStatus?.status).toBe(Status.GOOD);

      // expiredCertsOnCRL (2.5.29.60) at or before the expiry: the list still accounts for the certificate.
      const keptSince = new Date(validity.notAfter - dayMs).toISOString().replace(/[-:T]/g, "").replace(/\.\d+Z$/, "Z");
      const keeping = ca.gencrl({ extensions: [`2.5.29.60 = DER:18:0F:${Buffer.from(keptSince).toString("hex").replace(/(..)(?!$)/g, "$1:")}`] });
      http.publish("/expired.crl", keeping.der);
      expect((await server.domain.crlLists.refresh(issuer(), url)).outcome).toBe("fetched");
      const kept = (await check(expired)).certificateStatus!;
      expect({ status: kept.status, method: kept.checkMethod }).toEqual({ status: Status.GOOD, method: CheckMethod.CRL });

      // Kept only since after the expiry: not known again.
      const lateSince = new Date(validity.notAfter + dayMs).toISOString().replace(/[-:T]/g, "").replace(/\.\d+Z$/, "Z");
      http.publish("/expired.crl", ca.gencrl({ extensions: [`2.5.29.60 = DER:18:0F:${Buffer.from(lateSince).toString("hex").replace(/(..)(?!$)/g, "$1:")}`] }).der);
      expect((await server.domain.crlLists.refresh(issuer(), url)).outcome).toBe("fetched");
      expect((await check(expired)).certificateStatus?.status).toBe(Status.UNKNOWN);
    });

    it("a conditional request that gets 304 keeps the list without downloading it again", async () => {
      const url = http.url("/main.crl");
      http.publish("/main.crl", ca.gencrl().der);
      expect((await check(ca.issue("held", url))).certificateStatus?.status).toBe(Status.GOOD);
      const before = http.count("/main.crl");
      const report = await server.domain.crlLists.refresh(issuer(), url);
      expect(report.outcome).toBe("not_modified");
      const after = http.count("/main.crl");
      expect(after).toEqual({ requests: before.requests + 1, bodyBytes: before.bodyBytes, notModified: before.notModified + 1 });
    });

    it("a new list is fetched, verified and used; a lower crlNumber is refused and the newer list stays", async () => {
      const url = http.url("/next.crl");
      const leaf = ca.issue("later-revoked", url);
      ca.setNextCrlNumber(10);
      const first = ca.gencrl({ thisUpdate: wholeSecondsAgo(5) });
      http.publish("/next.crl", first.der);
      expect((await check(leaf)).certificateStatus?.status).toBe(Status.GOOD);

      ca.revoke(leaf, "keyCompromise");
      ca.setNextCrlNumber(20);
      const second = ca.gencrl();
      http.publish("/next.crl", second.der);
      expect((await server.domain.crlLists.refresh(issuer(), url)).outcome).toBe("fetched");
      const revoked = (await check(leaf)).certificateStatus!;
      expect(revoked.status).toBe(Status.REVOKED);
      expect(timestampMs(revoked.sourceUpdatedAt!)).toBe(second.thisUpdate);

      // An older issue (crlNumber 10, not listing the revocation) served again: refused.
      http.publish("/next.crl", first.der);
      const report = await server.domain.crlLists.refresh(issuer(), url);
      expect(report.outcome).toBe("rejected");
      expect(report.detail).toMatch(/crlNumber 10 is lower than 20/);
      expect((await check(leaf)).certificateStatus?.status).toBe(Status.REVOKED);
      // A lower number with a later thisUpdate is refused too.
      ca.setNextCrlNumber(15);
      http.publish("/next.crl", ca.gencrl({ thisUpdate: second.thisUpdate }).der);
      expect((await server.domain.crlLists.refresh(issuer(), url)).outcome).toBe("rejected");
      expect((await check(leaf)).certificateStatus?.status).toBe(Status.REVOKED);
    });

    describe("a list that must not be trusted never gives GOOD", () => {
      const bad: Record<string, (url: string) => Buffer> = {
        "a tampered byte": () => {
          const der = Buffer.from(ca.gencrl().der);
          der[der.length - 40]! ^= 0x01;
          return der;
        },
        "a list signed by another key under the CA's name": () => impostor.gencrl().der,
        "a list past its nextUpdate": () => ca.gencrl({ thisUpdate: Date.now() - 2 * dayMs, nextUpdate: Date.now() - dayMs }).der,
        "a list not yet valid (thisUpdate tomorrow)": () => ca.gencrl({ thisUpdate: Date.now() + dayMs, nextUpdate: Date.now() + 2 * dayMs }).der,
        "an unknown critical extension": () => ca.gencrl({ extensions: ["1.2.3.4.5.6 = critical,DER:05:00"] }).der,
        "an issuingDistributionPoint naming another point": () =>
          ca.gencrl({ extensions: ["issuingDistributionPoint = critical,@idp", "[ idp ]", "fullname = URI:http://127.0.0.1:1/other.crl"] }).der,
        "an issuingDistributionPoint for CA certificates only": (url) =>
          ca.gencrl({ extensions: ["issuingDistributionPoint = critical,@idp", "[ idp ]", `fullname = URI:${url}`, "onlyCA = TRUE"] }).der,
        "an issuingDistributionPoint for some reasons only": (url) =>
          ca.gencrl({ extensions: ["issuingDistributionPoint = critical,@idp", "[ idp ]", `fullname = URI:${url}`, "onlysomereasons = keyCompromise"] }).der,
      };
      for (const [n, [name, make]] of Object.entries(bad).entries()) {
        it(name, async () => {
          const pathName = `/bad-${n}.crl`;
          const url = http.url(pathName);
          const leaf = ca.issue(`bad-${n + 1}`, url);
          http.publish(pathName, make(url));
          const before = await countStatuses(server, tenant.account.id);
          const error = await expectRpcError(check(leaf), Code.Unavailable, "ERROR_REASON_SOURCE_UNAVAILABLE");
          expect(error.rawMessage).toContain(url);
          expect(await countStatuses(server, tenant.account.id)).toBe(before);
          expect(http.count(pathName).requests).toBe(1);
        });
      }

      it("an issuingDistributionPoint naming the point it was fetched from is fine", async () => {
        const url = http.url("/idp.crl");
        const leaf = ca.issue("idp-ok", url);
        http.publish("/idp.crl", ca.gencrl({ extensions: ["issuingDistributionPoint = critical,@idp", "[ idp ]", `fullname = URI:${url}`, "onlyuser = TRUE"] }).der);
        expect((await check(leaf)).certificateStatus?.status).toBe(Status.GOOD);
      });

      it("a tampered list does not replace the list held", async () => {
        const url = http.url("/main.crl");
        http.publish("/main.crl", ca.gencrl().der);
        expect((await check(ca.issue("before-tamper", url))).certificateStatus?.status).toBe(Status.GOOD);
        const der = Buffer.from(ca.gencrl().der);
        der[der.length - 40]! ^= 0x01;
        http.publish("/main.crl", der);
        const report = await server.domain.crlLists.refresh(issuer(), url);
        expect(report.outcome).toBe("rejected");
        expect(report.detail).toMatch(/signature_invalid/);
        const leaf = ca.issue("after-tamper", url);
        expect((await check(leaf)).certificateStatus?.status).toBe(Status.GOOD);
      });
    });

    for (const behaviour of ["error500", "silent"] as const) {
      it(`a distribution point that ${behaviour === "error500" ? "answers 500" : "stops answering"} leaves the list held in use`, async () => {
        const pathName = `/flaky-${behaviour}.crl`;
        const url = http.url(pathName);
        const leaf = ca.issue(`flaky-${behaviour}`, url);
        const list = ca.gencrl();
        http.publish(pathName, list.der);
        expect((await check(leaf)).certificateStatus?.status).toBe(Status.GOOD);
        http.behave(pathName, behaviour);
        const report = await server.domain.crlLists.refresh(issuer(), url);
        expect(report.outcome).toBe("fetch_failed");
        expect(report.detail).toBe(behaviour === "error500" ? `${url}: HTTP 500` : `${url}: no answer within 1000 ms`);
        const status = (await check(leaf)).certificateStatus!;
        expect(status.status).toBe(Status.GOOD);
        expect(timestampMs(status.sourceUpdatedAt!)).toBe(list.thisUpdate);
        const stored = (await server.domain.crlLists.stored()).find((r) => r.url === url)!;
        expect(stored.lastError).toBe(report.detail);
        expect(stored.sha256).toBe(report.list?.sha256);
      });
    }

    it("a distribution point that fails before any list was loaded answers unavailable", async () => {
      const leaf = ca.issue("never-loaded", http.url("/missing.crl"));
      const error = await expectRpcError(check(leaf), Code.Unavailable, "ERROR_REASON_SOURCE_UNAVAILABLE");
      expect(error.rawMessage).toContain("HTTP 404");
    });

    it("file: URLs, configured for the anchor instead of the certificates' distribution points", async () => {
      const good = fileCa.issue("file-good", "http://127.0.0.1:1/unserved.crl");
      const revoked = fileCa.issue("file-revoked", "http://127.0.0.1:1/unserved.crl");
      const revokedAt = fileCa.revoke(revoked, "superseded");
      const list = fileCa.gencrl();
      writeFileSync(fileListPath, list.der);
      expect((await check(good)).certificateStatus).toMatchObject({ status: Status.GOOD, checkMethod: CheckMethod.CRL });
      const status = (await check(revoked)).certificateStatus!;
      expect({ status: status.status, reason: status.revokedReason }).toEqual({ status: Status.REVOKED, reason: CrlReason.SUPERSEDED });
      expect(timestampMs(status.revokedAt!)).toBe(revokedAt);
      const fileIssuer = server.domain.crlLists.issuer(anchorId(fileCa))!;
      expect((await server.domain.crlLists.refresh(fileIssuer, pathToFileURL(fileListPath).href)).outcome).toBe("not_modified");
    });

    it("a second instance on the same database answers from the list the first stored, and follows its updates", async () => {
      const pathName = "/shared.crl";
      const url = http.url(pathName);
      const leaf = ca.issue("shared", url);
      ca.setNextCrlNumber(100);
      const first = ca.gencrl({ thisUpdate: wholeSecondsAgo(5) });
      http.publish(pathName, first.der);
      expect((await check(leaf)).certificateStatus?.status).toBe(Status.GOOD);
      expect(http.count(pathName).requests).toBe(1);

      const second = await startTestServer(scratch.url, { ...settings(), dataDir: path.join(dir, "second") });
      try {
        const secondApi = setupClients(second, tenant.token);
        const secondIssuer = second.domain.crlLists.issuer(anchorId(ca))!;
        const status = (await secondApi.certificates.checkCertificateStatusByContent({ certificate: leaf.der })).certificateStatus!;
        expect(status.status).toBe(Status.GOOD);
        expect(timestampMs(status.sourceUpdatedAt!)).toBe(first.thisUpdate);
        // It loaded the first instance's copy from the database: no download of its own.
        expect(http.count(pathName).requests).toBe(1);

        ca.revoke(leaf, "affiliationChanged");
        ca.setNextCrlNumber(101);
        const next = ca.gencrl();
        http.publish(pathName, next.der);
        expect((await server.domain.crlLists.refresh(issuer(), url)).outcome).toBe("fetched");
        expect(http.count(pathName).requests).toBe(2);
        // The second instance's scheduled refresh finds the newer list in the database, confirmed moments ago.
        expect((await second.domain.crlLists.refresh(secondIssuer, url, false)).outcome).toBe("from_database");
        expect(http.count(pathName).requests).toBe(2);
        for (const instance of [api, secondApi]) {
          const revoked = (await instance.certificates.checkCertificateStatusByContent({ certificate: leaf.der })).certificateStatus!;
          expect({ status: revoked.status, reason: revoked.revokedReason }).toEqual({ status: Status.REVOKED, reason: CrlReason.AFFILIATION_CHANGED });
          expect(timestampMs(revoked.sourceUpdatedAt!)).toBe(next.thisUpdate);
        }

        // The second instance, asking the source itself, gets the older list served again: refused; the database keeps 101.
        http.publish(pathName, first.der);
        expect((await second.domain.crlLists.refresh(secondIssuer, url)).outcome).toBe("rejected");
        const stored = (await second.domain.crlLists.stored()).find((r) => r.url === url)!;
        expect(stored.crlNumber).toBe(101n);
        expect(stored.sha256).toBe((await server.domain.crlLists.refresh(issuer(), url, false)).list?.sha256);
      } finally {
        await second.close();
      }
    });

    it("shomei crl list shows each list, its state and its last error", async () => {
      // A current list of four entries whose last refresh was refused; one past its nextUpdate; one never served; the file list.
      const main = revokedFour("/main.crl");
      expect((await check(main.good)).certificateStatus?.status).toBe(Status.GOOD);
      await tamperWith("/main.crl");
      const lapsedLeaf = ca.issue("lapsed", http.url("/lapsed.crl"));
      http.publish("/lapsed.crl", ca.gencrl({ thisUpdate: Date.now() - 2 * dayMs, nextUpdate: Date.now() - dayMs }).der);
      await expectRpcError(check(lapsedLeaf), Code.Unavailable, "ERROR_REASON_SOURCE_UNAVAILABLE");
      await expectRpcError(check(ca.issue("never-loaded", http.url("/missing.crl"))), Code.Unavailable, "ERROR_REASON_SOURCE_UNAVAILABLE");
      const fileLeaf = fileCa.issue("file-listed", "http://127.0.0.1:1/unserved.crl");
      writeFileSync(fileListPath, fileCa.gencrl().der);
      expect((await check(fileLeaf)).certificateStatus?.status).toBe(Status.GOOD);

      const run = spawnSync(process.execPath, ["bin/shomei.js", "crl", "list"], {
        cwd: fileURLToPath(new URL("../..", import.meta.url)),
        encoding: "utf8",
        env: {
          PATH: process.env.PATH ?? "",
          DATABASE_URL: scratch.url,
          SHOMEI_MODE: "production",
          SHOMEI_TRUST_ANCHORS_FILE: settings().trustAnchorsFile,
          SHOMEI_SECRET_KEY_FILE: settings().secretKeyFile,
        },
      });
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
      const lines = run.stdout.trimEnd().split("\n").map((l) => l.split("\t"));
      const listed = lines.find((l) => l[1] === http.url("/main.crl"))!;
      expect(listed.slice(0, 3)).toEqual(["test CRL CA", http.url("/main.crl"), "current"]);
      expect(listed[6]).toBe("entries 4");
      expect(listed[8]).toMatch(/^last error .*signature_invalid/);
      const lapsed = lines.find((l) => l[1] === http.url("/lapsed.crl"))!;
      expect(lapsed[2]).toBe("stale");
      const missing = lines.find((l) => l[1] === http.url("/missing.crl"))!;
      expect(missing[2]).toBe("none");
      expect(missing[8]).toMatch(/HTTP 404$/);
      expect(lines.find((l) => l[1] === pathToFileURL(fileListPath).href)?.slice(0, 3)).toEqual(["test file CRL CA", pathToFileURL(fileListPath).href, "current"]);
    });

    it("the metrics describe each list", async () => {
      // A list of four entries fetched, confirmed unchanged, then refused; and a point that answered 500.
      const main = revokedFour("/main.crl");
      expect((await check(main.good)).certificateStatus?.status).toBe(Status.GOOD);
      expect((await server.domain.crlLists.refresh(issuer(), main.url)).outcome).toBe("not_modified");
      await tamperWith("/main.crl");
      const flakyLeaf = ca.issue("flaky", http.url("/flaky-error500.crl"));
      http.publish("/flaky-error500.crl", ca.gencrl().der);
      expect((await check(flakyLeaf)).certificateStatus?.status).toBe(Status.GOOD);
      http.behave("/flaky-error500.crl", "error500");
      expect((await server.domain.crlLists.refresh(issuer(), http.url("/flaky-error500.crl"))).outcome).toBe("fetch_failed");

      const text = await (await fetch(`${server.url}/metrics`)).text();
      const labels = `anchor="${anchorId(ca)}",url="${http.url("/main.crl")}"`;
      expect(text).toContain(`shomei_crl_entries{${labels}} 4`);
      expect(text).toMatch(new RegExp(`shomei_crl_next_update_seconds\\{${labels.replace(/[.?*+()[\]]/g, "\\$&")}\\} \\d`));
      expect(text).toContain(`shomei_crl_verification_failures_total{${labels}} 1`);
      expect(text).toContain(`shomei_crl_fetch_failures_total{anchor="${anchorId(ca)}",url="${http.url("/flaky-error500.crl")}"} 1`);
      expect(text).toContain(`shomei_crl_last_refresh{${labels},outcome="rejected"} 1`);
      const logged = server.logs.filter((l) => (l.crl as { url?: string } | undefined)?.url === http.url("/main.crl"));
      expect(logged.map((l) => (l.crl as { outcome: string }).outcome)).toEqual(["fetched", "not_modified", "rejected"]);
    });
  });
}
