import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Certificate_Type as CertificateType } from "../../gen/service/verify/v2/certificate_pb.ts";
import { registerApiClient, type RegisteredApiClient } from "../support/api-oauth.ts";
import { createTenant, setupClients } from "../support/certificate-rpc.ts";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * The generated JavaScript client as an API account's back end runs it with
 * an OAuth client (clients/typescript/example/oauth-check-status.mjs): a
 * client_credentials token, Bearer or DPoP-bound with proofs it makes
 * itself, then CheckCertificateStatus over each protocol, by plain node.
 */
const example = path.resolve("clients/typescript/example/oauth-check-status.mjs");

function runExample(server: TestServer, client: RegisteredApiClient, ...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [example, ...args], {
      // The server's published URL: what the proofs' htu must name.
      env: { PATH: process.env.PATH ?? "", SHOMEI_SERVER: server.config.baseUrl, SHOMEI_CLIENT_ID: client.clientId, SHOMEI_CLIENT_SECRET: client.secret },
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

describe("the generated JavaScript client with an OAuth access token, run by plain node", () => {
  let scratch: ScratchDatabase;
  let server: TestServer;

  beforeAll(async () => {
    scratch = await (await databaseTargets()).find((t) => t.name === "sqlite")!.create();
    server = await startTestServer(scratch.url);
  });

  afterAll(async () => {
    await server?.close();
    await scratch?.drop();
  });

  async function setup(name: string, dpopBound = false): Promise<{ client: RegisteredApiClient; certificateId: string; apiToken: string }> {
    const tenant = await createTenant(server, name);
    const certificateId = (await setupClients(server, tenant.token).mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE })).certificate!.id;
    return { client: await registerApiClient(server, tenant.token, { dpopBoundAccessTokens: dpopBound }), certificateId, apiToken: tenant.token };
  }

  for (const protocol of ["connect", "grpc", "grpc-web"]) {
    it(`checks the account's certificate over ${protocol} with a Bearer and with a DPoP-bound access token`, async () => {
      const { client, certificateId } = await setup(`js-oauth-${protocol}`);
      expect(await runExample(server, client, certificateId, protocol, "bearer")).toEqual({ code: 0, out: `${certificateId} GOOD Bearer\n`, err: "" });
      expect(await runExample(server, client, certificateId, protocol, "dpop")).toEqual({ code: 0, out: `${certificateId} GOOD DPoP\n`, err: "" });
    });
  }

  it("a client that must use DPoP gets no token without a proof", async () => {
    const { client, certificateId } = await setup("js-oauth-dpop-only", true);
    expect(await runExample(server, client, certificateId, "connect", "bearer")).toMatchObject({ code: 1, err: expect.stringMatching(/^token endpoint: invalid_dpop_proof /) });
    expect(await runExample(server, client, certificateId, "connect", "dpop")).toEqual({ code: 0, out: `${certificateId} GOOD DPoP\n`, err: "" });
  });

  it("another account's client is told not_found, as for an unknown certificate", async () => {
    const { certificateId } = await setup("js-oauth-owner");
    const { client } = await setup("js-oauth-stranger");
    expect(await runExample(server, client, certificateId, "grpc", "dpop")).toEqual({ code: 1, out: "", err: "NotFound ERROR_REASON_CERTIFICATE_NOT_FOUND no certificate with this id\n" });
  });
});
