import { Code, createClient, type Client } from "@connectrpc/connect";
import { Http2SessionManager } from "@connectrpc/connect-node";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CertificateStatus_Status as Status, Certificate_Type as CertificateType, CrlReason } from "../../gen/service/verify/v2/certificate_pb.ts";
import { EventService } from "../../gen/service/verify/v2/event_service_pb.ts";
import { bearer, createTenant, expectRpcError, protocols, setupClients, sleep, type Clients, type Tenant } from "../support/certificate-rpc.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { WebhooksRepository } from "../../src/storage/webhooks-repository.ts";
import { verifiedEvent, WebhookReceiver } from "../support/webhook-receiver.ts";

/**
 * Webhooks through real requests on each database, to a receiver on
 * loopback that verifies every delivery with the standardwebhooks package
 * and parses it with the cloudevents package: a certificate change arrives
 * signed, as a CloudEvent; a failed attempt is retried with the same
 * webhook-id; 410 disables; a rotated secret signs beside the old one; an
 * account's events never reach another account's endpoints; bad input
 * answers invalid_argument with a reason.
 */
for (const target of await databaseTargets()) {
  describe.skipIf(target.unavailable !== undefined)(`webhooks on ${targetTitle(target)}`, () => {
    let scratch: ScratchDatabase;
    let server: TestServer;
    let receiver: WebhookReceiver;
    let h2: Http2SessionManager;
    let a: Tenant;
    let b: Tenant;
    let setupA: Clients;
    let eventsA: Client<typeof EventService>;
    let eventsB: Client<typeof EventService>;

    beforeAll(async () => {
      scratch = await target.create();
      // A short schedule, so that retries and exhaustion happen within a test.
      server = await startTestServer(scratch.url, { webhookRetrySchedule: "0,100ms,100ms", webhookPollMs: 50, webhookTimeoutMs: 2000 });
      receiver = await new WebhookReceiver().start();
      h2 = new Http2SessionManager(server.url);
      a = await createTenant(server, "webhooks-a");
      b = await createTenant(server, "webhooks-b");
      setupA = setupClients(server, a.token);
      eventsA = createClient(EventService, protocols[0]!.transport(server.url, [bearer(a.token)], h2));
      eventsB = createClient(EventService, protocols[1]!.transport(server.url, [bearer(b.token)], h2));
    });

    afterAll(async () => {
      h2?.abort();
      await server?.close();
      await receiver?.close();
      await scratch?.drop();
    });

    /**
     * A mock certificate of A, checked good, then revoked (the mock CA's new list records the change, or the
     * check after it does): one certificate.revoked event; its id.
     */
    async function revokedCertificate(): Promise<{ certificateId: string; eventId: string }> {
      const certificateId = (await setupA.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE })).certificate!.id;
      await setupA.certificates.checkCertificateStatus({ certificateId });
      await setupA.mock.setMockCertificateStatus({ certificateId, status: Status.REVOKED, revokedReason: CrlReason.KEY_COMPROMISE });
      await setupA.certificates.checkCertificateStatus({ certificateId });
      const events = (await eventsA.listEvents({ certificateId })).events;
      expect(events.map((e) => e.type)).toEqual(["certificate.revoked"]);
      return { certificateId, eventId: events[0]!.id };
    }

    async function endpoint(client: Client<typeof EventService>, path: string, eventTypes: string[] = ["certificate.revoked"]) {
      const created = await client.createWebhookEndpoint({ url: receiver.url(path), eventTypes, description: path });
      return { id: created.webhookEndpoint!.id, secret: created.secret };
    }

    it("a revocation arrives once, signed per Standard Webhooks, as a CloudEvent whose id is the webhook-id and the event's", async () => {
      const target = await endpoint(eventsA, "/first");
      expect(target.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      const { certificateId, eventId } = await revokedCertificate();
      const [request] = await receiver.waitFor("/first", 1);
      const event = verifiedEvent(target.secret, request!);
      expect(request!.headers["webhook-id"]).toBe(eventId);
      expect(Number(request!.headers["webhook-timestamp"])).toBeGreaterThan(0);
      expect({ id: event.id, type: event.type, subject: event.subject, source: event.source, specversion: event.specversion }).toEqual({
        id: eventId,
        type: "certificate.revoked",
        subject: certificateId,
        source: `${server.domain.oidc.issuer}/accounts/${a.account.id}`,
        specversion: "1.0",
      });
      expect(event.data).toMatchObject({ certificateId, status: "revoked", previousStatus: "good", revokedReason: 1, checkMethod: "crl" });
      // Another secret does not verify it.
      const other = await endpoint(eventsA, "/unused", ["webhook.test"]);
      expect(() => new Webhook(other.secret).verify(request!.body, request!.headers)).toThrow();

      await expect.poll(async () => (await eventsA.listEventDeliveries({ eventId, webhookEndpointId: target.id })).deliveries.map((d) => [d.outcome, d.statusCode, d.attempt])).toEqual([["delivered", 200, 1]]);
      await sleep(300);
      expect(receiver.at("/first")).toHaveLength(1);
      // The secret is stored sealed, never as it was shown.
      const row = await server.database.db.selectFrom("webhook_endpoints").selectAll().where("id", "=", target.id).executeTakeFirstOrThrow();
      expect(JSON.stringify(row)).not.toContain(target.secret.slice(6));
    });

    it("503 then 200: the same webhook-id twice, and the delivery ends delivered", async () => {
      const target = await endpoint(eventsA, "/flaky");
      receiver.answer("/flaky", (n) => (n === 1 ? 503 : 200));
      const { eventId } = await revokedCertificate();
      const requests = await receiver.waitFor("/flaky", 2);
      expect(requests.map((r) => r.headers["webhook-id"])).toEqual([eventId, eventId]);
      for (const request of requests) expect(verifiedEvent(target.secret, request).id).toBe(eventId);
      await expect.poll(async () => (await eventsA.listEventDeliveries({ webhookEndpointId: target.id })).deliveries.map((d) => [d.attempt, d.outcome, d.statusCode])).toEqual([
        [2, "delivered", 200],
        [1, "failed", 503],
      ]);
    });

    it("a redirect is not followed but retried; an exhausted delivery is told to the account's other endpoints", async () => {
      const watcher = await endpoint(eventsA, "/notices-exhausted", ["webhook.attempt_exhausted"]);
      const target = await endpoint(eventsA, "/redirects");
      receiver.answer("/redirects", () => ({ status: 302, location: receiver.url("/elsewhere") }));
      const { eventId } = await revokedCertificate();
      await receiver.waitFor("/redirects", 3);
      // The watcher hears of every exhausted delivery of the account (an earlier test's endpoint may have one): this one's.
      const aboutTarget = () =>
        receiver.at("/notices-exhausted").map((r) => verifiedEvent(watcher.secret, r)).find((e) => (e.data as { webhookEndpointId?: string }).webhookEndpointId === target.id);
      await expect.poll(aboutTarget, { timeout: 10_000 }).toBeDefined();
      const event = aboutTarget()!;
      expect(event.type).toBe("webhook.attempt_exhausted");
      expect(event.data).toMatchObject({ webhookEndpointId: target.id, eventId, eventType: "certificate.revoked" });
      expect((await eventsA.getEvent({ eventId: event.id })).event!.webhookData).toMatchObject({ webhookEndpointId: target.id, eventId, eventType: "certificate.revoked" });
      expect(receiver.at("/elsewhere")).toEqual([]);
      const attempts = (await eventsA.listEventDeliveries({ eventId, webhookEndpointId: target.id })).deliveries;
      expect(attempts.map((d) => [d.attempt, d.outcome, d.statusCode])).toEqual([
        [3, "failed", 302],
        [2, "failed", 302],
        [1, "failed", 302],
      ]);
      await sleep(300);
      expect(receiver.at("/redirects")).toHaveLength(3);
    });

    it("410 Gone disables the endpoint at once, and the account's other endpoints hear of it", async () => {
      const watcher = await endpoint(eventsA, "/notices-disabled", ["webhook.endpoint_disabled"]);
      const target = await endpoint(eventsA, "/gone");
      receiver.answer("/gone", () => 410);
      await revokedCertificate();
      await receiver.waitFor("/gone", 1);
      const [notice] = await receiver.waitFor("/notices-disabled", 1);
      const noticed = verifiedEvent(watcher.secret, notice!);
      expect(noticed.data).toMatchObject({ webhookEndpointId: target.id, reason: "gone", url: receiver.url("/gone") });
      // The notice is one of the account's events too, under the id it was sent with.
      const [listed] = (await eventsA.listEvents({ type: "webhook.endpoint_disabled", pageSize: 1 })).events;
      expect({ id: listed!.id, subject: listed!.subject, data: listed!.webhookData }).toMatchObject({
        id: noticed.id,
        subject: target.id,
        data: { webhookEndpointId: target.id, reason: "gone", url: receiver.url("/gone") },
      });
      expect((await eventsB.listEvents({ type: "webhook.endpoint_disabled" })).events).toEqual([]);
      const got = (await eventsA.getWebhookEndpoint({ webhookEndpointId: target.id })).webhookEndpoint!;
      expect({ disabled: got.disabled, reason: got.disabledReason }).toEqual({ disabled: true, reason: "gone" });
      await revokedCertificate();
      await sleep(400);
      expect(receiver.at("/gone")).toHaveLength(1);
      await expectRpcError(eventsA.sendTestEvent({ webhookEndpointId: target.id }), Code.FailedPrecondition, "ERROR_REASON_WEBHOOK_ENDPOINT_DISABLED", "webhook_endpoint_id");
      // Enabled again, it gets what waited and new events.
      receiver.answer("/gone", () => 200);
      await eventsA.updateWebhookEndpoint({ webhookEndpointId: target.id, disabled: false });
      await receiver.waitFor("/gone", 2);
    });

    it("after a rotation each delivery verifies with the old secret and with the new one", async () => {
      const target = await endpoint(eventsA, "/rotated", ["webhook.test"]);
      const rotated = await eventsA.rotateWebhookEndpointSecret({ webhookEndpointId: target.id });
      expect(rotated.secret).not.toBe(target.secret);
      expect(rotated.webhookEndpoint!.previousSecretExpiresAt).toBeDefined();
      const { eventId } = await eventsA.sendTestEvent({ webhookEndpointId: target.id });
      const [request] = await receiver.waitFor("/rotated", 1);
      expect(request!.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
      expect(verifiedEvent(target.secret, request!).id).toBe(eventId);
      expect(verifiedEvent(rotated.secret, request!).type).toBe("webhook.test");
    });

    it("RedeliverEvent sends an event again with the same webhook-id", async () => {
      const target = await endpoint(eventsA, "/again");
      const { eventId } = await revokedCertificate();
      await receiver.waitFor("/again", 1);
      await eventsA.redeliverEvent({ eventId, webhookEndpointId: target.id });
      const requests = await receiver.waitFor("/again", 2);
      expect(requests.map((r) => verifiedEvent(target.secret, r).id)).toEqual([eventId, eventId]);
    });

    it("ListEventDeliveries pages through an endpoint's attempts, newest first; a token of another listing is refused", async () => {
      const target = await endpoint(eventsA, "/paged", ["webhook.test"]);
      for (let i = 0; i < 5; i++) await eventsA.sendTestEvent({ webhookEndpointId: target.id });
      await receiver.waitFor("/paged", 5);
      await expect.poll(async () => (await eventsA.listEventDeliveries({ webhookEndpointId: target.id, pageSize: 100 })).deliveries.length).toBe(5);
      const all = (await eventsA.listEventDeliveries({ webhookEndpointId: target.id, pageSize: 100 })).deliveries;
      const seen: string[] = [];
      let pageToken = "";
      const sizes: number[] = [];
      do {
        const page = await eventsA.listEventDeliveries({ webhookEndpointId: target.id, pageSize: 2, pageToken });
        sizes.push(page.deliveries.length);
        seen.push(...page.deliveries.map((d) => d.id));
        pageToken = page.nextPageToken;
      } while (pageToken);
      expect(sizes).toEqual([2, 2, 1]);
      expect(seen).toEqual(all.map((d) => d.id));
      const first = await eventsA.listEventDeliveries({ webhookEndpointId: target.id, pageSize: 2 });
      await expectRpcError(eventsA.listEventDeliveries({ pageSize: 2, pageToken: first.nextPageToken }), Code.InvalidArgument, "ERROR_REASON_INVALID_PAGE_TOKEN", "page_token");
      await expectRpcError(eventsA.listEventDeliveries({ webhookEndpointId: target.id, pageToken: "bm90IGEgdG9rZW4" }), Code.InvalidArgument, "ERROR_REASON_INVALID_PAGE_TOKEN", "page_token");
    });

    it("another account's endpoints never receive A's events, and A's endpoints and events are unknown to B", async () => {
      const ofB = await endpoint(eventsB, "/account-b", []);
      const ofA = await endpoint(eventsA, "/account-a", []);
      const { eventId } = await revokedCertificate();
      await receiver.waitFor("/account-a", 1);
      await sleep(400);
      expect(receiver.at("/account-b")).toEqual([]);
      await expectRpcError(eventsB.getWebhookEndpoint({ webhookEndpointId: ofA.id }), Code.NotFound, "ERROR_REASON_WEBHOOK_ENDPOINT_NOT_FOUND");
      await expectRpcError(eventsB.redeliverEvent({ eventId, webhookEndpointId: ofB.id }), Code.NotFound, "ERROR_REASON_EVENT_NOT_FOUND");
      await expectRpcError(eventsB.redeliverEvent({ eventId, webhookEndpointId: ofA.id }), Code.NotFound, "ERROR_REASON_WEBHOOK_ENDPOINT_NOT_FOUND");
      await expectRpcError(eventsB.deleteWebhookEndpoint({ webhookEndpointId: ofA.id }), Code.NotFound, "ERROR_REASON_WEBHOOK_ENDPOINT_NOT_FOUND");
      await expectRpcError(eventsB.rotateWebhookEndpointSecret({ webhookEndpointId: ofA.id }), Code.NotFound, "ERROR_REASON_WEBHOOK_ENDPOINT_NOT_FOUND");
      expect((await eventsB.listEventDeliveries({ eventId })).deliveries).toEqual([]);
      expect((await eventsB.listWebhookEndpoints({})).webhookEndpoints.map((e) => e.id)).toEqual([ofB.id]);
      await eventsA.deleteWebhookEndpoint({ webhookEndpointId: ofA.id });
      await expectRpcError(eventsA.getWebhookEndpoint({ webhookEndpointId: ofA.id }), Code.NotFound, "ERROR_REASON_WEBHOOK_ENDPOINT_NOT_FOUND");
    });

    it("the mock environment's receiver at /demo/webhooks verifies each signature and shows what arrived", async () => {
      const receiverUrl = `${server.domain.oidc.issuer}/demo/webhooks`;
      const target = await eventsA.createWebhookEndpoint({ url: receiverUrl, eventTypes: ["webhook.test"] });
      const { eventId } = await eventsA.sendTestEvent({ webhookEndpointId: target.webhookEndpoint!.id });
      await expect.poll(async () => (await eventsA.listEventDeliveries({ eventId })).deliveries.map((d) => [d.outcome, d.statusCode])).toEqual([["delivered", 204]]);
      // A forgery (the body changed, the signature kept) is refused and shown as such.
      const forged = await fetch(`${server.url}/demo/webhooks`, {
        method: "POST",
        headers: { "webhook-id": "forged-1", "webhook-timestamp": String(Math.floor(Date.now() / 1000)), "webhook-signature": "v1,AAAA", "content-type": "application/json" },
        body: JSON.stringify({ type: "certificate.revoked" }),
      });
      expect(forged.status).toBe(401);
      const page = await (await fetch(`${server.url}/demo/webhooks`, { headers: { "accept-language": "en" } })).text();
      const sections = page.split('<section class="received">').slice(1);
      expect(sections[0]).toContain("forged-1");
      expect(sections[0]).toContain("Signature not verified");
      const delivered = sections.find((s) => s.includes(eventId))!;
      expect(delivered).toContain("Signature verified");
      expect(delivered).toContain("webhook.test");
    });

    it("/metrics tells events recorded, attempts by outcome, the queue's depth and its oldest delivery's age", async () => {
      let metrics = "";
      const scrape = async () => {
        metrics = await (await fetch(`${server.url}/metrics`)).text();
      };
      const value = (line: string) => Number(new RegExp(`^${line.replace(/[{}]/g, "\\$&")} (\\S+)$`, "m").exec(metrics)?.[1]);
      const rows = async () => Number((await server.database.db.selectFrom("certificate_events").select((eb) => eb.fn.countAll().as("n")).executeTakeFirstOrThrow()).n);
      // The counter counts events ever recorded (the retention test may have deleted rows): compare what this test adds.
      await scrape();
      const certificateRows = async () =>
        Number((await server.database.db.selectFrom("certificate_events").select((eb) => eb.fn.countAll().as("n")).where("type", "like", "certificate.%").executeTakeFirstOrThrow()).n);
      const [totalBefore, rowsBefore, certificateRowsBefore] = [value("shomei_events_total"), await rows(), await certificateRows()];
      const target = await endpoint(eventsA, "/metrics", ["webhook.test", "certificate.revoked"]);
      await revokedCertificate();
      const { eventId } = await eventsA.sendTestEvent({ webhookEndpointId: target.id });
      await expect.poll(async () => (await eventsA.listEventDeliveries({ eventId })).deliveries.length).toBe(1);
      await scrape();
      expect(await certificateRows() - certificateRowsBefore).toBe(1);
      // A scrape reads the database at most once a second (metrics.ts): the counter catches up within that. Notices of
      // earlier tests' endpoints (an attempt exhausted) may be recorded meanwhile: the counter counts them too.
      const counterBehind = async () => {
        await scrape();
        return (await rows()) - rowsBefore - (value("shomei_events_total") - totalBefore);
      };
      await expect.poll(counterBehind, { timeout: 5000 }).toBe(0);
      const counts = server.domain.webhookDelivery.loop.counts;
      expect(counts.delivered).toBeGreaterThan(0);
      // Other tests' deliveries may finish between a scrape and the read of the counts: scrape until both agree.
      const scraped = async () => {
        await scrape();
        return ["delivered", "gone", "exhausted"].map((outcome) => value(`shomei_webhook_attempts_total{outcome="${outcome}"}`));
      };
      const behind = async () => {
        const values = await scraped();
        return [counts.delivered, counts.gone, counts.exhausted].map((live, i) => live - values[i]!);
      };
      await expect.poll(behind, { timeout: 5000 }).toEqual([0, 0, 0]);
      expect(value("shomei_webhook_queue_depth")).toBeGreaterThanOrEqual(0);
      expect(value("shomei_webhook_oldest_pending_seconds")).toBeGreaterThanOrEqual(0);
    });

    it("bad input to every webhook RPC answers invalid_argument with the field at fault, and changes nothing", async () => {
      const before = (await eventsA.listWebhookEndpoints({})).webhookEndpoints.length;
      const invalid = (call: Promise<unknown>, field: string) => expectRpcError(call, Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", field);
      await invalid(eventsA.createWebhookEndpoint({ url: "" }), "url");
      await invalid(eventsA.createWebhookEndpoint({ url: "not a url" }), "url");
      await invalid(eventsA.createWebhookEndpoint({ url: "ftp://example.com/" }), "url");
      await invalid(eventsA.createWebhookEndpoint({ url: "https://user:pw@example.com/" }), "url");
      await invalid(eventsA.createWebhookEndpoint({ url: `https://example.com/${"a".repeat(2100)}` }), "url");
      await invalid(eventsA.createWebhookEndpoint({ url: "https://example.com/", eventTypes: ["certificate.deleted"] }), "event_types");
      await invalid(eventsA.createWebhookEndpoint({ url: "https://example.com/", description: "x".repeat(501) }), "description");
      for (const id of ["", "not-a-uuid"]) {
        await invalid(eventsA.getWebhookEndpoint({ webhookEndpointId: id }), "webhook_endpoint_id");
        await invalid(eventsA.updateWebhookEndpoint({ webhookEndpointId: id }), "webhook_endpoint_id");
        await invalid(eventsA.deleteWebhookEndpoint({ webhookEndpointId: id }), "webhook_endpoint_id");
        await invalid(eventsA.rotateWebhookEndpointSecret({ webhookEndpointId: id }), "webhook_endpoint_id");
        await invalid(eventsA.sendTestEvent({ webhookEndpointId: id }), "webhook_endpoint_id");
      }
      const target = await endpoint(eventsA, "/unchanged");
      await invalid(eventsA.updateWebhookEndpoint({ webhookEndpointId: target.id, url: "gopher://x/" }), "url");
      await invalid(eventsA.updateWebhookEndpoint({ webhookEndpointId: target.id, eventTypes: { values: ["nope"] } }), "event_types");
      await invalid(eventsA.redeliverEvent({ eventId: "x", webhookEndpointId: target.id }), "event_id");
      await invalid(eventsA.listEventDeliveries({ eventId: "x" }), "event_id");
      await invalid(eventsA.listEventDeliveries({ webhookEndpointId: "x" }), "webhook_endpoint_id");
      await invalid(eventsA.listEventDeliveries({ pageSize: 101 }), "page_size");
      await expectRpcError(eventsA.redeliverEvent({ eventId: "00000000-0000-4000-8000-000000000000", webhookEndpointId: target.id }), Code.NotFound, "ERROR_REASON_EVENT_NOT_FOUND");
      const after = (await eventsA.getWebhookEndpoint({ webhookEndpointId: target.id })).webhookEndpoint!;
      expect({ url: after.url, eventTypes: after.eventTypes }).toEqual({ url: receiver.url("/unchanged"), eventTypes: ["certificate.revoked"] });
      expect((await eventsA.listWebhookEndpoints({})).webhookEndpoints).toHaveLength(before + 1);
      // Updating the fields set, keeping the others; an empty list of types means every type.
      const updated = (await eventsA.updateWebhookEndpoint({ webhookEndpointId: target.id, description: "changed", eventTypes: { values: [] } })).webhookEndpoint!;
      expect({ url: updated.url, description: updated.description, eventTypes: updated.eventTypes }).toEqual({ url: receiver.url("/unchanged"), description: "changed", eventTypes: [] });
    });

    it("retention deletes old attempts, finished deliveries and events, and keeps an event whose delivery is pending", async () => {
      const disableAll = async () => {
        for (const other of (await eventsA.listWebhookEndpoints({})).webhookEndpoints) {
          await eventsA.updateWebhookEndpoint({ webhookEndpointId: other.id, disabled: true });
        }
      };
      // The first event goes to one endpoint only, and is delivered.
      await disableAll();
      const done = await endpoint(eventsA, "/retention-done");
      const first = await revokedCertificate();
      await expect.poll(async () => (await eventsA.listEventDeliveries({ eventId: first.eventId, webhookEndpointId: done.id })).deliveries.length).toBe(1);
      // Only an endpoint that never answers takes the next event: its delivery stays pending (in flight, then retried).
      await disableAll();
      await endpoint(eventsA, "/retained");
      receiver.answer("/retained", () => "hang");
      const { eventId } = await revokedCertificate();
      const pending = await server.database.db.selectFrom("webhook_deliveries").select("state").where("event_id", "=", eventId).execute();
      expect(pending).toEqual([{ state: "pending" }]);
      const store = new WebhooksRepository(server.database);
      const future = Date.now() + 60_000;
      const pruned = await store.prune({ eventsBefore: future, attemptsBefore: future });
      expect(pruned.attempts).toBeGreaterThan(0);
      expect(pruned.events).toBeGreaterThan(0);
      const left = (await server.database.db.selectFrom("certificate_events").select("id").where("account_id", "=", a.account.id).execute()).map((e) => e.id);
      expect(left).toContain(eventId);
      expect(left).not.toContain(first.eventId);
      expect((await eventsA.listEventDeliveries({})).deliveries).toEqual([]);
    });
  });
}
