import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/domain/oidc/flow/secrets.ts";
import { expectInvalidToken, expectRegistrationError, manage, postRegistration, reachable, registrationPath } from "../support/client-registration.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Who may reach dynamic client registration: nobody by default, holders of
 * an initial access token, or anyone within the rate limit; and the
 * refusals of bad metadata, each with its RFC 7591 error, storing nothing.
 */
const targets = await databaseTargets();
const sqlite = targets.find((t) => t.name === "sqlite")!;

const metadata = (extra: Record<string, unknown> = {}) => ({ redirect_uris: ["https://rp.example/cb"], ...extra });

async function discovery(server: TestServer): Promise<Record<string, unknown>> {
  return (await (await fetch(new URL("/.well-known/openid-configuration", server.url))).json()) as Record<string, unknown>;
}

async function clientCount(server: TestServer): Promise<number> {
  return (await server.domain.oidc.clients.list()).length;
}

describe("client registration is off by default", () => {
  let scratch: ScratchDatabase;
  let server: TestServer;

  beforeAll(async () => {
    scratch = await sqlite.create();
    server = await startTestServer(scratch.url);
  });

  afterAll(async () => {
    await server?.close();
    await scratch?.drop();
  });

  it("the endpoint and the configuration endpoints answer 404, and discovery names no registration_endpoint", async () => {
    expect(server.config.clientRegistration).toBe("off");
    const before = await clientCount(server);
    const post = await postRegistration(server, metadata());
    expect(post.status).toBe(404);
    expect(post.json?.error).toBe("not_found");
    expect((await manage(new URL(`${registrationPath}/some-client`, server.url).href, "GET", "any-token")).status).toBe(404);
    expect(await clientCount(server)).toBe(before);
    expect(await discovery(server)).not.toHaveProperty("registration_endpoint");
  });
});

