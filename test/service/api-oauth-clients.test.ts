import { randomUUID } from "node:crypto";
import { Code, createClient } from "@connectrpc/connect";
import { exportJWK, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Certificate_Type as CertificateType } from "../../gen/service/verify/v2/certificate_pb.ts";
import { clientCredentialsToken, oauthClientService, postClientForm, registerApiClient } from "../support/api-oauth.ts";
import { bearer, clients, createTenant, expectRpcError, setupClients } from "../support/certificate-rpc.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { clientAssertion } from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { createConnectTransport } from "@connectrpc/connect-node";
import { OAuthClientService } from "../../gen/service/verify/v2/oauth_client_service_pb.ts";
import { registrationFromMetadata } from "../../src/domain/oidc/client-registration.ts";

/*
 * OAuthClientService, the registry of an account's OAuth clients, on both
 * databases: what it stores, whose clients it shows, its bad input, and that
 * a removed client's tokens stop; and a private_key_jwt client's token.
 */
const targets = await databaseTargets();

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let scratch: ScratchDatabase;
    let server: TestServer;

    beforeAll(async () => {
      scratch = await target.create();
      server = await startTestServer(scratch.url, { mode: "mock" });
    }, 60_000);

    afterAll(async () => {
      await server?.close();
      await scratch?.drop();
    });

    const tenant = () => createTenant(server, `reg-${randomUUID().slice(0, 8)}`);

    it("creates a client with a secret shown once, lists only the account's own clients, and deletes them", async () => {
      const [a, b] = await Promise.all([tenant(), tenant()]);
      const registry = oauthClientService(server, a.token);

      const created = await registry.createOAuthClient({ name: "billing back end", tokenEndpointAuthMethod: "client_secret_post", scopes: ["verify", "certificate.status", "verify"] });
      await registerApiClient(server, b.token);

      expect(created.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(created.oauthClient).toMatchObject({
        clientId: expect.stringMatching(/^api_[0-9a-f]{24}$/),
        name: "billing back end",
        tokenEndpointAuthMethod: "client_secret_post",
        scopes: ["verify", "certificate.status"],
        dpopBoundAccessTokens: false,
      });
      const listed = await registry.listOAuthClients({});
      expect(listed.oauthClients.map((c) => c.clientId)).toEqual([created.oauthClient!.clientId]);
      expect(JSON.stringify(listed, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v))).not.toContain(created.clientSecret);
      // client_secret_post: the secret in the form.
      const token = await fetch(`${server.url}/api/oidc/v1/token`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "client_credentials", client_id: created.oauthClient!.clientId, client_secret: created.clientSecret }),
      }).then((r) => r.json());
      expect(token).toMatchObject({ token_type: "Bearer", scope: "verify certificate.status", expires_in: 3600 });
      expect(token).not.toHaveProperty("refresh_token");

      await registry.deleteOAuthClient({ clientId: created.oauthClient!.clientId });
      expect((await registry.listOAuthClients({})).oauthClients).toEqual([]);
    });

    it("another account's client answers not_found on delete, and stays", async () => {
      const [a, b] = await Promise.all([tenant(), tenant()]);
      const foreign = await registerApiClient(server, b.token);

      await expectRpcError(oauthClientService(server, a.token).deleteOAuthClient({ clientId: foreign.clientId }), Code.NotFound, "ERROR_REASON_OAUTH_CLIENT_NOT_FOUND", "client_id");
      await expectRpcError(oauthClientService(server, a.token).deleteOAuthClient({ clientId: "api_000000000000000000000000" }), Code.NotFound, "ERROR_REASON_OAUTH_CLIENT_NOT_FOUND", "client_id");
      // Left out: said so, not looked up as a client with an empty id.
      await expectRpcError(oauthClientService(server, a.token).deleteOAuthClient({}), Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", "client_id");

      expect((await oauthClientService(server, b.token).listOAuthClients({})).oauthClients.map((c) => c.clientId)).toEqual([foreign.clientId]);
    });

    it("a removed client's tokens stop at once, and it gets no more", async () => {
      const a = await tenant();
      const certificateId = (await setupClients(server, a.token).mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE })).certificate!.id;
      const client = await registerApiClient(server, a.token);
      const token = await clientCredentialsToken(server, client);
      const api = clients(createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", interceptors: [bearer(token)] }));
      await api.certificates.checkCertificateStatus({ certificateId });

      await oauthClientService(server, a.token).deleteOAuthClient({ clientId: client.clientId });

      await expectRpcError(api.certificates.checkCertificateStatus({ certificateId }), Code.Unauthenticated, "ERROR_REASON_TOKEN_INVALID");
      expect(await postClientForm(server, "token", client, { grant_type: "client_credentials" })).toMatchObject({ status: 401, body: { error: "invalid_client" } });
    });

    it("an access token cannot reach the registry: it answers API tokens only", async () => {
      const a = await tenant();
      const token = await clientCredentialsToken(server, await registerApiClient(server, a.token));
      const registry = createClient(OAuthClientService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", interceptors: [bearer(token)] }));

      await expectRpcError(registry.createOAuthClient({ tokenEndpointAuthMethod: "client_secret_basic" }), Code.PermissionDenied, "ERROR_REASON_INSUFFICIENT_SCOPE");
      await expectRpcError(registry.listOAuthClients({}), Code.PermissionDenied, "ERROR_REASON_INSUFFICIENT_SCOPE");
      expect(await oauthClientService(server, a.token).listOAuthClients({})).toMatchObject({ oauthClients: [expect.anything()] });
    });

    it("a registration without a method gets client_secret_basic, or private_key_jwt when it gives keys", async () => {
      const a = await tenant();
      const registry = oauthClientService(server, a.token);
      const { publicKey } = await generateKeyPair("ES256", { extractable: true });
      const secretClient = await registry.createOAuthClient({ name: "no method", scopes: ["certificate.status"] });
      expect(secretClient.oauthClient!.tokenEndpointAuthMethod).toBe("client_secret_basic");
      expect(secretClient.clientSecret).not.toBe("");
      const keyClient = await registry.createOAuthClient({ jwksJson: JSON.stringify({ keys: [await exportJWK(publicKey)] }) });
      expect(keyClient.oauthClient!.tokenEndpointAuthMethod).toBe("private_key_jwt");
      expect(keyClient.clientSecret).toBe("");
    });

    it("bad registrations are invalid_argument naming the field, and store nothing", async () => {
      const a = await tenant();
      const registry = oauthClientService(server, a.token);
      const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
      const cases: [Parameters<typeof registry.createOAuthClient>[0], string][] = [
        [{ tokenEndpointAuthMethod: "none" }, "token_endpoint_auth_method"],
        [{ tokenEndpointAuthMethod: "client_secret_basic", scopes: ["openid"] }, "scopes"],
        [{ tokenEndpointAuthMethod: "private_key_jwt" }, "jwks"],
        [{ tokenEndpointAuthMethod: "private_key_jwt", jwksJson: "{not json" }, "jwks_json"],
        // Refused before the parser would spend the event loop on it (json-nesting.ts).
        [{ tokenEndpointAuthMethod: "private_key_jwt", jwksJson: `${"[".repeat(65)}${"]".repeat(65)}` }, "jwks_json"],
        [{ tokenEndpointAuthMethod: "private_key_jwt", jwksJson: JSON.stringify({ keys: [await exportJWK(privateKey)] }) }, "jwks"],
        [{ tokenEndpointAuthMethod: "client_secret_basic", jwksJson: JSON.stringify({ keys: [await exportJWK(publicKey)] }) }, "jwks"],
        [{ tokenEndpointAuthMethod: "client_secret_basic", name: "x".repeat(201) }, "name"],
        [{ tokenEndpointAuthMethod: "client_secret_basic", name: "nul\u0000byte" }, "name"],
      ];
      for (const [request, field] of cases) {
        await expectRpcError(registry.createOAuthClient(request), Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", field);
      }
      expect((await registry.listOAuthClients({})).oauthClients).toEqual([]);
    });

    it("a private_key_jwt client gets a token for the scope it asks, and none beyond its registration", async () => {
      const a = await tenant();
      const { privateKey, publicKey } = await generateKeyPair("ES256");
      const created = await oauthClientService(server, a.token).createOAuthClient({
        tokenEndpointAuthMethod: "private_key_jwt",
        jwksJson: JSON.stringify({ keys: [await exportJWK(publicKey)] }),
        scopes: ["certificate.status", "events"],
      });
      const clientId = created.oauthClient!.clientId;
      expect(created.clientSecret).toBe("");
      const request = async (scope: string) =>
        fetch(`${server.url}/api/oidc/v1/token`, {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({
            grant_type: "client_credentials",
            scope,
            client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            client_assertion: await clientAssertion(privateKey, clientId, server.config.baseUrl),
          }),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));

      expect(await request("events")).toMatchObject({ status: 200, body: { token_type: "Bearer", scope: "events" } });
      expect(await request("events verify")).toMatchObject({ status: 400, body: { error: "invalid_scope" } });
    });

    it("a relying party's client_credentials request is refused: the grant is for API accounts' clients", async () => {
      const clientId = `rp-${randomUUID().slice(0, 8)}`;
      const { client } = registrationFromMetadata({ client_id: clientId, client_secret: "rp-secret-0123456789abcdef", redirect_uris: ["https://rp.example/cb"] }, Date.now());
      await server.domain.oidc.clients.save(client, Date.now());

      expect(await postClientForm(server, "token", { clientId, secret: "rp-secret-0123456789abcdef" }, { grant_type: "client_credentials" })).toMatchObject({
        status: 400,
        body: { error: "unauthorized_client" },
      });
    });
  });
}
