import { Code } from "@connectrpc/connect";
import { Http2SessionManager } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Certificate_Type as CertificateType } from "../../gen/service/verify/v2/certificate_pb.ts";
import { newId } from "../../src/domain/ids.ts";
import { CertificatesRepository } from "../../src/storage/certificates-repository.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import {
  bearer,
  certificateServicePath,
  clients,
  createTenant,
  expectRpcError,
  postJson,
  protocols,
  setupClients,
  type Tenant,
} from "../support/certificate-rpc.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const targets = await databaseTargets();
const checkPath = `${certificateServicePath}/CheckCertificateStatus`;
const grpc = protocols.find((p) => p.name === "gRPC over HTTP/2")!;

/**
 * CheckCertificateStatus admits a token the instance remembers without
 * reading the auth version first, and confirms it with the version read
 * beside the certificate (the Caller of src/domain/accounts/caller.ts). These
 * change the token or its account from another connection (another
 * instance) between two calls: the next call must be answered exactly as a
 * call authenticated in full would be, and write nothing when refused.
 */
for (const target of targets) {
  describe.skipIf(!!target.unavailable)(`${targetTitle(target)}: a remembered token on the check's fast path`, () => {
    let scratch: ScratchDatabase;
    let server: TestServer;
    /** Another instance's connection to the same database. */
    let elsewhere: Database;
    let h2: Http2SessionManager;

    beforeAll(async () => {
      scratch = await target.create();
      server = await startTestServer(scratch.url, { mode: "mock", sweepIntervalSeconds: 0 });
      elsewhere = await openDatabase(scratch.url);
      h2 = new Http2SessionManager(server.url);
    });

    afterAll(async () => {
      h2?.abort();
      await server?.close();
      await elsewhere?.close();
      await scratch?.drop();
    });

    /** A tenant with a certificate, its token remembered by a first check. */
    async function warmTenant(): Promise<{ tenant: Tenant; certificateId: string }> {
      const tenant = await createTenant(server, `remembered-${newId().slice(0, 8)}`);
      const issued = await setupClients(server, tenant.token).mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE });
      const certificateId = issued.certificate!.id;
      expect((await check(tenant, JSON.stringify({ certificateId }))).status).toBe(200);
      return { tenant, certificateId };
    }

    function check(tenant: Tenant, body: string) {
      return postJson(server, checkPath, body, tenant.token);
    }

    function records(tenant: Tenant): Promise<number> {
      return new CertificatesRepository(server.database).countStatuses(tenant.account.id);
    }

    /** Revokes the tenant's token by a bare statement on another connection: this instance learns of it only from the auth version. */
    async function revokeElsewhere(tenant: Tenant): Promise<void> {
      const revoked = await elsewhere.db.updateTable("api_tokens").set({ revoked_at: Date.now() }).where("account_id", "=", tenant.account.id).executeTakeFirst();
      expect(Number(revoked.numUpdatedRows)).toBe(1);
    }

    function errorOf(reply: { status: number; text: string }): { code: string } {
      return { code: (JSON.parse(reply.text) as { code: string }).code };
    }

    it("a token revoked by another instance is refused on the very next check, over Connect JSON and gRPC, and nothing is written", async () => {
      const { tenant, certificateId } = await warmTenant();
      const before = await records(tenant);
      await revokeElsewhere(tenant);
      const reply = await check(tenant, JSON.stringify({ certificateId }));
      expect(reply.status).toBe(401);
      expect(errorOf(reply).code).toBe("unauthenticated");
      const api = clients(grpc.transport(server.url, [bearer(tenant.token)], h2));
      await expectRpcError(api.certificates.checkCertificateStatus({ certificateId }), Code.Unauthenticated, "ERROR_REASON_TOKEN_INVALID");
      expect(await records(tenant)).toBe(before);
    });

    it("a revoked remembered token gets the refusal, not the error its request would get: an unknown id, a malformed id, a body that does not decode", async () => {
      const { tenant } = await warmTenant();
      await revokeElsewhere(tenant);
      for (const body of [JSON.stringify({ certificateId: newId() }), JSON.stringify({ certificateId: "not-a-uuid" }), "{not json", JSON.stringify({ nope: 1 })]) {
        const reply = await check(tenant, body);
        expect({ body, status: reply.status, code: errorOf(reply).code }).toEqual({ body, status: 401, code: "unauthenticated" });
      }
    });

    it("an account suspended by another instance is refused with its reason, and admitted again once started", async () => {
      const { tenant, certificateId } = await warmTenant();
      const before = await records(tenant);
      await elsewhere.db.updateTable("accounts").set({ api_status: "suspended", updated_at: Date.now() }).where("id", "=", tenant.account.id).execute();
      const refused = await check(tenant, JSON.stringify({ certificateId }));
      expect({ status: refused.status, code: errorOf(refused).code }).toEqual({ status: 403, code: "permission_denied" });
      expect(await records(tenant)).toBe(before);
      await elsewhere.db.updateTable("accounts").set({ api_status: "active", updated_at: Date.now() }).where("id", "=", tenant.account.id).execute();
      const admitted = await check(tenant, JSON.stringify({ certificateId }));
      expect(admitted.status).toBe(200);
      expect((JSON.parse(admitted.text) as { certificateStatus: { status: string } }).certificateStatus.status).toBe("STATUS_GOOD");
      expect(await records(tenant)).toBe(before + 1);
    });

    it("another account's revocation moves the version: the remembered token is read again and still admitted", async () => {
      const { tenant, certificateId } = await warmTenant();
      const other = await warmTenant();
      await revokeElsewhere(other.tenant);
      const reply = await check(tenant, JSON.stringify({ certificateId }));
      expect(reply.status).toBe(200);
      expect((await check(other.tenant, JSON.stringify({ certificateId: other.certificateId }))).status).toBe(401);
    });
  });
}
