import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/domain/oidc/flow/secrets.ts";
import { OidcRepository } from "../../src/storage/oidc-repository.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { createUser, registerClient } from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { WebhookReceiver } from "../support/webhook-receiver.ts";

/**
 * In production mode a backchannel_logout_uri cannot aim the server at its
 * own network, as a webhook endpoint cannot: `client add` and dynamic
 * registration refuse plain http and loopback or private hosts, and a registration that holds one anyway
 * (written before, or by hand) is refused by the sender at each attempt.
 */
const root = fileURLToPath(new URL("../..", import.meta.url));

for (const target of await databaseTargets()) {
  describe.skipIf(target.unavailable !== undefined)(`back-channel logout in production mode on ${targetTitle(target)}`, () => {
    let scratch: ScratchDatabase;
    let server: TestServer;
    let receiver: WebhookReceiver;
    let dataDir: string;

    beforeAll(async () => {
      scratch = await target.create();
      dataDir = mkdtempSync(path.join(tmpdir(), "shomei-bcl-prod-"));
      server = await startTestServer(scratch.url, { mode: "production", dataDir, backchannelLogoutRetrySchedule: "0", webhookPollMs: 50, clientRegistration: "open" });
      receiver = await new WebhookReceiver().start();
    });

    afterAll(async () => {
      await server?.close();
      await receiver?.close();
      await scratch?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    it("`shomei client add` refuses a loopback, private or plain http backchannel_logout_uri, naming it, and stores nothing", async () => {
      for (const uri of [receiver.url("/bcl"), "https://127.0.0.1/bcl", "https://10.0.0.8/bcl"]) {
        const clientId = `prod-${randomBytes(4).toString("hex")}`;
        const metadata = { client_id: clientId, redirect_uris: ["https://rp.example/cb"], backchannel_logout_uri: uri };
        const run = await shomei("client", "add", "--metadata", JSON.stringify(metadata));
        expect(run.code, uri).not.toBe(0);
        expect(run.stderr).toMatch(/backchannel_logout_uri: must (be an https:\/\/ URL|not point at a loopback, private or link-local address)/);
        expect(await server.domain.oidc.clients.find(clientId)).toBeUndefined();
      }
    });

    it("dynamic registration refuses such a URI as invalid_client_metadata, and registers and answers a public https one", async () => {
      const register = (metadata: Record<string, unknown>) =>
        fetch(`${server.url}/api/oidc/v1/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(metadata) });
      const refused = await register({ redirect_uris: ["https://rp.example/cb"], backchannel_logout_uri: "https://192.168.1.10/bcl" });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ error: "invalid_client_metadata", error_description: expect.stringContaining("backchannel_logout_uri") });
      const accepted = await register({ redirect_uris: ["https://rp.example/cb"], backchannel_logout_uri: "https://rp.example/bcl", backchannel_logout_session_required: true });
      expect(accepted.status).toBe(201);
      const answer = (await accepted.json()) as Record<string, unknown>;
      expect(answer).toMatchObject({ backchannel_logout_uri: "https://rp.example/bcl", backchannel_logout_session_required: true });
      expect(await server.domain.oidc.clients.find(answer.client_id as string)).toMatchObject({ backchannelLogoutUri: "https://rp.example/bcl", backchannelLogoutSessionRequired: true });
    });

    it("a registration that holds a loopback URI anyway gets no request: the attempt is refused and given up", async () => {
      const clientId = `prod-${randomBytes(4).toString("hex")}`;
      await registerClient(server, { client_id: clientId, client_secret: "a client secret of 32 characters", redirect_uris: ["https://rp.example/cb"], backchannel_logout_uri: receiver.url(`/${clientId}`) });
      const user = await createUser(server);
      const idHash = sha256Hex(randomBytes(16).toString("hex"));
      const now = Date.now();
      const oidc = new OidcRepository(server.database);
      await oidc.insertSession({ idHash, userId: user.row.id, authTime: now, acr: "low", amr: ["pwd"], createdAt: now, expiresAt: now + 3600_000 });
      await oidc.recordSessionClient({ sessionIdHash: idHash, clientId, sid: "the-sid", userId: user.row.id, createdAt: now });
      expect(await server.domain.oidc.sessionEndings.endUserSessions(user.row.id)).toBe(1);
      const finished = await eventually(async () => {
        const row = await server.database.db.selectFrom("oidc_logout_deliveries").selectAll().where("client_id", "=", clientId).executeTakeFirst();
        return row?.state === "exhausted" ? row : undefined;
      });
      expect(finished).toMatchObject({ attempts: 1, last_status_code: null, last_error: "refused: only https:// endpoints are allowed" });
      expect(receiver.at(`/${clientId}`)).toEqual([]);
    });

    /** `node bin/shomei.js …` in production mode on this server's database. */
    function shomei(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
      return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, ["bin/shomei.js", ...args], {
          cwd: root,
          env: { PATH: process.env.PATH ?? "", HOME: dataDir, SHOMEI_DATA_DIR: dataDir, DATABASE_URL: scratch.url, SHOMEI_MODE: "production" },
          stdio: ["ignore", "pipe", "pipe"],
        });
        let stdout = "";
        let stderr = "";
        child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
        child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
        child.on("error", reject);
        child.on("close", (code) => resolve({ code, stdout, stderr }));
      });
    }
  });
}

/** Polls until `probe` returns a value (the loop records an outcome in the background). */
async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
