import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { OcspProxy } from "../support/ocsp-proxy.ts";
import { OpensslCrlCa } from "../support/openssl-crl-ca.ts";
import { OpensslOcspResponder, responderCertificate } from "../support/openssl-ocsp.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * The server runs the OCSP sweep's rounds itself when SHOMEI_OCSP_SWEEP=on,
 * and not at all when it is off (the rounds' rules are in
 * test/storage/ocsp-sweep.test.ts).
 */
const targets = await databaseTargets();
const policy = "1.2.392.200149.8.5.1.1.20";

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(`OCSP sweep in the server, ${targetTitle(target)}`, () => {
    let dir: string;
    let ca: OpensslCrlCa;
    let responder: OpensslOcspResponder;
    let proxy: OcspProxy;
    let scratch: ScratchDatabase;
    let server: TestServer | undefined;
    let leafCount = 0;
    const settings = (ocspSweep: "on" | "off") => ({
      mode: "production",
      trustAnchorsFile: path.join(dir, "anchors.json"),
      secretKeyFile: path.join(dir, "shared.key"),
      ocspTimeoutMs: 2000,
      ocspSweep,
    });

    /** Starts a server, registers a certificate of the CA (OCSP only) without a check, and returns its ids. */
    async function serverWithCertificate(ocspSweep: "on" | "off"): Promise<{ accountId: string; certificateId: string }> {
      server = await startTestServer(scratch.url, settings(ocspSweep));
      const account = await server.domain.accounts.create(`sweep-${leafCount}`, "active");
      const leaf = ca.issue(`server-leaf-${++leafCount}`, "", policy, proxy.url);
      await responder.stop();
      await responder.start(); // it reads the CA's database when it starts
      proxy.upstream = responder.url;
      const { certificate } = await server.domain.registry.register(account.id, await server.domain.registry.recognize(leaf.der));
      return { accountId: account.id, certificateId: certificate.id };
    }

    beforeAll(async () => {
      dir = mkdtempSync(path.join(tmpdir(), "shomei-ocsp-sweep-server-"));
      mkdirSync(path.join(dir, "ca"));
      ca = new OpensslCrlCa(path.join(dir, "ca"), "test OCSP sweep server CA");
      responder = new OpensslOcspResponder(ca, responderCertificate(dir, "responder", ca), { nextUpdateMinutes: 60 });
      await responder.start();
      proxy = new OcspProxy(responder.url);
      await proxy.start();
      const issues = [{ type: "jpki_card_digital_signature", policyOid: policy, keyUsage: ["digitalSignature", "nonRepudiation"] }];
      writeFileSync(path.join(dir, "anchors.json"), JSON.stringify({ anchors: [{ name: "test OCSP sweep server CA", certificates: "ca/ca.pem", issues }] }));
    });

    beforeEach(async () => {
      scratch = await target.create();
      proxy.requests = 0;
    });

    afterEach(async () => {
      await server?.close();
      server = undefined;
      await scratch?.drop();
    });

    afterAll(async () => {
      await proxy?.close();
      await responder?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it("on: the server sweeps by itself, records the first answer and counts it in /metrics", async () => {
      // Registered while a server with the sweep off runs: it asks nothing.
      const { accountId, certificateId } = await serverWithCertificate("off");
      await server!.close();
      expect(server!.domain.ocspSweep.counts.rounds).toBe(0);
      expect(proxy.requests).toBe(0);

      server = await startTestServer(scratch.url, settings("on"));
      const running = server;
      const statuses = async () => (await running.domain.statusChecks.listStatuses(accountId, certificateId, 10, "")).statuses.map((s) => [s.status, s.checkMethod]);
      await expect.poll(statuses, { timeout: 20_000 }).toEqual([["good", "ocsp"]]);
      expect(running.domain.ocspSweep.counts.asked).toBe(1);
      const metrics = await (await fetch(`${running.url}/metrics`)).text();
      expect(metrics).toMatch(/^shomei_ocsp_sweep_asked_total 1$/m);
      expect(metrics).toMatch(/^shomei_ocsp_sweep_changes_total 0$/m);
      expect(proxy.requests).toBe(1);
    });
  });
}
