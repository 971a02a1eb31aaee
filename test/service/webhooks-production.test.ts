import { lookup } from "node:dns/promises";
import { hostname } from "node:os";
import { Code, createClient, type Client } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/service/verify/v2/event_service_pb.ts";
import { createWebhookSender } from "../../src/adapters/http/webhook-sender.ts";
import { isNonPublicAddress } from "../../src/domain/webhooks/private-address.ts";
import { bearer, createTenant, expectRpcError, protocols, type Tenant } from "../support/certificate-rpc.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { WebhookReceiver } from "../support/webhook-receiver.ts";

/**
 * In production mode a webhook cannot be aimed at the service's own network:
 * loopback, private and link-local addresses and plain http are refused when
 * an endpoint is registered, and a host name that resolves to such an
 * address is refused when an attempt connects.
 */
for (const target of await databaseTargets()) {
  describe.skipIf(target.unavailable !== undefined)(`webhook endpoints in production mode on ${targetTitle(target)}`, () => {
    let scratch: ScratchDatabase;
    let server: TestServer;
    let tenant: Tenant;
    let events: Client<typeof EventService>;

    beforeAll(async () => {
      scratch = await target.create();
      server = await startTestServer(scratch.url, { mode: "production" });
      tenant = await createTenant(server, "production-webhooks");
      events = createClient(EventService, protocols[0]!.transport(server.url, [bearer(tenant.token)], undefined as never));
    });

    afterAll(async () => {
      await server?.close();
      await scratch?.drop();
    });

    it("refuses loopback, private, link-local and plain http URLs, and stores none", async () => {
      for (const url of [
        "http://hooks.example.com/",
        "https://127.0.0.1/",
        "https://localhost/",
        "https://[::1]:8443/",
        "https://10.0.0.8/",
        "https://192.168.1.10/",
        "https://169.254.169.254/latest/meta-data",
        "https://[fd00::1]/",
      ]) {
        await expectRpcError(events.createWebhookEndpoint({ url }), Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", "url");
      }
      const kept = await events.createWebhookEndpoint({ url: "https://hooks.example.com/shomei" });
      await expectRpcError(
        events.updateWebhookEndpoint({ webhookEndpointId: kept.webhookEndpoint!.id, url: "https://127.0.0.1/" }),
        Code.InvalidArgument,
        "ERROR_REASON_INVALID_FIELD",
        "url",
      );
      expect((await events.listWebhookEndpoints({})).webhookEndpoints.map((e) => e.url)).toEqual(["https://hooks.example.com/shomei"]);
    });
  });
}

const ownName = hostname();
const ownAddress = await lookup(ownName).then((a) => a.address, () => undefined);

describe("the sender checks the address when it connects", () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
  });
  afterAll(() => receiver?.close());

  // The machine's own name resolves to one of its own (non-public) addresses: a name that passes registration.
  it.skipIf(ownAddress === undefined || isNonPublicAddress(ownAddress) !== true)(
    `a name that resolves to a non-public address (${ownName} → ${ownAddress}) is refused, and nothing is sent`,
    async () => {
      const port = new URL(receiver.baseUrl).port;
      const strict = createWebhookSender({ timeoutMs: 2000, allowPrivate: false, excerptBytes: 100 });
      const request = { headers: { "webhook-id": "x" }, body: "{}" };
      const refused = await strict.send({ ...request, url: `https://${ownName}:${port}/strict` });
      expect(refused).toMatchObject({ error: `refused: ${ownName} resolves to a loopback, private or link-local address` });
      expect(await strict.send({ ...request, url: `http://${ownName}:${port}/strict` })).toMatchObject({ error: "refused: only https:// endpoints are allowed" });
      expect(receiver.at("/strict")).toEqual([]);
      strict.close();
      // Allowed, the same name reaches the receiver, which proves the refusal above was the check's.
      const lenient = createWebhookSender({ timeoutMs: 2000, allowPrivate: true, excerptBytes: 100 });
      expect(await lenient.send({ ...request, url: `http://${ownName}:${port}/lenient` })).toMatchObject({ statusCode: 200, excerpt: "ok" });
      expect(receiver.at("/lenient")).toHaveLength(1);
      lenient.close();
    },
  );

  it("keeps at most the excerpt of a long answer, and does not follow a redirect", async () => {
    receiver.answer("/long", () => ({ status: 500, body: "x".repeat(100_000) }));
    receiver.answer("/redirect", () => ({ status: 307, location: receiver.url("/target") }));
    const sender = createWebhookSender({ timeoutMs: 2000, allowPrivate: true, excerptBytes: 1024 });
    const long = await sender.send({ url: receiver.url("/long"), headers: {}, body: "{}" });
    expect(long).toMatchObject({ statusCode: 500 });
    expect("excerpt" in long && long.excerpt.length).toBe(1024);
    expect(await sender.send({ url: receiver.url("/redirect"), headers: {}, body: "{}" })).toMatchObject({ statusCode: 307 });
    expect(receiver.at("/target")).toEqual([]);
    receiver.answer("/slow", () => "hang");
    const quick = createWebhookSender({ timeoutMs: 200, allowPrivate: true, excerptBytes: 1024 });
    expect(await quick.send({ url: receiver.url("/slow"), headers: {}, body: "{}" })).toMatchObject({ error: "no answer within 200 ms" });
    sender.close();
    quick.close();
  });
});
