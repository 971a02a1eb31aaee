import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CertificateStatus_Status as Status, Certificate_Type as CertificateType, CrlReason } from "../../gen/service/verify/v2/certificate_pb.ts";
import { countStatuses, createTenant, setupClients, uuidPattern, type Clients, type Tenant } from "../support/certificate-rpc.ts";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { buildGoPackage, goModuleDir, goUnavailable, unformattedGoFiles } from "../support/go-toolchain.ts";
import { Signer, pemToDer } from "../support/openssl.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/*
 * The Go client as a Go user builds it: the committed generated code in
 * clients/go/gen and the example program, compiled with the machine's Go
 * toolchain and gRPC (offline, GOPATH mode, Debian's packages), calling the
 * real server with gRPC over cleartext HTTP/2 on its one port.
 */
const unavailable = await goUnavailable();
const [sqlite] = await databaseTargets();
const run = promisify(execFile);

interface Outcome {
  exitCode: number;
  stdout: string;
  stderr: string;
}

const document = "I agree to the terms, 2026-11-23.\n";

describe.skipIf(!!unavailable)(unavailable ? `Go client (skipped: ${unavailable})` : "Go client", () => {
  let dir: string;
  let binary: string;
  let scratch: ScratchDatabase;
  let server: TestServer;
  let tenant: Tenant;
  let setup: Clients;

  /** Runs the example with only the environment given (no inherited token or server). */
  async function example(args: string[], env: Record<string, string> = {}): Promise<Outcome> {
    try {
      const { stdout, stderr } = await run(binary, args, { env: { PATH: process.env.PATH, ...env }, timeout: 20_000 });
      return { exitCode: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code?: unknown; stdout?: string; stderr?: string };
      if (typeof failed.code !== "number") throw error;
      return { exitCode: failed.code, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
    }
  }

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "shomei-go-client-"));
    binary = await buildGoPackage(dir, "example");
    scratch = await sqlite!.create();
    server = await startTestServer(scratch.url);
    tenant = await createTenant(server, "go-client");
    setup = setupClients(server, tenant.token);
  }, 240_000);

  afterAll(async () => {
    await server?.close();
    await scratch?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("the hand-written Go code is gofmt-formatted", async () => {
    expect(await unformattedGoFiles(goModuleDir)).toEqual([]);
  });

  it("status: a good certificate, with the token from $SHOMEI_TOKEN and the server from -server", async () => {
    const created = await setup.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE });
    const id = created.certificate!.id;
    const before = await countStatuses(server, tenant.account.id);

    const out = await example(["status", "-server", server.url, "-certificate-id", id], { SHOMEI_TOKEN: tenant.token });

    expect({ exitCode: out.exitCode, stderr: out.stderr }).toEqual({ exitCode: 0, stderr: "" });
    const response = JSON.parse(out.stdout);
    expect(response.certificate).toMatchObject({ id, type: "TYPE_JPKI_CARD_DIGITAL_SIGNATURE" });
    expect(response.certificateStatus).toMatchObject({
      status: "STATUS_GOOD",
      checkMethod: "CHECK_METHOD_CRL",
      checkPurpose: "CHECK_PURPOSE_LIVENESS_CHECK",
    });
    expect(response.certificateStatus.id).toMatch(uuidPattern);
    expect(response.certificateStatus).not.toHaveProperty("revokedReason");
    expect(await countStatuses(server, tenant.account.id)).toBe(before + 1);
  });

  it("status: a revoked certificate, with its reason and revocation time, all from $SHOMEI_SERVER and -token", async () => {
    const created = await setup.mock.createMockCertificate({ type: CertificateType.JPKI_MOBILE_DIGITAL_SIGNATURE });
    const id = created.certificate!.id;
    await setup.mock.setMockCertificateStatus({
      certificateId: id,
      status: Status.REVOKED,
      revokedReason: CrlReason.AFFILIATION_CHANGED,
      revokedAt: timestampFromMs(Date.UTC(2026, 0, 15, 8, 30, 12) /* whole seconds: CRLs and OCSP carry no fraction */),
    });

    const out = await example(["status", "-token", tenant.token, "-certificate-id", id], { SHOMEI_SERVER: server.url });

    expect({ exitCode: out.exitCode, stderr: out.stderr }).toEqual({ exitCode: 0, stderr: "" });
    expect(JSON.parse(out.stdout).certificateStatus).toMatchObject({
      status: "STATUS_REVOKED",
      revokedReason: "CRL_REASON_AFFILIATION_CHANGED",
      revokedAt: "2026-01-15T08:30:12Z",
    });
  });

  it("status: not_found, decoded from the google.rpc.ErrorInfo detail", async () => {
    const before = await countStatuses(server, tenant.account.id);
    const out = await example(["status", "-server", server.url, "-token", tenant.token, "-certificate-id", "00000000-0000-4000-8000-000000000000"]);

    expect(out.exitCode).toBe(1);
    expect(out.stdout).toBe("");
    expect(out.stderr.split("\n")).toEqual(
      expect.arrayContaining(["code: NotFound", "reason: ERROR_REASON_CERTIFICATE_NOT_FOUND", "domain: verify.shomei"]),
    );
    expect(await countStatuses(server, tenant.account.id)).toBe(before);
  });

  it("status: another account's certificate answers exactly like an unknown one", async () => {
    const other = await createTenant(server, "go-client-other");
    const foreign = await setupClients(server, other.token).mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE });
    const unknown = await example(["status", "-server", server.url, "-token", tenant.token, "-certificate-id", "00000000-0000-4000-8000-000000000000"]);
    const out = await example(["status", "-server", server.url, "-token", tenant.token, "-certificate-id", foreign.certificate!.id]);
    expect(out).toEqual(unknown);
  });

  it("status: unauthenticated without a token, with ErrorInfo reason ERROR_REASON_TOKEN_MISSING", async () => {
    const created = await setup.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE });
    const out = await example(["status", "-server", server.url, "-certificate-id", created.certificate!.id]);

    expect(out.exitCode).toBe(1);
    expect(out.stdout).toBe("");
    expect(out.stderr.split("\n")).toEqual(
      expect.arrayContaining(["code: Unauthenticated", "reason: ERROR_REASON_TOKEN_MISSING", "domain: verify.shomei"]),
    );
  });

  it("status: invalid_argument names the field in the ErrorInfo metadata", async () => {
    const out = await example(["status", "-server", server.url, "-token", tenant.token, "-certificate-id", "not-a-uuid"]);
    expect(out.exitCode).toBe(1);
    expect(out.stderr.split("\n")).toEqual(
      expect.arrayContaining(["code: InvalidArgument", "reason: ERROR_REASON_INVALID_FIELD", "metadata: field=certificate_id"]),
    );
  });

  it("verify: signs a document with the key, and the certificate id it returns checks as good", async () => {
    const created = await setup.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE });
    const files = { certificate: path.join(dir, "ok-cert.pem"), key: path.join(dir, "ok-key.pem"), document: path.join(dir, "ok.txt") };
    writeFileSync(files.certificate, created.certificatePem);
    writeFileSync(files.key, created.privateKeyPem);
    writeFileSync(files.document, document);

    const out = await example(
      ["verify", "-server", server.url, "-token", tenant.token, "-certificate", files.certificate, "-document", files.document, "-key", files.key, "-identify-user"],
    );

    expect({ exitCode: out.exitCode, stderr: out.stderr }).toEqual({ exitCode: 0, stderr: "" });
    const verified = JSON.parse(out.stdout);
    expect(verified.verification).toMatchObject({ result: "RESULT_OK", certificateId: created.certificate!.id, hashAlgorithm: "HASH_ALGORITHM_SHA256" });
    expect(verified.verification.userId).toMatch(uuidPattern);
    expect(verified.certificateStatus).toMatchObject({ status: "STATUS_GOOD", checkPurpose: "CHECK_PURPOSE_SIGNATURE_VERIFICATION" });
    expect(verified.certificateContent.jpkiCardDigitalSignature.dateOfBirth).toMatch(/^\d{9}$/);

    const status = await example(["status", "-server", server.url, "-token", tenant.token, "-certificate-id", verified.verification.certificateId]);
    expect(JSON.parse(status.stdout).certificateStatus).toMatchObject({ status: "STATUS_GOOD", checkPurpose: "CHECK_PURPOSE_LIVENESS_CHECK" });
  });

  it("verify: a signature file over another document is a signature mismatch (DER certificate)", async () => {
    const created = await setup.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE });
    const signer = new Signer(dir);
    const certificate = signer.file("cert.der", pemToDer(created.certificatePem));
    const signature = signer.file("other.sig", signer.sign(created.privateKeyPem, "another document\n", "sha256"));
    const signed = signer.file("signed.txt", document);

    const out = await example(
      ["verify", "-server", server.url, "-token", tenant.token, "-certificate", certificate, "-document", signed, "-signature", signature],
    );

    expect(out.exitCode).toBe(0);
    expect(JSON.parse(out.stdout).verification).toMatchObject({ result: "RESULT_SIGNATURE_MISMATCH", certificateId: created.certificate!.id });
  });

  it("verify: bad usage is exit status 2 and sends nothing", async () => {
    const before = await countStatuses(server, tenant.account.id);
    const out = await example(["verify", "-server", server.url, "-token", tenant.token, "-certificate", path.join(dir, "ok-cert.pem")]);
    expect(out).toEqual({ exitCode: 2, stdout: "", stderr: "verify needs -certificate, -document, and one of -key or -signature\n" });
    expect(await countStatuses(server, tenant.account.id)).toBe(before);
  });
});
