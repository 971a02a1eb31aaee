import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { CheckMethod } from "../../src/domain/certificates/model.ts";
import type { CreatedMockCertificate } from "../../src/domain/mock/mock-environment.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { mockOf } from "../../src/app/mock/installed-mock.ts";

const targets = await databaseTargets();

/**
 * openssl's output (stdout and stderr together: `openssl ocsp` writes its
 * verdict on stderr). Asynchronous: the server it asks runs in this process.
 */
function openssl(cwd: string, ...args: string[]): Promise<{ status: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("openssl", args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    child.once("error", reject);
    child.once("close", (status) => resolve({ status, out }));
  });
}

/**
 * Mock mode through the real sources: SetMockCertificateStatus changes what
 * the mock CA's CRL and OCSP responder publish, the CRL and OCSP sources
 * read them over HTTP from the server's own routes, and openssl, as the
 * oracle, reads the same answers.
 */
for (const target of targets) {
  describe.skipIf(!!target.unavailable)(`mock environment through the real sources (${targetTitle(target)})`, () => {
    let scratch: ScratchDatabase;
    let server: TestServer;
    let dir: string;
    let accountId: string;
    let cert: CreatedMockCertificate;

    beforeAll(async () => {
      scratch = await target.create();
      server = await startTestServer(scratch.url);
      dir = mkdtempSync(path.join(tmpdir(), "shomei-mock-real-"));
      accountId = (await server.domain.accounts.create("mock-real", "active")).id;
      writeFileSync(path.join(dir, "ca.pem"), (await mockOf(server.domain).ca()).certificatePem);
    }, 60_000);

    // A certificate of each test's own: the status one test sets is no other test's starting point.
    beforeEach(async () => {
      cert = await mockOf(server.domain).createCertificate(accountId, { type: "jpki_card_digital_signature" });
      writeFileSync(path.join(dir, "c.pem"), cert.certificatePem);
    });

    afterAll(async () => {
      await server?.close();
      await scratch?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    const check = async (method: CheckMethod) => (await server.domain.statusChecks.checkCertificate({ accountId }, cert.certificate.id, method)).status;
    const ocsp = (...args: string[]) =>
      openssl(dir, "ocsp", "-issuer", "ca.pem", "-url", `${server.url}/mock/ocsp`, "-CAfile", "ca.pem", "-resp_text", ...args);

    it("a change appears through CRL and through OCSP exactly as set, and openssl reads the same", async () => {
      const revokedAt = Date.parse("2026-03-04T05:06:07Z");
      const sourceUpdatedAt = Date.parse("2026-03-05T00:00:00Z");
      await mockOf(server.domain).setStatus(accountId, cert.certificate.id, { status: "revoked", revokedReason: 1, revokedAt, sourceUpdatedAt });
      const expected = { status: "revoked", revokedAt, revokedReason: 1, sourceUpdatedAt };
      expect(await check("crl")).toMatchObject({ ...expected, checkMethod: "crl" });
      expect(await check("ocsp")).toMatchObject({ ...expected, checkMethod: "ocsp" });

      const answer = await ocsp("-cert", "c.pem");
      expect(answer.out).toContain("Response verify OK");
      expect(answer.out).toContain("c.pem: revoked");
      expect(answer.out).toContain("Reason: keyCompromise");
      expect(answer.out).toContain("Revocation Time: Mar  4 05:06:07 2026 GMT");
      expect(answer.out).toContain("This Update: Mar  5 00:00:00 2026 GMT");
      expect(answer.out).toContain("Produced At: Mar  5 00:00:00 2026 GMT");
      expect(answer.out).toContain("OCSP Signing");
    });

    it("dated back and set good again: the next checks see it at once, by both methods", async () => {
      const sourceUpdatedAt = Date.parse("2026-01-10T10:00:00Z");
      await mockOf(server.domain).setStatus(accountId, cert.certificate.id, { status: "good", sourceUpdatedAt });
      const good = { status: "good", revokedAt: null, revokedReason: null, sourceUpdatedAt };
      expect(await check("crl")).toMatchObject({ ...good, checkMethod: "crl" });
      expect(await check("ocsp")).toMatchObject({ ...good, checkMethod: "ocsp" });
      expect((await ocsp("-cert", "c.pem")).out).toContain("c.pem: good");
    });

    it("each change issues a CRL with a higher crlNumber, dated as set", async () => {
      const number = async () => {
        const der = Buffer.from(await (await fetch(`${server.url}/mock/ca.crl`)).arrayBuffer());
        writeFileSync(path.join(dir, "ca.crl"), der);
        const text = (await openssl(dir, "crl", "-inform", "DER", "-in", "ca.crl", "-CAfile", "ca.pem", "-noout", "-text")).out;
        expect(text).toContain("verify OK");
        return { crlNumber: Number(/X509v3 CRL Number: *\n\s*(\d+)/.exec(text)?.[1]), lastUpdate: /Last Update: (.+)/.exec(text)?.[1] };
      };
      const before = await number();
      await mockOf(server.domain).setStatus(accountId, cert.certificate.id, { status: "revoked", revokedReason: 3, sourceUpdatedAt: Date.parse("2026-02-01T00:00:00Z") });
      const after = await number();
      expect(after).toEqual({ crlNumber: before.crlNumber + 1, lastUpdate: "Feb  1 00:00:00 2026 GMT" });
      // Served again without a change: the same issue.
      expect(await number()).toEqual(after);
    });

    it("a serial the mock CA never issued is unknown", async () => {
      const answer = await ocsp("-serial", "0x0123456789abcdef");
      expect(answer.out).toContain("Response verify OK");
      expect(answer.out).toContain("0x0123456789abcdef: unknown");
    });

    it("offeredCheckMethods CRL only: the responder answers unauthorized and an OCSP check is failed_precondition", async () => {
      await mockOf(server.domain).setStatus(accountId, cert.certificate.id, { status: "good", offeredMethods: ["crl"] });
      expect((await ocsp("-cert", "c.pem")).out).toContain("Responder Error: unauthorized (6)");
      await expect(check("ocsp")).rejects.toMatchObject({ code: "check_method_not_offered" });
      expect(await check("crl")).toMatchObject({ status: "good", checkMethod: "crl" });
    });

    it("STATUS_UNKNOWN: OCSP says unknown, the CRL is unavailable rather than good", async () => {
      await mockOf(server.domain).setStatus(accountId, cert.certificate.id, { status: "unknown" });
      expect(await check("ocsp")).toMatchObject({ status: "unknown", checkMethod: "ocsp" });
      await expect(check("crl")).rejects.toMatchObject({ code: "source_unavailable" });
      const unspecified = await server.domain.statusChecks.checkCertificate({ accountId }, cert.certificate.id);
      expect(unspecified.status).toMatchObject({ status: "unknown", checkMethod: "ocsp" });
    });

    it("bad OCSP requests: malformedRequest for bytes that are not one, 415 for another media type", async () => {
      for (const response of [
        await fetch(`${server.url}/mock/ocsp`, { method: "POST", headers: { "content-type": "application/ocsp-request" }, body: "not DER" }),
        await fetch(`${server.url}/mock/ocsp/bm90IERFUg==`),
        await fetch(`${server.url}/mock/ocsp/%25%25%25`),
      ]) {
        expect(response.status).toBe(200);
        expect(response.headers.get("content-type")).toBe("application/ocsp-response");
        // OCSPResponse { responseStatus malformedRequest (1) }
        expect(Buffer.from(await response.arrayBuffer()).toString("hex")).toBe("30030a0101");
      }
      const wrongType = await fetch(`${server.url}/mock/ocsp`, { method: "POST", headers: { "content-type": "text/plain" }, body: "x" });
      expect(wrongType.status).toBe(415);
    });

    it("SetMockCertificateStatus refuses times no CRL or OCSP answer can carry, and removeFromCRL", async () => {
      const set = (input: Parameters<ReturnType<typeof mockOf>["setStatus"]>[2]) =>
        mockOf(server.domain).setStatus(accountId, cert.certificate.id, input);
      await set({ status: "unknown" });
      await expect(set({ status: "good", sourceUpdatedAt: Date.now() + 3_600_000 })).rejects.toMatchObject({ code: "invalid_field", field: "source_updated_at" });
      await expect(set({ status: "revoked", revokedAt: Date.parse("1949-12-31T00:00:00Z") })).rejects.toMatchObject({ code: "invalid_field", field: "revoked_at" });
      await expect(set({ status: "revoked", revokedReason: 8 })).rejects.toMatchObject({ code: "invalid_field", field: "revoked_reason" });
      expect(await check("ocsp")).toMatchObject({ status: "unknown" });
    });
  });
}
