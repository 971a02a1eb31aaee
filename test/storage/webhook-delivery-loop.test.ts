import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebhookDeliveryLoop, type DeliverySettings } from "../../src/domain/webhooks/delivery-loop.ts";
import type { WebhookRequest, WebhookResponse, WebhookSender } from "../../src/domain/webhooks/model.ts";
import { WebhookEndpoints } from "../../src/domain/webhooks/webhook-endpoints.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { WebhooksRepository } from "../../src/storage/webhooks-repository.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";

/**
 * The delivery loop over the real repository, on a clock the test moves and
 * a sender the test answers for: a run of failures as long as the setting
 * disables the endpoint (and tells the account's other endpoints); each
 * endpoint gets at most its bound of attempts at once, and a slow one does
 * not hold up another.
 */
const hour = 3600_000;
const settings: DeliverySettings = {
  retryScheduleMs: [0, hour, hour, hour, hour, hour, hour, hour],
  timeoutMs: 1000,
  pollMs: 10,
  perEndpointConcurrency: 2,
  maxInFlight: 64,
  disableAfterFailingMs: 5 * 24 * hour,
};

/** A sender whose answers the test gives, by URL; it records what was sent. */
class ScriptedSender implements WebhookSender {
  readonly sent: WebhookRequest[] = [];
  readonly waiting: (() => void)[] = [];
  answer: (request: WebhookRequest) => WebhookResponse | "hold" = () => ({ statusCode: 200, excerpt: "", durationMs: 1 });
  inFlight = new Map<string, number>();
  peak = new Map<string, number>();

  async send(request: WebhookRequest): Promise<WebhookResponse> {
    this.sent.push(request);
    const answer = this.answer(request);
    if (answer !== "hold") return answer;
    const now = (this.inFlight.get(request.url) ?? 0) + 1;
    this.inFlight.set(request.url, now);
    this.peak.set(request.url, Math.max(now, this.peak.get(request.url) ?? 0));
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.inFlight.set(request.url, this.inFlight.get(request.url)! - 1);
    return { statusCode: 200, excerpt: "", durationMs: 1 };
  }
}

for (const target of await databaseTargets()) {
  describe.skipIf(target.unavailable !== undefined)(`the webhook delivery loop on ${targetTitle(target)}`, () => {
    let scratch: ScratchDatabase;
    let database: Database;
    let now: number;
    let store: WebhooksRepository;
    let endpoints: WebhookEndpoints;
    const accountId = "7f1e1a52-6a38-4c53-9d0a-5b6b0f1b0001";
    const key = randomBytes(32);

    beforeAll(async () => {
      scratch = await target.create();
      database = await openDatabase(scratch.url);
      await migrateToLatest(database);
      now = Date.UTC(2026, 0, 1);
      store = new WebhooksRepository(database);
      endpoints = new WebhookEndpoints(store, key, () => now, { allowPrivate: true }, "http://issuer.test");
    });

    afterAll(async () => {
      await database?.close();
      await scratch?.drop();
    });

    function loopWith(sender: WebhookSender): WebhookDeliveryLoop {
      return new WebhookDeliveryLoop(store, endpoints, sender, () => now, settings, "http://issuer.test", (error) => {
        throw error;
      }, () => 0.5);
    }

    async function queueTest(endpointId: string): Promise<string> {
      return endpoints.sendTest(accountId, endpointId);
    }

    it("five days in which every attempt failed disable the endpoint, and the account's other endpoints are told", async () => {
      const failing = (await endpoints.create(accountId, { url: "http://failing.test/", eventTypes: [], description: "" })).endpoint;
      const watcher = (await endpoints.create(accountId, { url: "http://watcher.test/", eventTypes: ["webhook.endpoint_disabled"], description: "" })).endpoint;
      const sender = new ScriptedSender();
      sender.answer = (r) => (r.url === failing.url ? { error: "ECONNREFUSED", durationMs: 1 } : { statusCode: 204, excerpt: "", durationMs: 1 });
      const loop = loopWith(sender);
      // The clock is shared with the file's other tests, which may have moved it (tests run in any order).
      const firstFailure = now;
      // One delivery a day, each failing: the endpoint stays enabled until five days have passed since the first failure.
      for (let day = 0; day <= 5; day++) {
        await queueTest(failing.id);
        await loop.tick();
        await loop.settled();
        const state = (await endpoints.get(accountId, failing.id)).disabledReason;
        expect({ day, state }).toEqual({ day, state: day < 5 ? null : "failing" });
        now += 24 * hour;
      }
      expect((await endpoints.get(accountId, failing.id)).failingSince).toBe(firstFailure);
      await loop.tick();
      await loop.settled();
      const notices = sender.sent.filter((r) => r.url === watcher.url).map((r) => JSON.parse(r.body) as { type: string; data: { reason: string; webhookEndpointId: string } });
      expect(notices.map((n) => [n.type, n.data.webhookEndpointId, n.data.reason])).toEqual([["webhook.endpoint_disabled", failing.id, "failing"]]);
      await endpoints.update(accountId, watcher.id, { disabled: true });
    });

    it("a success ends a run of failures: the five days start again at the next failure", async () => {
      const flaky = (await endpoints.create(accountId, { url: "http://flaky.test/", eventTypes: [], description: "" })).endpoint;
      const sender = new ScriptedSender();
      let up = false;
      sender.answer = () => (up ? { statusCode: 200, excerpt: "", durationMs: 1 } : { statusCode: 500, excerpt: "", durationMs: 1 });
      const loop = loopWith(sender);
      await queueTest(flaky.id);
      await loop.tick();
      await loop.settled();
      expect((await endpoints.get(accountId, flaky.id)).failingSince).toBe(now);
      up = true;
      now += 2 * hour;
      await loop.tick();
      await loop.settled();
      expect((await endpoints.get(accountId, flaky.id)).failingSince).toBeNull();
      await endpoints.update(accountId, flaky.id, { disabled: true });
    });

    it("at most the bound of attempts at once to one endpoint; a slow endpoint does not hold up another", async () => {
      const slow = (await endpoints.create(accountId, { url: "http://slow.test/", eventTypes: [], description: "" })).endpoint;
      const quick = (await endpoints.create(accountId, { url: "http://quick.test/", eventTypes: [], description: "" })).endpoint;
      const sender = new ScriptedSender();
      sender.answer = (r) => (r.url === slow.url ? "hold" : { statusCode: 200, excerpt: "", durationMs: 1 });
      const loop = loopWith(sender);
      for (let i = 0; i < 6; i++) await queueTest(slow.id);
      for (let i = 0; i < 6; i++) await queueTest(quick.id);
      loop.start();
      await expect.poll(() => sender.sent.filter((r) => r.url === quick.url).length).toBe(6);
      expect(sender.inFlight.get(slow.url)).toBe(settings.perEndpointConcurrency);
      // Let the slow one answer, two at a time: all six arrive, never more than the bound at once.
      while (sender.sent.filter((r) => r.url === slow.url).length < 6 || sender.waiting.length) {
        sender.waiting.splice(0).forEach((release) => release());
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await loop.stop();
      expect(sender.peak.get(slow.url)).toBe(settings.perEndpointConcurrency);
      expect(sender.sent.filter((r) => r.url === slow.url)).toHaveLength(6);
    });
  });
}
