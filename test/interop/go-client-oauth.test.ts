import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { calculateJwkThumbprint, exportJWK, importPKCS8 } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Certificate_Type as CertificateType } from "../../gen/service/verify/v2/certificate_pb.ts";
import { clientCredentialsToken, registerApiClient } from "../support/api-oauth.ts";
import { createTenant, setupClients, type Tenant } from "../support/certificate-rpc.ts";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import type { DpopKey } from "../support/dpop.ts";
import { buildGoPackage, goUnavailable } from "../support/go-toolchain.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/*
 * The Go client (clients/go/example, gRPC over cleartext HTTP/2) calling
 * CheckCertificateStatus with OAuth access tokens of an account's client:
 * Bearer with -token, DPoP-bound with -token and -dpop-key, the proofs made
 * by the Go code itself.
 */
const unavailable = await goUnavailable();
const [sqlite] = await databaseTargets();
const run = promisify(execFile);

interface Outcome {
  exitCode: number;
  stdout: string;
  stderr: string;
}

describe.skipIf(!!unavailable)(unavailable ? `Go client with OAuth access tokens (skipped: ${unavailable})` : "Go client with OAuth access tokens", () => {
  let dir: string;
  let binary: string;
  let scratch: ScratchDatabase;
  let server: TestServer;

  async function example(args: string[]): Promise<Outcome> {
    try {
      const { stdout, stderr } = await run(binary, args, { env: { PATH: process.env.PATH }, timeout: 20_000 });
      return { exitCode: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code?: unknown; stdout?: string; stderr?: string };
      if (typeof failed.code !== "number") throw error;
      return { exitCode: failed.code, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
    }
  }

  /** A P-256 key in a PEM file for the Go client, and the same key for the token request's proof. */
  async function keyFile(name: string): Promise<{ file: string; key: DpopKey }> {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
    const pem = privateKey.export({ type: "pkcs8", format: "pem" }) as string;
    const file = path.join(dir, `${name}.pem`);
    writeFileSync(file, pem);
    const publicJwk = await exportJWK(publicKey);
    const key: DpopKey = { privateKey: await importPKCS8(pem, "ES256"), publicJwk, privateJwk: {}, jkt: await calculateJwkThumbprint(publicJwk), alg: "ES256" };
    return { file, key };
  }

  async function tenantWithCertificate(name: string): Promise<{ tenant: Tenant; certificateId: string }> {
    const tenant = await createTenant(server, name);
    const created = await setupClients(server, tenant.token).mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE });
    return { tenant, certificateId: created.certificate!.id };
  }

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "shomei-go-oauth-"));
    binary = await buildGoPackage(dir, "example");
    scratch = await sqlite!.create();
    server = await startTestServer(scratch.url);
  }, 240_000);

  afterAll(async () => {
    await server?.close();
    await scratch?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("status with a Bearer access token from client_credentials", async () => {
    const { tenant, certificateId } = await tenantWithCertificate("go-oauth-bearer");
    const token = await clientCredentialsToken(server, await registerApiClient(server, tenant.token));

    const out = await example(["status", "-server", server.url, "-token", token, "-certificate-id", certificateId]);

    expect({ exitCode: out.exitCode, stderr: out.stderr }).toEqual({ exitCode: 0, stderr: "" });
    expect(JSON.parse(out.stdout).certificateStatus).toMatchObject({ status: "STATUS_GOOD" });
  });

  it("status with a DPoP-bound access token and a proof of its key on the call", async () => {
    const { tenant, certificateId } = await tenantWithCertificate("go-oauth-dpop");
    const { file, key } = await keyFile("dpop");
    const token = await clientCredentialsToken(server, await registerApiClient(server, tenant.token, { dpopBoundAccessTokens: true }), { dpop: key });

    // The proof names the server's published URL (its base URL), which the client is given as -server.
    const out = await example(["status", "-server", server.config.baseUrl, "-token", token, "-dpop-key", file, "-certificate-id", certificateId]);

    expect({ exitCode: out.exitCode, stderr: out.stderr }).toEqual({ exitCode: 0, stderr: "" });
    expect(JSON.parse(out.stdout).certificateStatus).toMatchObject({ status: "STATUS_GOOD" });
  });

  it("a DPoP-bound token sent as Bearer (no proof), or with a proof of another key, is unauthenticated", async () => {
    const { tenant, certificateId } = await tenantWithCertificate("go-oauth-dpop-bad");
    const { key } = await keyFile("bound");
    const { file: otherFile } = await keyFile("other");
    const token = await clientCredentialsToken(server, await registerApiClient(server, tenant.token), { dpop: key });

    // Without a key the example sends the token as Bearer: the wrong scheme, an invalid token as at userinfo.
    for (const [extra, reason] of [
      [[], "ERROR_REASON_TOKEN_INVALID"],
      [["-dpop-key", otherFile], "ERROR_REASON_DPOP_PROOF_INVALID"],
    ] as const) {
      const out = await example(["status", "-server", server.config.baseUrl, "-token", token, ...extra, "-certificate-id", certificateId]);
      expect(out.exitCode).toBe(1);
      expect(out.stderr.split("\n")).toEqual(expect.arrayContaining(["code: Unauthenticated", `reason: ${reason}`]));
    }
  });

  it("a token without the certificate.status scope is permission_denied, naming the scope", async () => {
    const { tenant, certificateId } = await tenantWithCertificate("go-oauth-scope");
    const token = await clientCredentialsToken(server, await registerApiClient(server, tenant.token), { scope: "verify" });

    const out = await example(["status", "-server", server.url, "-token", token, "-certificate-id", certificateId]);

    expect(out.exitCode).toBe(1);
    expect(out.stderr.split("\n")).toEqual(
      expect.arrayContaining(["code: PermissionDenied", "reason: ERROR_REASON_INSUFFICIENT_SCOPE", "metadata: scope=certificate.status"]),
    );
  });

  it("another account's client gets not_found for the first account's certificate", async () => {
    const { certificateId } = await tenantWithCertificate("go-oauth-owner");
    const other = await createTenant(server, "go-oauth-other");
    const token = await clientCredentialsToken(server, await registerApiClient(server, other.token));

    const out = await example(["status", "-server", server.url, "-token", token, "-certificate-id", certificateId]);

    expect(out.exitCode).toBe(1);
    expect(out.stderr.split("\n")).toEqual(expect.arrayContaining(["code: NotFound", "reason: ERROR_REASON_CERTIFICATE_NOT_FOUND"]));
  });
});
