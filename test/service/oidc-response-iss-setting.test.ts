import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { Browser, createUser, obtainCode, registerClient } from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * SHOMEI_ADVERTISE_AUTHORIZATION_RESPONSE_ISS=false: discovery stops
 * promising `iss` in authorization responses, which still carry it (RFC 9207).
 */
const sqlite = (await databaseTargets()).find((t) => t.name === "sqlite")!;
const redirectUri = "https://iss-setting.example/cb";

describe("advertiseAuthorizationResponseIss=false", () => {
  let database: ScratchDatabase;
  let server: TestServer;

  beforeAll(async () => {
    database = await sqlite.create();
    server = await startTestServer(database.url, { advertiseAuthorizationResponseIss: "false" });
    await registerClient(server, { client_id: "iss-setting", client_secret: "iss-setting-secret-0123456789", redirect_uris: [redirectUri], scope: "openid" });
  });

  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  it("both discovery documents say false", async () => {
    for (const document of ["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"]) {
      const metadata = (await (await fetch(`${server.url}${document}`)).json()) as Record<string, unknown>;
      expect(metadata.authorization_response_iss_parameter_supported, document).toBe(false);
    }
  });

  it("the authorization response still carries iss", async () => {
    const user = await createUser(server);
    // obtainCode asserts the redirect's single iss parameter equals the issuer.
    const code = await obtainCode(server, new Browser(server.url), user, { clientId: "iss-setting", redirectUri, scope: "openid" });
    expect(code).toMatch(/^[A-Za-z0-9_-]{51}$/);
  });
});