for (const target of targets) {
  describe.skipIf(target.unavailable !== undefined)(`client registration by initial access token: ${targetTitle(target)}`, () => {
    let scratch: ScratchDatabase;
    let server: TestServer;
    const configuredToken = randomBytes(32).toString("base64url");

    beforeAll(async () => {
      scratch = await target.create();
      server = await startTestServer(scratch.url, {
        clientRegistration: "token",
        clientRegistrationTokenSha256: sha256Hex(configuredToken),
        clientRegistrationMaxPerAddress: 1000,
      });
    });

    afterAll(async () => {
      await server?.close();
      await scratch?.drop();
    });

    it("discovery names the registration endpoint", async () => {
      expect((await discovery(server)).registration_endpoint).toBe(`${server.domain.oidc.issuer}/api/oidc/v1/register`);
    });

    it("without a token, with a wrong one or another scheme: 401 invalid_token, nothing stored", async () => {
      const before = await clientCount(server);
      expectInvalidToken(await postRegistration(server, metadata()));
      expectInvalidToken(await postRegistration(server, metadata(), { authorization: "Bearer not-a-registration-token" }));
      expectInvalidToken(await postRegistration(server, metadata(), { authorization: `Basic ${configuredToken}` }));
      expect(await clientCount(server)).toBe(before);
    });

    it("the token of the settings registers a client", async () => {
      const reply = await postRegistration(server, metadata(), { authorization: `Bearer ${configuredToken}` });
      expect(reply.status, reply.text).toBe(201);
      expect(await server.domain.oidc.clients.find(reply.json!.client_id as string)).toBeDefined();
    });

    it("a token made by the command registers clients until revoked; only its hash is stored, and it manages no client", async () => {
      const tokens = server.domain.oidc.registrationTokens;
      const { token, summary } = await tokens.create(`test ${randomBytes(3).toString("hex")}`);
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const row = await server.database.db.selectFrom("oidc_registration_tokens").selectAll().where("id", "=", summary.id).executeTakeFirstOrThrow();
      expect(row.token_hash).toBe(sha256Hex(token));
      expect(JSON.stringify(await tokens.list())).not.toContain(token);

      const first = await postRegistration(server, metadata(), { authorization: `Bearer ${token}` });
      expect(first.status, first.text).toBe(201);
      // An initial access token is no registration access token.
      expectInvalidToken(await manage(reachable(server, first.json!.registration_client_uri), "GET", token));
      expect((await postRegistration(server, metadata(), { authorization: `Bearer ${token}` })).status).toBe(201);

      expect(await tokens.revoke(summary.id)).toBe(true);
      expectInvalidToken(await postRegistration(server, metadata(), { authorization: `Bearer ${token}` }));
      expect(await tokens.revoke(summary.id)).toBe(false);
      // The client it registered stays, managed by its own token.
      expect((await manage(reachable(server, first.json!.registration_client_uri), "GET", first.json!.registration_access_token as string)).status).toBe(200);
    });

    it("the token is checked before the metadata: bad metadata without a token is 401, not a validation answer", async () => {
      expectInvalidToken(await postRegistration(server, "{not json"));
    });
  });

  describe.skipIf(target.unavailable !== undefined)(`client registration refuses bad metadata, storing nothing: ${targetTitle(target)}`, () => {
    let scratch: ScratchDatabase;
    let server: TestServer;

    beforeAll(async () => {
      scratch = await target.create();
      server = await startTestServer(scratch.url, { clientRegistration: "open", clientRegistrationMaxPerAddress: 1000 });
    });

    afterAll(async () => {
      await server?.close();
      await scratch?.drop();
    });

    const cases: [string, unknown, number, string, RegExp][] = [
      ["no redirect_uris", { client_name: "x" }, 400, "invalid_redirect_uri", /^redirect_uris: /],
      ["an http redirect URI off loopback", metadata({ redirect_uris: ["http://rp.example/cb"] }), 400, "invalid_redirect_uri", /^redirect_uris\.0: must be an absolute https:\/\//],
      ["a redirect URI with a fragment", metadata({ redirect_uris: ["https://rp.example/cb#x"] }), 400, "invalid_redirect_uri", /without a fragment/],
      ["redirect_uris not a list", metadata({ redirect_uris: "https://rp.example/cb" }), 400, "invalid_redirect_uri", /^redirect_uris: /],
      ["an unknown token_endpoint_auth_method", metadata({ token_endpoint_auth_method: "tls_client_auth" }), 400, "invalid_client_metadata", /^token_endpoint_auth_method: /],
      ["private_key_jwt without jwks or jwks_uri", metadata({ token_endpoint_auth_method: "private_key_jwt" }), 400, "invalid_client_metadata", /^private_key_jwt needs jwks or jwks_uri$/],
      ["jwks with a private key", metadata({ token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [{ kty: "EC", crv: "P-256", x: "a", y: "b", d: "c" }] } }), 400, "invalid_client_metadata", /public keys only/],
      ["an HS256 id_token_signed_response_alg", metadata({ id_token_signed_response_alg: "HS256" }), 400, "invalid_client_metadata", /^id_token_signed_response_alg: /],
      ["grant_types without authorization_code", metadata({ grant_types: ["refresh_token"] }), 400, "invalid_client_metadata", /^grant_types: must include authorization_code/],
      ["response_types other than code", metadata({ response_types: ["code", "token"] }), 400, "invalid_client_metadata", /^response_types: /],
      ["a client_id of its own choosing", metadata({ client_id: "chosen" }), 400, "invalid_client_metadata", /^client_id: is assigned by the server$/],
      ["a client_secret of its own choosing", metadata({ client_secret: "a-secret-of-sixteen-or-more" }), 400, "invalid_client_metadata", /^client_secret: is issued by the server$/],
      ["a software statement (none is trusted)", metadata({ software_statement: "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJ4In0.c2ln" }), 400, "unapproved_software_statement", /trusts no software statement/],
      ["a software statement that is no JWT", metadata({ software_statement: "not a jwt" }), 400, "invalid_software_statement", /signed JWT/],
      ["a JSON array", [metadata()], 400, "invalid_client_metadata", /must be a JSON object/],
      ["JSON null", "null", 400, "invalid_client_metadata", /must be a JSON object/],
      ["a body that is not JSON", "{redirect_uris: [}", 400, "invalid_client_metadata", /^the body is not valid JSON/],
      ["an empty body", "", 400, "invalid_client_metadata", /^the body is not valid JSON/],
      ["JSON nested 200 deep", `{"redirect_uris":${"[".repeat(200)}${"]".repeat(200)}}`, 400, "invalid_client_metadata", /more than 64 levels deep/],
    ];
    for (const [name, body, status, error, description] of cases) {
      it(`${name}: ${error}`, async () => {
        const before = await clientCount(server);
        expect(expectRegistrationError(await postRegistration(server, body), status, error)).toMatch(description);
        expect(await clientCount(server)).toBe(before);
      });
    }

    it("a body that is not application/json: invalid_request", async () => {
      const reply = await postRegistration(server, new URLSearchParams({ redirect_uris: "https://rp.example/cb" }).toString(), { "content-type": "application/x-www-form-urlencoded" });
      expect(expectRegistrationError(reply, 400, "invalid_request")).toBe("send the client metadata as application/json");
    });

    it("a body over the limit: 413 request_too_large", async () => {
      const big = JSON.stringify(metadata({ client_name: "x".repeat(server.config.maxBodyBytes) }));
      const reply = await postRegistration(server, big);
      expect(reply.status).toBe(413);
      expect(reply.json?.error).toBe("request_too_large");
    });
  });
}

describe("client registration's rate limit", () => {
  let scratch: ScratchDatabase;
  let server: TestServer;

  beforeAll(async () => {
    scratch = await sqlite.create();
    server = await startTestServer(scratch.url, { clientRegistration: "open", clientRegistrationMaxPerAddress: 2 });
  });

  afterAll(async () => {
    await server?.close();
    await scratch?.drop();
  });

  it("past the registrations allowed per address and minute: 429 with Retry-After, nothing stored", async () => {
    for (let i = 0; i < 2; i++) expect((await postRegistration(server, metadata())).status).toBe(201);
    const before = await clientCount(server);
    const refused = await postRegistration(server, metadata());
    expect(expectRegistrationError(refused, 429, "temporarily_unavailable")).toMatch(/^too many registrations; retry in \d+ seconds$/);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await clientCount(server)).toBe(before);
  });
});
