import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { CrlReason } from "../../../gen/service/verify/v2/certificate_pb.ts";
import {
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
import type { CertificateEvent } from "../../domain/events/model.ts";
import { callerAccountId } from "../auth.ts";
import { certificateTypeMessage, checkMethodMessage, statusMessageOf } from "../convert.ts";

/** EventService: the account's certificate events, read, listed and watched. */
export class EventHandler implements ServiceImpl<typeof EventService> {
  constructor(
    private readonly events: CertificateEvents,
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

  private message(e: CertificateEvent): Event {
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
