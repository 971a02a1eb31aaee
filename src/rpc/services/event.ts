import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { CrlReason } from "../../../gen/service/verify/v2/certificate_pb.ts";
import {
  CreateWebhookEndpointResponseSchema,
  DeleteWebhookEndpointResponseSchema,
  EventDeliverySchema,
  GetWebhookEndpointResponseSchema,
  ListEventDeliveriesResponseSchema,
  ListWebhookEndpointsResponseSchema,
  RedeliverEventResponseSchema,
  RotateWebhookEndpointSecretResponseSchema,
  SendTestEventResponseSchema,
  UpdateWebhookEndpointResponseSchema,
  WebhookEndpointSchema,
  type CreateWebhookEndpointRequest,
  type DeleteWebhookEndpointRequest,
  type GetWebhookEndpointRequest,
  type ListEventDeliveriesRequest,
  type RedeliverEventRequest,
  type RotateWebhookEndpointSecretRequest,
  type SendTestEventRequest,
  type UpdateWebhookEndpointRequest,
  type WebhookEndpoint as WebhookEndpointMessage,
  EventSchema,
  GetEventResponseSchema,
  ListEventsResponseSchema,
  WatchEventsResponseSchema,
  type Event,
  type EventService,
  type GetEventRequest,
  type ListEventsRequest,
  type WatchEventsRequest,
  type WatchEventsResponse,
} from "../../../gen/service/verify/v2/event_service_pb.ts";
import type { CertificateEvents } from "../../domain/events/events.ts";
import type { AccountEvent } from "../../domain/events/model.ts";
import type { WebhookAttempt, WebhookEndpoint } from "../../domain/webhooks/model.ts";
import type { WebhookEndpoints } from "../../domain/webhooks/webhook-endpoints.ts";
import { callerAccountId } from "../auth.ts";
import { certificateTypeMessage, checkMethodMessage, statusMessageOf } from "../convert.ts";

/** EventService: the account's certificate events, read, listed and watched; its webhook endpoints and their deliveries. */
export class EventHandler implements ServiceImpl<typeof EventService> {
  constructor(
    private readonly events: CertificateEvents,
    private readonly webhooks: WebhookEndpoints,
    /** The server's issuer URL: an event's source is <issuer>/accounts/<account id>. */
    private readonly issuer: string,
  ) {}

  async listEvents(req: ListEventsRequest, context: HandlerContext) {
    const page = await this.events.list(callerAccountId(context), { certificateId: req.certificateId, type: req.type }, req.pageSize, req.pageToken);
    return create(ListEventsResponseSchema, { events: page.events.map((e) => this.message(e)), nextPageToken: page.nextPageToken });
  }

  async getEvent(req: GetEventRequest, context: HandlerContext) {
    return create(GetEventResponseSchema, { event: this.message(await this.events.get(callerAccountId(context), req.eventId)) });
  }

  async *watchEvents(req: WatchEventsRequest, context: HandlerContext): AsyncGenerator<WatchEventsResponse> {
    for await (const item of this.events.watchEvents(callerAccountId(context), req.afterEventId, context.signal)) {
      yield create(WatchEventsResponseSchema, {
        kind: "event" in item ? { case: "event", value: this.message(item.event) } : { case: "heartbeat", value: timestampFromMs(item.heartbeat) },
      });
    }
  }

  async createWebhookEndpoint(req: CreateWebhookEndpointRequest, context: HandlerContext) {
    const created = await this.webhooks.create(callerAccountId(context), { url: req.url, eventTypes: req.eventTypes, description: req.description });
    return create(CreateWebhookEndpointResponseSchema, { webhookEndpoint: endpointMessage(created.endpoint), secret: created.secret });
  }

  async listWebhookEndpoints(_req: unknown, context: HandlerContext) {
    const endpoints = await this.webhooks.list(callerAccountId(context));
    return create(ListWebhookEndpointsResponseSchema, { webhookEndpoints: endpoints.map(endpointMessage) });
  }

  async getWebhookEndpoint(req: GetWebhookEndpointRequest, context: HandlerContext) {
    return create(GetWebhookEndpointResponseSchema, { webhookEndpoint: endpointMessage(await this.webhooks.get(callerAccountId(context), req.webhookEndpointId)) });
  }

