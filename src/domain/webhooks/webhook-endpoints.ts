import { requireUuid } from "../certificates/lookup-errors.ts";
import type { Clock } from "../clock.ts";
import { open, seal } from "../credentials/secret-box.ts";
import { decodePageToken, encodePageToken } from "../page-token.ts";
import { DomainError, invalidField } from "../errors.ts";
import { isCertificateEventType } from "../events/model.ts";
import { canonicalUuid, newId } from "../ids.ts";
import { checkedEndpointUrl } from "./endpoint-url.ts";
import type { EndpointChanges, WebhookAttempt, WebhookEndpoint, WebhookStore } from "./model.ts";
import { webhookEventTypes } from "./model.ts";
import { cloudEvent, eventSource } from "./payload.ts";
import { newWebhookSecret } from "./signature.ts";

/** How long a rotated-out secret keeps signing beside the new one. */
export const rotationOverlapMs = 24 * 3600 * 1000;
const maxDescriptionLength = 500;
const maxEventTypes = 20;
const maxAttemptsListed = 100;

export interface EndpointSettings {
  /** Whether `http:` and loopback, private or link-local addresses may be endpoints. */
  allowPrivate: boolean;
}

export function endpointNotFound(): DomainError {
  return new DomainError("webhook_endpoint_not_found", "no webhook endpoint with this id");
}

/** A new or updated endpoint's fields, as given. */
export interface EndpointInput {
  url: string;
  eventTypes: string[];
  description: string;
}

/**
 * An account's webhook endpoints: registered, changed, disabled, deleted,
 * their secrets rotated; the attempts made to them listed; an event sent
 * again or a test event sent. The signing secret is shown once, when made,
 * and kept only sealed with the server key. Every call takes the account:
 * another account's endpoint answers like an unknown one.
 */
export class WebhookEndpoints {
  constructor(
    private readonly store: WebhookStore,
    private readonly secretKey: Uint8Array,
    private readonly clock: Clock,
    private readonly settings: EndpointSettings,
    /** The server's issuer URL, the source of the events sent. */
    private readonly issuer: string,
    /** Told when a delivery was queued by a call, so this instance's loop looks at once. */
    private readonly queued: () => void = () => undefined,
  ) {}

