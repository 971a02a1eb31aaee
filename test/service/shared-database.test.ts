import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedOidcDemo } from "../../src/app/mock/oidc-demo-seed.ts";
import { DomainError } from "../../src/domain/errors.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { basicAuthorization, postPar } from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Several instances on one database: a second mock-mode instance leaves the
 * demo client as the first set it up, and an instance with another server
 * key than the database's refuses to start instead of failing on every
 * sealed value.
 */
const targets = await databaseTargets();
/** Instances behind one load balancer share their public URL. */
const baseUrl = "https://id.shared.example";

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(`instances sharing a database, ${targetTitle(target)}`, () => {
    let scratch: ScratchDatabase;
    let dir: string;
    let first: TestServer;

    beforeAll(async () => {
      scratch = await target.create();
      dir = mkdtempSync(path.join(tmpdir(), "shomei-shared-"));
      first = await startTestServer(scratch.url, { secretKeyFile: path.join(dir, "shared.key"), dataDir: path.join(dir, "a"), baseUrl });
    });
    afterAll(async () => {
      await first?.close();
      await scratch?.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    it("a second mock instance with the shared key keeps the demo client's secret: the first one's file still works", async () => {
      await seedOidcDemo(first.domain.oidc, path.join(dir, "a"), Date.now());
      const secretOfFirst = readFileSync(path.join(dir, "a", "demo-client-secret"), "utf8").trim();
      const second = await startTestServer(scratch.url, { secretKeyFile: path.join(dir, "shared.key"), dataDir: path.join(dir, "b"), baseUrl });
      try {
        await seedOidcDemo(second.domain.oidc, path.join(dir, "b"), Date.now());
        expect(readFileSync(path.join(dir, "b", "demo-client-secret"), "utf8").trim()).toBe(secretOfFirst);
        for (const server of [first, second]) {
          const reply = await postPar(
            server,
            { response_type: "code", redirect_uri: `${server.domain.oidc.issuer}/demo/callback`, scope: "openid", code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", code_challenge_method: "S256" },
            { authorization: basicAuthorization("demo-client", secretOfFirst) },
          );
          expect(reply.status, JSON.stringify(reply.json)).toBe(201);
        }
      } finally {
        await second.close();
      }
    });

    it("behind a TLS proxy (a public https URL on the cleartext port) responses carry HSTS", async () => {
      expect((await fetch(`${first.url}/healthz`)).headers.get("strict-transport-security")).toBe("max-age=31536000");
    });

    it("an instance with another server key refuses to start, saying which setting to share", async () => {
      const started = startTestServer(scratch.url, { secretKeyFile: path.join(dir, "other.key"), dataDir: path.join(dir, "c") });
      const error = await started.then(
        async (server) => {
          await server.close();
          throw new Error("an instance with another key started");
        },
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).code).toBe("server_key_mismatch");
      expect((error as Error).message).toContain("SHOMEI_SECRET_KEY_FILE");
      // The first instance goes on serving its keys.
      expect((await fetch(`${first.url}/api/oidc/v1/jwks`)).status).toBe(200);
    });
  });
}
