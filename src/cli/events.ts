import type { Config } from "../config/schema.ts";
import { withDomain } from "./admin.ts";
import { UsageError } from "./usage-error.ts";

/**
 * `shomei events list <account>`: the account's latest events, newest first,
 * one line each (time, id, type, certificate, previous and new status).
 * `shomei events redeliver <account> <event-id> [--endpoint ID]`: sends an
 * event again, with the same webhook-id, to one endpoint or to every enabled
 * endpoint of the account that takes its type.
 */
export async function eventsCommand(config: Config, args: string[], values: Record<string, unknown>): Promise<void> {
  const [action, accountName, eventId] = args;
  if (action !== "list" && action !== "redeliver") throw new UsageError(`unknown action "${action ?? ""}": use list or redeliver`);
  if (!accountName) throw new UsageError(`events ${action} needs an account name`);
  await withDomain(config, async ({ accounts, events, webhooks }) => {
    const account = await accounts.get(accountName);
    if (action === "list") {
      const limit = values.limit === undefined ? 20 : Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new UsageError("--limit must be a whole number from 1 to 100");
      const filter = { certificateId: String(values.certificate ?? ""), type: String(values.type ?? "") };
      for (const e of (await events.list(account.id, filter, limit, "")).events) {
        const what = e.kind === "certificate" ? [e.certificateId, `${e.previousStatus} -> ${e.status}`] : [e.data.webhookEndpointId, e.data.reason ?? e.data.eventId ?? ""];
        console.log([new Date(e.createdAt).toISOString(), e.id, e.type, ...what].join("\t"));
      }
      return;
    }
    if (!eventId) throw new UsageError("events redeliver needs an event id");
    let endpointIds: string[];
    if (typeof values.endpoint === "string") {
      endpointIds = [values.endpoint];
    } else {
      const event = await events.get(account.id, eventId);
      // A notice goes to the account's other endpoints; a notice about one endpoint is not sent to it.
      const about = event.kind === "webhook" ? event.data.webhookEndpointId : undefined;
      endpointIds = (await webhooks.list(account.id))
        .filter((e) => e.id !== about && e.disabledAt === null && (e.eventTypes.length === 0 || e.eventTypes.includes(event.type)))
        .map((e) => e.id);
      if (!endpointIds.length) throw new UsageError(`account ${account.name} has no enabled endpoint that takes ${event.type}`);
    }
    for (const endpointId of endpointIds) {
      await webhooks.redeliver(account.id, eventId, endpointId);
      console.log(`queued ${eventId} for ${endpointId}`);
    }
  });
}
