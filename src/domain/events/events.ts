import { requireUuid } from "../certificates/lookup-errors.ts";
import { defaultPageSize, maxPageSize } from "../certificates/status-checks.ts";
import type { Clock } from "../clock.ts";
import { DomainError, invalidField } from "../errors.ts";
import { canonicalUuid } from "../ids.ts";
import { isEventType, type AccountEvent, type EventFilter, type EventStore } from "./model.ts";
import { decodeEventPageToken, encodeEventPageToken } from "./page-token.ts";

/** Events read per statement while a watch catches up. */
const watchBatch = 100;

export interface EventPage {
  events: AccountEvent[];
  nextPageToken: string;
}

/** What a watch yields: an event, or a heartbeat when none came for a while. */
export type WatchItem = { event: AccountEvent } | { heartbeat: number };

export interface WatchSettings {
  /** How often a watch looks for new events. */
  pollMs: number;
  /** A heartbeat after this long without an event. */
  heartbeatMs: number;
}

function eventNotFound(): DomainError {
  return new DomainError("event_not_found", "no event with this id");
}

/**
 * An account's certificate events: recorded by storage with the status
 * record that taught them (see migration 0025), read here, listed and
 * watched. Every read is filtered by account; another account's event
 * answers like an unknown one.
 */
export class CertificateEvents {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly watch: WatchSettings,
  ) {}

  async list(accountId: string, filter: { certificateId: string; type: string }, pageSize: number, pageToken: string): Promise<EventPage> {
    if (!Number.isInteger(pageSize) || pageSize < 0 || pageSize > maxPageSize) throw invalidField("page_size", `page_size must be between 0 and ${maxPageSize}`);
    const chosen: EventFilter = {};
    if (filter.certificateId) {
      requireUuid(filter.certificateId, "certificate_id");
      chosen.certificateId = canonicalUuid(filter.certificateId);
    }
    if (filter.type) {
      if (!isEventType(filter.type)) {
        throw invalidField("type", "type must be certificate.revoked, certificate.reinstated, certificate.status_changed, webhook.attempt_exhausted or webhook.endpoint_disabled");
      }
      chosen.type = filter.type;
    }
    const size = pageSize || defaultPageSize;
    const before = pageToken ? decodeEventPageToken(chosen, pageToken) : undefined;
    const rows = await this.store.listEvents(accountId, chosen, size + 1, before);
    const events = rows.slice(0, size);
    return { events, nextPageToken: rows.length > size ? encodeEventPageToken(chosen, events.at(-1)!.seq) : "" };
  }

  async get(accountId: string, eventId: string): Promise<AccountEvent> {
    requireUuid(eventId, "event_id");
    const event = await this.store.findEvent(accountId, canonicalUuid(eventId));
    if (!event) throw eventNotFound();
    return event;
  }

  /**
   * The account's events after `afterEventId` (every one when empty), oldest
   * first, then each new one as storage records it, looked for every
   * `pollMs` (events recorded by any instance on the database), with a
   * heartbeat after `heartbeatMs` without one; until `signal` aborts.
   * Resuming with the last id received misses nothing: events are numbered
   * in commit order.
   */
  async *watchEvents(accountId: string, afterEventId: string, signal: AbortSignal): AsyncGenerator<WatchItem> {
    let after = 0;
    if (afterEventId) {
      requireUuid(afterEventId, "after_event_id");
      const start = await this.store.findEvent(accountId, canonicalUuid(afterEventId));
      if (!start) throw eventNotFound();
      after = start.seq;
    }
    let quietSince = this.clock();
    while (!signal.aborted) {
      const events = await this.store.eventsAfter(accountId, after, watchBatch);
      for (const event of events) {
        after = event.seq;
        quietSince = this.clock();
        yield { event };
      }
      if (events.length === watchBatch) continue;
      if (this.clock() - quietSince >= this.watch.heartbeatMs) {
        quietSince = this.clock();
        yield { heartbeat: quietSince };
      }
      await pause(this.watch.pollMs, signal);
    }
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
