import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CertificateStatus_Status as Status, CrlReason, Certificate_Type as CertificateType } from "../../gen/service/verify/v2/certificate_pb.ts";
import { createTenant, setupClients, type Tenant } from "../support/certificate-rpc.ts";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * The generated JavaScript client (clients/typescript/gen, target js+dts) as a
 * plain Node user runs it: `node check-status.mjs`, no loader, no build, each
 * protocol. The process gets only PATH and the two settings, so nothing of
 * the test runner's TypeScript handling can reach it.
 */
const example = path.resolve("clients/typescript/example/check-status.mjs");

function runExample(server: TestServer, token: string, ...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [example, ...args], {
      env: { PATH: process.env.PATH ?? "", SHOMEI_SERVER: server.url, SHOMEI_TOKEN: token },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out, err }));
  });
}

describe("the generated JavaScript client, run by plain node", () => {
  let scratch: ScratchDatabase;
  let server: TestServer;
  let tenant: Tenant;
  let good: string;
  let revoked: string;

  beforeAll(async () => {
    scratch = await (await databaseTargets()).find((t) => t.name === "sqlite")!.create();
    server = await startTestServer(scratch.url);
    tenant = await createTenant(server, "javascript-client");
    const setup = setupClients(server, tenant.token);
    good = (await setup.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE })).certificate!.id;
    revoked = (await setup.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE })).certificate!.id;
    await setup.mock.setMockCertificateStatus({ certificateId: revoked, status: Status.REVOKED, revokedReason: CrlReason.KEY_COMPROMISE });
  });

  afterAll(async () => {
    await server?.close();
    await scratch?.drop();
  });

  for (const protocol of ["connect", "grpc", "grpc-web"]) {
    it(`checks a good and a revoked certificate over ${protocol}`, async () => {
      expect(await runExample(server, tenant.token, good, protocol)).toEqual({ code: 0, out: `${good} GOOD\n`, err: "" });
      expect(await runExample(server, tenant.token, revoked, protocol)).toEqual({ code: 0, out: `${revoked} REVOKED\n`, err: "" });
    });
  }

  it("reads the error's code and ErrorInfo reason", async () => {
    expect(await runExample(server, tenant.token, randomUUID())).toEqual({ code: 1, out: "", err: "NotFound ERROR_REASON_CERTIFICATE_NOT_FOUND no certificate with this id\n" });
    expect(await runExample(server, "shm_wrong", good)).toMatchObject({ code: 1, err: expect.stringMatching(/^Unauthenticated ERROR_REASON_TOKEN_/) });
  });
});
