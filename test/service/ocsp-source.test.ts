import { X509Certificate } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CertificateStatus_CheckMethod as CheckMethod, CertificateStatus_Status as Status, CrlReason } from "../../gen/service/verify/v2/certificate_pb.ts";
import { createTenant, expectRpcError, setupClients, type Clients, type Tenant } from "../support/certificate-rpc.ts";
import { CrlHttpServer } from "../support/crl-http-server.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { OcspProxy } from "../support/ocsp-proxy.ts";
import { OpensslCrlCa, type IssuedLeaf } from "../support/openssl-crl-ca.ts";
import { freePort, OpensslOcspResponder, responderCertificate } from "../support/openssl-ocsp.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * The OCSP source and method selection through the real server in
 * production mode: a CA run with `openssl ca`, `openssl ocsp` answering from
 * its database behind a counting proxy, its CRL served from a loopback HTTP
 * server, certificates registered with CheckCertificateStatusByContent.
 */
const targets = await databaseTargets();
const policy = "1.2.392.200149.8.5.1.1.20";

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(`OCSP source and method selection, ${targetTitle(target)}`, () => {
    let dir: string;
    let scratch: ScratchDatabase;
    let http: CrlHttpServer;
    let ca: OpensslCrlCa;
    let responder: OpensslOcspResponder;
    let proxy: OcspProxy;
    let server: TestServer;
    let tenant: Tenant;
    let api: Clients;
    let closedPort: number;
    const leaves = {} as Record<"good" | "revoked" | "unknown" | "both" | "crlDown" | "ocspDown" | "crlOnly" | "ocspOnly", IssuedLeaf>;
    let revokedAt: number;
    const settings = () => ({
      mode: "production",
      trustAnchorsFile: path.join(dir, "anchors.json"),
      secretKeyFile: path.join(dir, "shared.key"),
      crlFetchTimeoutMs: 1000,
      ocspTimeoutMs: 1000,
    });

    const check = (leaf: IssuedLeaf, checkMethod = CheckMethod.UNSPECIFIED, clients = api) =>
      clients.certificates.checkCertificateStatusByContent({ certificate: leaf.der, checkMethod });

    beforeAll(async () => {
      dir = mkdtempSync(path.join(tmpdir(), "shomei-ocsp-service-"));
      mkdirSync(path.join(dir, "ca"));
      http = new CrlHttpServer();
      await http.start();
      ca = new OpensslCrlCa(path.join(dir, "ca"), "test OCSP service CA");
      const delegated = responderCertificate(dir, "responder", ca);
      responder = new OpensslOcspResponder(ca, delegated, { nextUpdateMinutes: 60 });
      proxy = new OcspProxy(undefined);
      await proxy.start();
      closedPort = await freePort();
      const crl = http.url("/ca.crl");
      const ocsp = proxy.url;
      leaves.good = ca.issue("good", "", policy, ocsp);
      leaves.revoked = ca.issue("revoked", "", policy, ocsp);
      leaves.unknown = ca.issue("unknown", "", policy, ocsp);
      leaves.both = ca.issue("both", crl, policy, ocsp);
      leaves.crlDown = ca.issue("crl-down", http.url("/missing.crl"), policy, ocsp);
      leaves.ocspDown = ca.issue("ocsp-down", crl, policy, `http://127.0.0.1:${closedPort}/`);
      leaves.crlOnly = ca.issue("crl-only", crl, policy);
      leaves.ocspOnly = ca.issue("ocsp-only", "", policy, ocsp);
      revokedAt = ca.revoke(leaves.revoked, "affiliationChanged");
      http.publish("/ca.crl", ca.gencrl().der);
      // The responder does not know the "unknown" certificate: its line leaves the database openssl answers from.
      const index = readFileSync(ca.indexPath, "utf8").split("\n");
      writeFileSync(ca.indexPath, index.filter((line) => !line.split("\t")[3]?.toLowerCase().endsWith(leaves.unknown.serialHex)).join("\n"));
      await responder.start();
      proxy.upstream = responder.url;
      const issues = [{ type: "jpki_card_digital_signature", policyOid: policy, keyUsage: ["digitalSignature", "nonRepudiation"] }];
      writeFileSync(path.join(dir, "anchors.json"), JSON.stringify({ anchors: [{ name: "test OCSP service CA", certificates: "ca/ca.pem", issues }] }));
    });

    // A server and database of each test's own: the responses one test stores, and the metrics it moves, are no other test's starting point.
    beforeEach(async () => {
      scratch = await target.create();
      server = await startTestServer(scratch.url, settings());
      tenant = await createTenant(server, "ocsp");
      api = setupClients(server, tenant.token);
      proxy.requests = 0;
    });

    afterEach(async () => {
      await server?.close();
      await scratch?.drop();
    });

    afterAll(async () => {
      await proxy?.close();
      await responder?.stop();
      await http?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("OCSP answers GOOD, REVOKED with openssl's reason and time, and UNKNOWN, recorded as CHECK_METHOD_OCSP", async () => {
      const before = Math.floor(Date.now() / 1000) * 1000;
      const good = (await check(leaves.good, CheckMethod.OCSP)).certificateStatus!;
      expect({ status: good.status, method: good.checkMethod, reason: good.revokedReason }).toEqual({ status: Status.GOOD, method: CheckMethod.OCSP, reason: undefined });
      expect(timestampMs(good.sourceUpdatedAt!)).toBeGreaterThanOrEqual(before);
      const revoked = (await check(leaves.revoked, CheckMethod.OCSP)).certificateStatus!;
      expect({ status: revoked.status, method: revoked.checkMethod, reason: revoked.revokedReason }).toEqual({
        status: Status.REVOKED, method: CheckMethod.OCSP, reason: CrlReason.AFFILIATION_CHANGED,
      });
      expect(timestampMs(revoked.revokedAt!)).toBe(revokedAt);
      const unknown = (await check(leaves.unknown, CheckMethod.OCSP)).certificateStatus!;
      expect({ status: unknown.status, method: unknown.checkMethod }).toEqual({ status: Status.UNKNOWN, method: CheckMethod.OCSP });
      expect(proxy.requests).toBe(3);
    });

    it("a certificate whose issuer offers only one method answers by it, and refuses the other with CHECK_METHOD_UNSUPPORTED", async () => {
      expect((await check(leaves.crlOnly)).certificateStatus?.checkMethod).toBe(CheckMethod.CRL);
      expect((await check(leaves.ocspOnly)).certificateStatus?.checkMethod).toBe(CheckMethod.OCSP);
      await expectRpcError(check(leaves.crlOnly, CheckMethod.OCSP), Code.FailedPrecondition, "ERROR_REASON_CHECK_METHOD_UNSUPPORTED", "check_method");
      await expectRpcError(check(leaves.ocspOnly, CheckMethod.CRL), Code.FailedPrecondition, "ERROR_REASON_CHECK_METHOD_UNSUPPORTED", "check_method");
    });

    it("with both offered, CRL answers first (the default order) and OCSP when the CRL cannot, and the other way round", async () => {
      const both = (await check(leaves.both)).certificateStatus!;
      expect({ status: both.status, method: both.checkMethod }).toEqual({ status: Status.GOOD, method: CheckMethod.CRL });
      const fellBack = (await check(leaves.crlDown)).certificateStatus!;
      expect({ status: fellBack.status, method: fellBack.checkMethod }).toEqual({ status: Status.GOOD, method: CheckMethod.OCSP });
      const crlAnswered = (await check(leaves.ocspDown)).certificateStatus!;
      expect({ status: crlAnswered.status, method: crlAnswered.checkMethod }).toEqual({ status: Status.GOOD, method: CheckMethod.CRL });
      // Asked for by name, a method that cannot answer is unavailable: no fallback.
      const error = await expectRpcError(check(leaves.ocspDown, CheckMethod.OCSP), Code.Unavailable, "ERROR_REASON_SOURCE_UNAVAILABLE");
      expect(error.rawMessage).toMatch(/ECONNREFUSED/);
      await expectRpcError(check(leaves.crlDown, CheckMethod.CRL), Code.Unavailable, "ERROR_REASON_SOURCE_UNAVAILABLE");
    });

    it("a batch asks the responder once per certificate it has no response for, and never again before nextUpdate", async () => {
      const ids = await Promise.all([leaves.good, leaves.revoked, leaves.ocspOnly, leaves.both].map(async (l) => (await check(l)).certificate!.id));
      const before = proxy.requests;
      const response = await api.certificates.batchCheckCertificateStatus({ certificateIds: ids, checkMethod: CheckMethod.OCSP });
      expect(response.results.map((r) => [r.certificateStatus?.status, r.certificateStatus?.checkMethod])).toEqual([
        [Status.GOOD, CheckMethod.OCSP], [Status.REVOKED, CheckMethod.OCSP], [Status.GOOD, CheckMethod.OCSP], [Status.GOOD, CheckMethod.OCSP],
      ]);
      // good, revoked and ocspOnly were asked already; "both" had been answered by CRL.
      expect(proxy.requests).toBe(before + 1);
      await api.certificates.batchCheckCertificateStatus({ certificateIds: ids, checkMethod: CheckMethod.OCSP });
      expect(proxy.requests).toBe(before + 1);
    });

    it("a second instance on the same database answers from the responses the first stored; its order can put OCSP first", async () => {
      // The first instance stores OCSP responses for both certificates.
      expect((await check(leaves.revoked, CheckMethod.OCSP)).certificateStatus?.checkMethod).toBe(CheckMethod.OCSP);
      expect((await check(leaves.both, CheckMethod.OCSP)).certificateStatus?.checkMethod).toBe(CheckMethod.OCSP);
      const before = proxy.requests;
      const second = await startTestServer(scratch.url, { ...settings(), dataDir: path.join(dir, "second"), checkMethodOrder: "ocsp,crl" });
      try {
        const secondApi = setupClients(second, tenant.token);
        const revoked = (await check(leaves.revoked, CheckMethod.UNSPECIFIED, secondApi)).certificateStatus!;
        expect({ status: revoked.status, method: revoked.checkMethod, reason: revoked.revokedReason }).toEqual({
          status: Status.REVOKED, method: CheckMethod.OCSP, reason: CrlReason.AFFILIATION_CHANGED,
        });
        expect((await check(leaves.both, CheckMethod.UNSPECIFIED, secondApi)).certificateStatus?.checkMethod).toBe(CheckMethod.OCSP);
        expect(proxy.requests).toBe(before);
      } finally {
        await second.close();
      }
    });

    it("the metrics count requests per responder by outcome and answers from stored responses; failures are logged without the certificate", async () => {
      // Six certificates asked of the responder, one of a responder that is down, and one answered again from the stored response.
      for (const leaf of [leaves.good, leaves.revoked, leaves.unknown, leaves.ocspOnly, leaves.both, leaves.crlDown]) await check(leaf, CheckMethod.OCSP);
      await expectRpcError(check(leaves.ocspDown, CheckMethod.OCSP), Code.Unavailable, "ERROR_REASON_SOURCE_UNAVAILABLE");
      await check(leaves.good, CheckMethod.OCSP);
      const text = await (await fetch(`${server.url}/metrics`)).text();
      const anchor = `sha256:${new X509Certificate(ca.der).fingerprint256.replace(/:/g, "").toLowerCase()}`;
      expect(text).toContain(`shomei_ocsp_requests_total{anchor="${anchor}",url="${proxy.url}",outcome="fetched"} 6`);
      expect(text).toContain(`shomei_ocsp_requests_total{anchor="${anchor}",url="http://127.0.0.1:${closedPort}/",outcome="fetch_failed"} 1`);
      expect(text).toMatch(/shomei_ocsp_cached_answers_total [1-9]\d*/);
      const failures = server.logs.filter((l) => (l.ocsp as { outcome?: string } | undefined)?.outcome === "fetch_failed");
      expect(failures).toHaveLength(1);
      expect(JSON.stringify(failures)).not.toContain(leaves.ocspDown.serialHex);
    });
  });
}
