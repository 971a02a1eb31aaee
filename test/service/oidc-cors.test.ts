import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Browser applications (public clients with PKCE) call discovery, JWKS, token,
 * userinfo, revocation, introspection and the grant API from their own origin;
 * the pages and the authorization endpoint are navigated to and must never be
 * readable cross-origin.
 */
const sqlite = (await databaseTargets()).find((t) => t.name === "sqlite")!;
const origin = "https://spa.example";

describe("CORS", () => {
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

  const send = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
    fetch(new URL(path, server.url), { method, redirect: "manual", headers: { origin, ...headers }, ...(body !== undefined ? { body } : {}) });

  const apiPaths = [
    "/.well-known/openid-configuration",
    "/.well-known/oauth-authorization-server",
    "/api/oidc/v1/jwks",
    "/api/oidc/v1/token",
    "/api/oidc/v1/userinfo",
    "/api/oidc/v1/revoke",
    "/api/oidc/v1/introspect",
    "/api/oidc/v1/grants/some-grant",
  ];

  it.each(apiPaths)("a preflight to %s is allowed for any origin, without credentials", async (path) => {
    const reply = await send("OPTIONS", path, { "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type, dpop" });
    expect(reply.status).toBe(204);
    expect(reply.headers.get("access-control-allow-origin")).toBe("*");
    expect(reply.headers.get("access-control-allow-credentials")).toBeNull();
    expect(reply.headers.get("access-control-allow-methods")).toBe("GET, POST, DELETE");
    expect(reply.headers.get("access-control-allow-headers")?.toLowerCase()).toBe("authorization, content-type, dpop");
  });

  it("discovery and JWKS are readable from another origin", async () => {
    for (const path of ["/.well-known/openid-configuration", "/api/oidc/v1/jwks"]) {
      const reply = await send("GET", path);
      expect(reply.status).toBe(200);
      expect(reply.headers.get("access-control-allow-origin")).toBe("*");
    }
  });

  it("an error of userinfo is readable too, with its WWW-Authenticate challenge and DPoP nonce exposed", async () => {
    const reply = await send("GET", "/api/oidc/v1/userinfo", { authorization: "Bearer not-a-token" });
    expect(reply.status).toBe(401);
    expect(reply.headers.get("access-control-allow-origin")).toBe("*");
    expect(reply.headers.get("access-control-expose-headers")).toBe("WWW-Authenticate, DPoP-Nonce");
    expect(reply.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("a token endpoint error is readable from another origin", async () => {
    const reply = await send("POST", "/api/oidc/v1/token", { "content-type": "application/x-www-form-urlencoded" }, "grant_type=authorization_code&client_id=nobody");
    expect(reply.status).toBe(401);
    expect(reply.headers.get("access-control-allow-origin")).toBe("*");
    expect(((await reply.json()) as { error: string }).error).toBe("invalid_client");
  });

  it.each(["/api/oidc/v1/authorize?client_id=demo-client", "/api/oidc/v1/par", "/auth/login?interaction=x", "/healthz"])(
    "%s carries no CORS header and answers no preflight",
    async (path) => {
      const reply = await send("GET", path);
      expect(reply.headers.get("access-control-allow-origin")).toBeNull();
      const preflight = await send("OPTIONS", path, { "access-control-request-method": "POST" });
      expect(preflight.status).not.toBe(204);
      expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
    },
  );
});