  async create(accountId: string, input: EndpointInput): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const url = checkedEndpointUrl(input.url, this.settings.allowPrivate);
    const eventTypes = checkedEventTypes(input.eventTypes);
    const description = checkedDescription(input.description);
    const now = this.clock();
    const id = newId();
    const secret = newWebhookSecret();
    const endpoint: WebhookEndpoint = {
      id, accountId, url, description, eventTypes,
      secretSealed: seal(this.secretKey, secret, id),
      previousSecretSealed: null, previousSecretUntil: null,
      disabledAt: null, disabledReason: null, failingSince: null,
      createdAt: now, updatedAt: now,
    };
    await this.store.insertEndpoint(endpoint);
    return { endpoint, secret };
  }

  list(accountId: string): Promise<WebhookEndpoint[]> {
    return this.store.listEndpoints(accountId);
  }

  async get(accountId: string, endpointId: string): Promise<WebhookEndpoint> {
    requireUuid(endpointId, "webhook_endpoint_id");
    const endpoint = await this.store.findEndpoint(accountId, canonicalUuid(endpointId));
    if (!endpoint) throw endpointNotFound();
    return endpoint;
  }

  async update(accountId: string, endpointId: string, changes: Partial<EndpointInput> & { disabled?: boolean }): Promise<WebhookEndpoint> {
    requireUuid(endpointId, "webhook_endpoint_id");
    const checked: EndpointChanges = {};
    if (changes.url !== undefined) checked.url = checkedEndpointUrl(changes.url, this.settings.allowPrivate);
    if (changes.eventTypes !== undefined) checked.eventTypes = checkedEventTypes(changes.eventTypes);
    if (changes.description !== undefined) checked.description = checkedDescription(changes.description);
    if (changes.disabled !== undefined) checked.disabled = changes.disabled;
    const updated = await this.store.updateEndpoint(accountId, canonicalUuid(endpointId), checked, this.clock());
    if (!updated) throw endpointNotFound();
    return updated;
  }

  async delete(accountId: string, endpointId: string): Promise<void> {
    requireUuid(endpointId, "webhook_endpoint_id");
    if (!(await this.store.deleteEndpoint(accountId, canonicalUuid(endpointId)))) throw endpointNotFound();
  }

  /** A new secret; the current one goes on signing beside it for 24 hours (the one before it stops at once). */
  async rotateSecret(accountId: string, endpointId: string): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    requireUuid(endpointId, "webhook_endpoint_id");
    const id = canonicalUuid(endpointId);
    const secret = newWebhookSecret();
    const now = this.clock();
    const endpoint = await this.store.rotateSecret(accountId, id, seal(this.secretKey, secret, id), now + rotationOverlapMs, now);
    if (!endpoint) throw endpointNotFound();
    return { endpoint, secret };
  }

  /** The finished attempts, newest first, of one event, one endpoint, both, or (neither) the account's latest; page by page. */
  async attempts(
    accountId: string,
    filter: { eventId: string; endpointId: string },
    pageSize: number,
    pageToken = "",
  ): Promise<{ attempts: WebhookAttempt[]; nextPageToken: string }> {
    if (!Number.isInteger(pageSize) || pageSize < 0 || pageSize > maxAttemptsListed) {
      throw invalidField("page_size", `page_size must be between 0 and ${maxAttemptsListed}`);
    }
    const chosen: { eventId?: string; endpointId?: string } = {};
    if (filter.eventId) {
      requireUuid(filter.eventId, "event_id");
      chosen.eventId = canonicalUuid(filter.eventId);
    }
    if (filter.endpointId) {
      requireUuid(filter.endpointId, "webhook_endpoint_id");
      chosen.endpointId = canonicalUuid(filter.endpointId);
    }
    const listing = `${chosen.eventId ?? ""}/${chosen.endpointId ?? ""}`;
    const after = pageToken ? decodePageToken(listing, pageToken, true) : undefined;
    if (chosen.endpointId && !(await this.store.findEndpoint(accountId, chosen.endpointId))) throw endpointNotFound();
    const size = pageSize || 20;
    const rows = await this.store.listAttempts(accountId, chosen, size + 1, after && { startedAt: after.at, id: after.id! });
    const attempts = rows.slice(0, size);
    const last = attempts.at(-1);
    return { attempts, nextPageToken: rows.length > size && last ? encodePageToken(listing, { at: last.startedAt, id: last.id }) : "" };
  }

  /** Sends an event to an endpoint again, as a new delivery with the same webhook-id, due now. */
  async redeliver(accountId: string, eventId: string, endpointId: string): Promise<void> {
    requireUuid(eventId, "event_id");
    const endpoint = await this.enabledEndpoint(accountId, endpointId);
    if (!(await this.store.requeue(accountId, canonicalUuid(eventId), endpoint.id, this.clock()))) {
      throw new DomainError("event_not_found", "no event with this id");
    }
    this.queued();
  }

  /** Queues a `webhook.test` event to the endpoint; its id. */
  async sendTest(accountId: string, endpointId: string): Promise<string> {
    const endpoint = await this.enabledEndpoint(accountId, endpointId);
    const now = this.clock();
    const eventId = newId();
    const payload = cloudEvent(eventId, "webhook.test", eventSource(this.issuer, accountId), endpoint.id, now, { webhookEndpointId: endpoint.id });
    await this.store.queueEvent({ eventId, accountId, eventType: "webhook.test", payload, endpointIds: [endpoint.id] }, now);
    this.queued();
    return eventId;
  }

  /** The secrets that sign now: the current one, and the previous one during its overlap. */
  signingSecrets(endpoint: WebhookEndpoint, now: number): string[] {
    const secrets = [open(this.secretKey, endpoint.secretSealed, endpoint.id).toString("utf8")];
    if (endpoint.previousSecretSealed && endpoint.previousSecretUntil !== null && endpoint.previousSecretUntil > now) {
      secrets.push(open(this.secretKey, endpoint.previousSecretSealed, endpoint.id).toString("utf8"));
    }
    return secrets;
  }

  private async enabledEndpoint(accountId: string, endpointId: string): Promise<WebhookEndpoint> {
    const endpoint = await this.get(accountId, endpointId);
    if (endpoint.disabledAt !== null) {
      throw new DomainError("webhook_endpoint_disabled", "the webhook endpoint is disabled; enable it with UpdateWebhookEndpoint first", "webhook_endpoint_id");
    }
    return endpoint;
  }
}

function checkedEventTypes(types: string[]): string[] {
  if (types.length > maxEventTypes) throw invalidField("event_types", `event_types must list at most ${maxEventTypes} types`);
  for (const type of types) {
    if (!isCertificateEventType(type) && !(webhookEventTypes as readonly string[]).includes(type)) {
      throw invalidField("event_types", `event_types: unknown event type ${JSON.stringify(type.slice(0, 64))}`);
    }
  }
  return [...new Set(types)];
}

function checkedDescription(description: string): string {
  if (description.length > maxDescriptionLength) throw invalidField("description", `description must be at most ${maxDescriptionLength} characters`);
  return description;
}
