import { randomUUID } from "node:crypto";
import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Certificate_Type as CertificateType } from "../../gen/service/verify/v2/certificate_pb.ts";
import { registerApiClient } from "../support/api-oauth.ts";
import { createTenant, setupClients } from "../support/certificate-rpc.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { discover, insecure, withNonceRetry } from "../support/fapi2-client.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/*
 * An RPC called the way a DPoP client library calls any protected resource:
 * oauth4webapi gets a DPoP-bound client_credentials token and calls
 * CheckCertificateStatus over Connect JSON, with SHOMEI_DPOP_REQUIRE_NONCE
 * set. The RPC's refusal carries the RFC 9449 challenge and DPoP-Nonce, so
 * the library recognises use_dpop_nonce and its documented retry passes.
 */
const targets = await databaseTargets();

for (const target of targets) {
  describe.skipIf(target.unavailable !== undefined)(`RPCs with oauth4webapi and server nonces, ${targetTitle(target)}`, () => {
    let database: ScratchDatabase;
    let server: TestServer;
    let as: oauth.AuthorizationServer;

    beforeAll(async () => {
      database = await target.create();
      server = await startTestServer(database.url, { dpopRequireNonce: true });
      as = await discover(server);
    });

    afterAll(async () => {
      await server?.close();
      await database?.drop();
    });

    /** Runs `call` under withNonceRetry, counting the refusals it met. */
    async function counted<T>(call: () => Promise<T>): Promise<{ result: T; nonceRefusals: number }> {
      let nonceRefusals = 0;
      const result = await withNonceRetry(async () => {
        try {
          return await call();
        } catch (error) {
          if (oauth.isDPoPNonceError(error)) nonceRefusals++;
          throw error;
        }
      });
      return { result, nonceRefusals };
    }

    it("client_credentials then CheckCertificateStatus: each first meets use_dpop_nonce and passes on the retry", async () => {
      const tenant = await createTenant(server, `o4w-${randomUUID().slice(0, 8)}`);
      const certificateId = (await setupClients(server, tenant.token).mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE })).certificate!.id;
      const registered = await registerApiClient(server, tenant.token, { dpopBoundAccessTokens: true });
      const client: oauth.Client = { client_id: registered.clientId };
      const keyPair = await oauth.generateKeyPair("ES256");

      const tokenHandle = oauth.DPoP(client, keyPair);
      const granted = await counted(async () =>
        oauth.processClientCredentialsResponse(
          as,
          client,
          await oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretBasic(registered.secret), new URLSearchParams(), { DPoP: tokenHandle, ...insecure }),
        ),
      );
      expect(granted).toMatchObject({ nonceRefusals: 1, result: { token_type: "dpop" } });

      // A new handle of the same key has no nonce cached: the RPC is the first to ask it for one.
      const DPoP = oauth.DPoP(client, keyPair);
      const url = new URL(`${server.config.baseUrl}/service.verify.v2.CertificateService/CheckCertificateStatus`);
      const call = () =>
        oauth.protectedResourceRequest(granted.result.access_token, "POST", url, new Headers({ "content-type": "application/json" }), JSON.stringify({ certificateId }), {
          DPoP,
          ...insecure,
        });
      const checked = await counted(call);
      expect(checked.nonceRefusals).toBe(1);
      expect(checked.result.status).toBe(200);
      expect(await checked.result.json()).toMatchObject({ certificateStatus: { status: "STATUS_GOOD" } });

      // The handle keeps the nonce: the next call passes at once.
      const again = await counted(call);
      expect(again.nonceRefusals).toBe(0);
      expect(again.result.status).toBe(200);
    });
  });
}
