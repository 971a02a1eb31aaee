import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { mockOf } from "../../src/app/mock/installed-mock.ts";

const [sqlite] = await databaseTargets();

/** The mock CA's certificate and CRL, fetched over HTTP and checked with openssl. */
describe("mock CA routes", () => {
  let scratch: ScratchDatabase;
  let server: TestServer;
  let dir: string;
  let revokedSerial: string;
  let goodSerial: string;
  let certificatePem: string;

  beforeAll(async () => {
    scratch = await sqlite!.create();
    server = await startTestServer(scratch.url);
    dir = mkdtempSync(path.join(tmpdir(), "shomei-crl-"));
    const account = await server.domain.accounts.create("crl-test", "active");
    const mock = mockOf(server.domain);
    const revoked = await mock.createCertificate(account.id, { type: "jpki_card_digital_signature" });
    const good = await mock.createCertificate(account.id, { type: "jpki_card_user_authentication" });
    await mock.setStatus(account.id, revoked.certificate.id, {
      status: "revoked",
      revokedReason: 3,
      revokedAt: Date.parse("2026-01-02T03:04:05Z"),
    });
    revokedSerial = revoked.certificate.serialNumber;
    goodSerial = good.certificate.serialNumber;
    certificatePem = revoked.certificatePem;
  });

  afterAll(async () => {
    await server?.close();
    await scratch?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function download(pathname: string, file: string): Promise<Response> {
    const response = await fetch(`${server.url}${pathname}`);
    writeFileSync(path.join(dir, file), Buffer.from(await response.arrayBuffer()));
    return response;
  }

  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

  it("serves the CA certificate and a CRL signed by it that lists exactly the revoked certificate", async () => {
    const ca = await download("/mock/ca.crt", "ca.der");
    expect(ca.status).toBe(200);
    expect(ca.headers.get("content-type")).toBe("application/pkix-cert");
    const crl = await download("/mock/ca.crl", "ca.crl");
    expect(crl.status).toBe(200);
    expect(crl.headers.get("content-type")).toBe("application/pkix-crl");

    openssl("x509", "-inform", "DER", "-in", "ca.der", "-out", "ca.pem");
    const verified = execFileSync("openssl", ["crl", "-inform", "DER", "-in", "ca.crl", "-CAfile", "ca.pem", "-noout"], {
      cwd: dir,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    expect(verified).toBe("");
    const text = openssl("crl", "-inform", "DER", "-in", "ca.crl", "-noout", "-text");
    expect(text).toContain(`Serial Number: ${revokedSerial.toUpperCase()}`);
    expect(text).not.toContain(`Serial Number: ${goodSerial.toUpperCase()}`);
    expect(text).toContain("Revocation Date: Jan  2 03:04:05 2026 GMT");
    expect(text).toContain("Affiliation Changed");
  });

  it("writes its own CRL URL, on the bound port, into the certificates it issues", () => {
    writeFileSync(path.join(dir, "leaf.pem"), certificatePem);
    const text = openssl("x509", "-in", "leaf.pem", "-noout", "-ext", "crlDistributionPoints");
    expect(text).toContain(`URI:${server.url.replace("127.0.0.1", "localhost")}/mock/ca.crl`);
    expect(server.config.baseUrl).toBe(`http://localhost:${server.port}`);
  });

  it("does not exist in production mode", async () => {
    const production = await startTestServer(scratch.url, { mode: "production" });
    try {
      const response = await fetch(`${production.url}/mock/ca.crl`);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: "not_found", error_description: "no route for GET /mock/ca.crl" });
    } finally {
      await production.close();
    }
  });
});
