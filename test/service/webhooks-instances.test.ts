import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient, type Client } from "@connectrpc/connect";
import { Http2SessionManager } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/service/verify/v2/event_service_pb.ts";
import { settings } from "../../src/config/schema.ts";
import { bearer, createTenant, protocols, sleep, type Tenant } from "../support/certificate-rpc.ts";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { verifiedEvent, WebhookReceiver } from "../support/webhook-receiver.ts";

/**
 * Instances sharing one PostgreSQL database share the outbox: each attempt
 * is made by one of them only (counted at the receiver over 1,000 events),
 * and the attempt of an instance killed in the middle of it (kill -9, a
 * real `shomei serve` process) is made again by another after its lease,
 * with the same webhook-id.
 */
const postgres = (await databaseTargets()).find((t) => t.name === "postgres")!;
const repoRoot = path.resolve(import.meta.dirname, "../..");

describe.skipIf(postgres.unavailable !== undefined)("webhooks across instances on PostgreSQL", () => {
  let scratch: ScratchDatabase;
  let dataDir: string;
  let first: TestServer;
  let second: TestServer;
  let receiver: WebhookReceiver;
  let h2: Http2SessionManager[];
  let tenant: Tenant;
  let clients: Client<typeof EventService>[];
  const children = new Set<ChildProcess>();
  const instanceSettings = { webhookPollMs: 20, webhookRetrySchedule: "0,100ms", webhookTimeoutMs: 1000, webhookConcurrencyPerEndpoint: 8 };

  beforeAll(async () => {
    scratch = await postgres.create();
    dataDir = mkdtempSync(path.join(tmpdir(), "shomei-instances-"));
    // One database, one server key (the instances must share it), two instances.
    first = await startTestServer(scratch.url, { ...instanceSettings, dataDir });
    second = await startTestServer(scratch.url, { ...instanceSettings, dataDir });
    receiver = await new WebhookReceiver().start();
    tenant = await createTenant(first, "instances");
    h2 = [new Http2SessionManager(first.url), new Http2SessionManager(second.url)];
    clients = [first, second].map((server, i) => createClient(EventService, protocols[1]!.transport(server.url, [bearer(tenant.token)], h2[i]!)));
  });

  afterAll(async () => {
    for (const child of children) child.kill("SIGKILL");
    for (const session of h2 ?? []) session.abort();
    await first?.close();
    await second?.close();
    await receiver?.close();
    await scratch?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("two instances deliver each of 1,000 events exactly once between them", async () => {
    const created = await clients[0]!.createWebhookEndpoint({ url: receiver.url("/shared"), eventTypes: ["webhook.test"] });
    const endpointId = created.webhookEndpoint!.id;
    // The instances may have delivered for the file's other test already (tests run in any order).
    const deliveredBefore = [first, second].map((s) => s.domain.webhookDelivery.loop.counts.delivered);
    const sent: string[] = [];
    for (let batch = 0; batch < 20; batch++) {
      const ids = await Promise.all(
        Array.from({ length: 50 }, (_, i) => clients[i % 2]!.sendTestEvent({ webhookEndpointId: endpointId }).then((r) => r.eventId)),
      );
      sent.push(...ids);
    }
    const requests = await receiver.waitFor("/shared", 1000, 60_000);
    // Time for a second attempt at anything, were one made.
    await sleep(500);
    expect(receiver.at("/shared")).toHaveLength(1000);
    const ids = requests.map((r) => verifiedEvent(created.secret, r).id);
    expect(new Set(ids).size).toBe(1000);
    expect(new Set(ids)).toEqual(new Set(sent));
    const byInstance = [first, second].map((s, i) => s.domain.webhookDelivery.loop.counts.delivered - deliveredBefore[i]!);
    expect(byInstance[0]! + byInstance[1]!).toBe(1000);
    expect(byInstance.every((n) => n > 0)).toBe(true);
  }, 120_000);

  it("the attempt of an instance killed in the middle of it is made by another after the lease, with the same webhook-id", async () => {
    const created = await clients[0]!.createWebhookEndpoint({ url: receiver.url("/killed"), eventTypes: ["webhook.test"] });
    // The killed instance gets the request and never answers.
    receiver.answer("/killed", (n) => (n === 1 ? "hang" : 200));
    // Only the process to be killed claims at first.
    await first.domain.webhookDelivery.stop();
    await second.domain.webhookDelivery.stop();
    const child = startInstance();
    const { eventId } = await clients[0]!.sendTestEvent({ webhookEndpointId: created.webhookEndpoint!.id });
    const [held] = await receiver.waitFor("/killed", 1, 30_000);
    expect(held!.headers["webhook-id"]).toBe(eventId);
    child.kill("SIGKILL");
    first.domain.webhookDelivery.start();
    const requests = await receiver.waitFor("/killed", 2, 30_000);
    expect(requests.map((r) => verifiedEvent(created.secret, r).id)).toEqual([eventId, eventId]);
    // The killed attempt left no record; the one after the lease is the delivery's first recorded.
    await expect
      .poll(async () => (await clients[0]!.listEventDeliveries({ eventId })).deliveries.map((a) => [a.outcome, a.statusCode, a.attempt]))
      .toEqual([["delivered", 200, 1]]);
    second.domain.webhookDelivery.start();
  }, 90_000);

  function startInstance(): ChildProcess {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const { env: variable } of Object.values(settings)) delete env[variable];
    delete env.SHOMEI_CONFIG;
    Object.assign(env, {
      PORT: "0",
      HOST: "127.0.0.1",
      DATABASE_URL: scratch.url,
      SHOMEI_DATA_DIR: dataDir,
      SHOMEI_WEBHOOK_POLL_MS: "20",
      SHOMEI_WEBHOOK_TIMEOUT_MS: "1000",
    });
    const child = spawn(process.execPath, ["bin/shomei.js", "serve", "--mode", "mock"], { cwd: repoRoot, env, stdio: "ignore" });
    children.add(child);
    child.once("exit", () => children.delete(child));
    return child;
  }
});
