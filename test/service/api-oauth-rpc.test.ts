import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { Http2SessionManager } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.ts";
import { CertificateStatus_Status as Status, Certificate_Type as CertificateType } from "../../gen/service/verify/v2/certificate_pb.ts";
import { clientCredentialsToken, dpopAuthorization, postClientForm, registerApiClient } from "../support/api-oauth.ts";
import { bearer, clients, createTenant, expectRpcError, protocols, setupClients, type Tenant } from "../support/certificate-rpc.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { dpopKey, dpopProof } from "../support/dpop.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/*
 * The RPCs called with OAuth access tokens of an account's own clients
 * (client_credentials), Bearer and DPoP, over every protocol: the account's
 * certificates answer, another account's do not, and the token's client
 * and account rules hold as an API token's do.
 */
const targets = await databaseTargets();

/** The one ErrorInfo of a refused call: its code, reason and metadata. */
async function refusal(call: Promise<unknown>): Promise<{ code: string; reason: string; metadata: Record<string, string> }> {
  const error = await call.then(
    () => {
      throw new Error("expected the call to be refused");
    },
    (e: unknown) => ConnectError.from(e),
  );
  const [info] = error.findDetails(ErrorInfoSchema);
  return { code: Code[error.code], reason: info?.reason ?? "", metadata: { ...info?.metadata } };
}

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let scratch: ScratchDatabase;
    let server: TestServer;
    let h2: Http2SessionManager;

    beforeAll(async () => {
      scratch = await target.create();
      server = await startTestServer(scratch.url, { mode: "mock" });
      h2 = new Http2SessionManager(server.url);
    }, 60_000);

    afterAll(async () => {
      h2?.abort();
      await server?.close();
      await scratch?.drop();
    });

    /** A new active account with one mock certificate of its own. */
    async function tenantWithCertificate(): Promise<{ tenant: Tenant; certificateId: string }> {
      const tenant = await createTenant(server, `oauth-${randomUUID().slice(0, 8)}`);
      const created = await setupClients(server, tenant.token).mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE });
      return { tenant, certificateId: created.certificate!.id };
    }

    for (const protocol of protocols) {
      it(`${protocol.name}: a Bearer access token checks the account's certificate`, async () => {
        const { tenant, certificateId } = await tenantWithCertificate();
        const token = await clientCredentialsToken(server, await registerApiClient(server, tenant.token));
        const api = clients(protocol.transport(server.url, [bearer(token)], h2));

        const response = await api.certificates.checkCertificateStatus({ certificateId });

        expect(Status[response.certificateStatus!.status]).toBe("GOOD");
      });

      it(`${protocol.name}: a DPoP-bound access token with a proof of its key checks the account's certificate`, async () => {
        const { tenant, certificateId } = await tenantWithCertificate();
        const key = await dpopKey();
        const token = await clientCredentialsToken(server, await registerApiClient(server, tenant.token, { dpopBoundAccessTokens: true }), { dpop: key });
        const api = clients(protocol.transport(server.url, [dpopAuthorization(server, key, token)], h2));

        const response = await api.certificates.checkCertificateStatus({ certificateId });

        expect(Status[response.certificateStatus!.status]).toBe("GOOD");
      });

      it(`${protocol.name}: another account's client gets not_found for the first account's certificate`, async () => {
        const { certificateId } = await tenantWithCertificate();
        const other = await createTenant(server, `other-${randomUUID().slice(0, 8)}`);
        const token = await clientCredentialsToken(server, await registerApiClient(server, other.token));
        const api = clients(protocol.transport(server.url, [bearer(token)], h2));

        await expectRpcError(api.certificates.checkCertificateStatus({ certificateId }), Code.NotFound, "ERROR_REASON_CERTIFICATE_NOT_FOUND");
      });

      it(`${protocol.name}: a token without certificate.status is permission_denied, naming the scope`, async () => {
        const { tenant, certificateId } = await tenantWithCertificate();
        const token = await clientCredentialsToken(server, await registerApiClient(server, tenant.token), { scope: "verify events" });
        const api = clients(protocol.transport(server.url, [bearer(token)], h2));

        expect(await refusal(api.certificates.checkCertificateStatus({ certificateId }))).toEqual({
          code: "PermissionDenied",
          reason: "ERROR_REASON_INSUFFICIENT_SCOPE",
          metadata: { scope: "certificate.status" },
        });
        expect(await refusal(api.certificates.getCertificate({ certificateId }))).toMatchObject({ reason: "ERROR_REASON_INSUFFICIENT_SCOPE" });
      });
    }

    it("a token revoked at /revoke is refused at once, and introspection says it is inactive", async () => {
      const { tenant, certificateId } = await tenantWithCertificate();
      const client = await registerApiClient(server, tenant.token);
      const token = await clientCredentialsToken(server, client, { scope: "certificate.status" });
      const api = clients(protocols[1]!.transport(server.url, [bearer(token)], h2));
      await api.certificates.checkCertificateStatus({ certificateId });
      expect(await postClientForm(server, "introspect", client, { token })).toMatchObject({
        status: 200,
        body: { active: true, client_id: client.clientId, scope: "certificate.status", token_type: "Bearer" },
      });

      expect((await postClientForm(server, "revoke", client, { token })).status).toBe(200);

      await expectRpcError(api.certificates.checkCertificateStatus({ certificateId }), Code.Unauthenticated, "ERROR_REASON_TOKEN_INVALID");
      expect(await postClientForm(server, "introspect", client, { token })).toEqual({ status: 200, body: { active: false } });
    });

    it("another client can neither revoke nor introspect a client's token", async () => {
      const { tenant, certificateId } = await tenantWithCertificate();
      const client = await registerApiClient(server, tenant.token);
      const intruder = await registerApiClient(server, tenant.token);
      const token = await clientCredentialsToken(server, client);

      expect(await postClientForm(server, "introspect", intruder, { token })).toEqual({ status: 200, body: { active: false } });
      expect((await postClientForm(server, "revoke", intruder, { token })).status).toBe(200);

      const api = clients(protocols[0]!.transport(server.url, [bearer(token)], h2));
      expect(Status[(await api.certificates.checkCertificateStatus({ certificateId })).certificateStatus!.status]).toBe("GOOD");
    });

    it("the use-started rule: a suspended account's tokens are refused, and a not-started account gets none", async () => {
      const { tenant, certificateId } = await tenantWithCertificate();
      const token = await clientCredentialsToken(server, await registerApiClient(server, tenant.token));
      const api = clients(protocols[1]!.transport(server.url, [bearer(token)], h2));
      await api.certificates.checkCertificateStatus({ certificateId });

      await server.domain.accounts.setApiStatus(tenant.account.name, "suspended");

      await expectRpcError(api.certificates.checkCertificateStatus({ certificateId }), Code.PermissionDenied, "ERROR_REASON_API_USE_SUSPENDED");
      const later = await createTenant(server, `new-${randomUUID().slice(0, 8)}`);
      const client = await registerApiClient(server, later.token);
      await server.domain.accounts.setApiStatus(later.account.name, "not_started");
      expect(await postClientForm(server, "token", client, { grant_type: "client_credentials" })).toMatchObject({
        status: 400,
        body: { error: "unauthorized_client", error_description: "API use has not been started for this account" },
      });
    });

    it("a DPoP-bound token is refused as Bearer, with a proof of another key, for another URL, or with a replayed proof", async () => {
      const { tenant, certificateId } = await tenantWithCertificate();
      const key = await dpopKey();
      const token = await clientCredentialsToken(server, await registerApiClient(server, tenant.token), { dpop: key });
      const url = `${server.config.baseUrl}/service.verify.v2.CertificateService/CheckCertificateStatus`;
      const call = (headers: Record<string, string>) =>
        fetch(url, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify({ certificateId }) }).then(async (r) => ({
          status: r.status,
          body: (await r.json()) as { code: string; message: string },
        }));
      const refusedProof = { status: 401, body: { code: "unauthenticated" } };

      expect(await call({ Authorization: `Bearer ${token}` })).toMatchObject(refusedProof);
      expect(await call({ Authorization: `DPoP ${token}` })).toMatchObject(refusedProof);
      expect(await call({ Authorization: `DPoP ${token}`, DPoP: await dpopProof(await dpopKey(), { htu: url, accessToken: token }) })).toMatchObject(refusedProof);
      expect(await call({ Authorization: `DPoP ${token}`, DPoP: await dpopProof(key, { htu: `${server.config.baseUrl}/service.verify.v2.CertificateService/GetCertificate`, accessToken: token }) })).toMatchObject(refusedProof);
      expect(await call({ Authorization: `DPoP ${token}`, DPoP: await dpopProof(key, { htu: url, accessToken: "another token" }) })).toMatchObject(refusedProof);
      const proof = await dpopProof(key, { htu: url, accessToken: token });
      expect(await call({ Authorization: `DPoP ${token}`, DPoP: proof })).toMatchObject({ status: 200 });
      expect(await call({ Authorization: `DPoP ${token}`, DPoP: proof })).toMatchObject({ status: 401, body: { message: "the DPoP proof was already used (jti replayed)" } });
    });
  });
}