  async updateWebhookEndpoint(req: UpdateWebhookEndpointRequest, context: HandlerContext) {
    const updated = await this.webhooks.update(callerAccountId(context), req.webhookEndpointId, {
      ...(req.url !== undefined ? { url: req.url } : {}),
      ...(req.eventTypes !== undefined ? { eventTypes: req.eventTypes.values } : {}),
      ...(req.description !== undefined ? { description: req.description } : {}),
      ...(req.disabled !== undefined ? { disabled: req.disabled } : {}),
    });
    return create(UpdateWebhookEndpointResponseSchema, { webhookEndpoint: endpointMessage(updated) });
  }

  async deleteWebhookEndpoint(req: DeleteWebhookEndpointRequest, context: HandlerContext) {
    await this.webhooks.delete(callerAccountId(context), req.webhookEndpointId);
    return create(DeleteWebhookEndpointResponseSchema, {});
  }

  async rotateWebhookEndpointSecret(req: RotateWebhookEndpointSecretRequest, context: HandlerContext) {
    const rotated = await this.webhooks.rotateSecret(callerAccountId(context), req.webhookEndpointId);
    return create(RotateWebhookEndpointSecretResponseSchema, { secret: rotated.secret, webhookEndpoint: endpointMessage(rotated.endpoint) });
  }

  async listEventDeliveries(req: ListEventDeliveriesRequest, context: HandlerContext) {
    const page = await this.webhooks.attempts(callerAccountId(context), { eventId: req.eventId, endpointId: req.webhookEndpointId }, req.pageSize, req.pageToken);
    return create(ListEventDeliveriesResponseSchema, { deliveries: page.attempts.map(attemptMessage), nextPageToken: page.nextPageToken });
  }

  async redeliverEvent(req: RedeliverEventRequest, context: HandlerContext) {
    await this.webhooks.redeliver(callerAccountId(context), req.eventId, req.webhookEndpointId);
    return create(RedeliverEventResponseSchema, {});
  }

  async sendTestEvent(req: SendTestEventRequest, context: HandlerContext) {
    return create(SendTestEventResponseSchema, { eventId: await this.webhooks.sendTest(callerAccountId(context), req.webhookEndpointId) });
  }

  private message(e: AccountEvent): Event {
    if (e.kind === "webhook") {
      return create(EventSchema, {
        id: e.id,
        type: e.type,
        source: `${this.issuer}/accounts/${e.accountId}`,
        subject: e.data.webhookEndpointId,
        time: timestampFromMs(e.createdAt),
        webhookData: e.data,
      });
    }
    return create(EventSchema, {
      id: e.id,
      type: e.type,
      source: `${this.issuer}/accounts/${e.accountId}`,
      subject: e.certificateId,
      time: timestampFromMs(e.createdAt),
      data: {
        certificateId: e.certificateId,
        userId: e.userId ?? "",
        ...(e.certificateType ? { certificateType: certificateTypeMessage(e.certificateType) } : {}),
        status: statusMessageOf(e.status),
        previousStatus: statusMessageOf(e.previousStatus),
        checkMethod: checkMethodMessage(e.checkMethod),
        sourceUpdatedAt: timestampFromMs(e.sourceUpdatedAt),
        ...(e.revokedAt !== null ? { revokedAt: timestampFromMs(e.revokedAt) } : {}),
        ...(e.revokedReason !== null ? { revokedReason: e.revokedReason as CrlReason } : {}),
      },
    });
  }
}

function endpointMessage(e: WebhookEndpoint): WebhookEndpointMessage {
  return create(WebhookEndpointSchema, {
    id: e.id,
    url: e.url,
    eventTypes: e.eventTypes,
    description: e.description,
    disabled: e.disabledAt !== null,
    disabledReason: e.disabledReason ?? "",
    createdAt: timestampFromMs(e.createdAt),
    updatedAt: timestampFromMs(e.updatedAt),
    ...(e.previousSecretUntil !== null ? { previousSecretExpiresAt: timestampFromMs(e.previousSecretUntil) } : {}),
  });
}

function attemptMessage(a: WebhookAttempt) {
  return create(EventDeliverySchema, {
    id: a.id,
    eventId: a.eventId,
    webhookEndpointId: a.endpointId,
    attempt: a.attempt,
    outcome: a.outcome,
    statusCode: a.statusCode ?? 0,
    error: a.error ?? "",
    responseExcerpt: a.responseExcerpt ?? "",
    startedAt: timestampFromMs(a.startedAt),
    durationMs: a.durationMs,
  });
}
