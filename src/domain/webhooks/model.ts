import type { AccountEvent, WebhookNoticeData, WebhookNoticeType } from "../events/model.ts";

/** The types of the events shomei sends about its webhooks themselves (docs/events.md); only the notices are listed with the events. */
export const webhookEventTypes = ["webhook.attempt_exhausted", "webhook.endpoint_disabled", "webhook.test"] as const;

/** Why an endpoint is disabled: by its account, by a 410 Gone, or after days in which every attempt failed. */
export type DisabledReason = "account" | "gone" | "failing";

export interface WebhookEndpoint {
  id: string;
  accountId: string;
  url: string;
  description: string;
  /** The event types sent to it; empty: every type. */
  eventTypes: string[];
  /** The signing secret, sealed with the server key (associated data: the endpoint id). */
  secretSealed: string;
  /** After a rotation: the previous secret, which signs beside the new one until previousSecretUntil. */
  previousSecretSealed: string | null;
  previousSecretUntil: number | null;
  disabledAt: number | null;
  disabledReason: DisabledReason | null;
  /** When the current run of failed attempts began; null after a success. */
  failingSince: number | null;
  createdAt: number;
  updatedAt: number;
}

export type DeliveryState = "pending" | "delivered" | "exhausted";

/** One (event, endpoint) pair of the outbox, as an instance claimed it. */
export interface ClaimedDelivery {
  eventId: string;
  endpointId: string;
  accountId: string;
  eventType: string;
  /** The body of an event that is not a certificate event; null: built from the certificate event. */
  payload: string | null;
  /** Attempts finished before this one. */
  attempts: number;
  createdAt: number;
  /** Proves the claim: an outcome is recorded only while the lease is still this one's. */
  leaseToken: string;
}

/** How an attempt ended. */
export type AttemptOutcome = "delivered" | "failed" | "gone";

export interface WebhookAttempt {
  id: string;
  eventId: string;
  endpointId: string;
  attempt: number;
  outcome: AttemptOutcome;
  /** The HTTP status answered, when one was. */
  statusCode: number | null;
  /** Why no 2xx came (timeout, refused address, connection error), bounded. */
  error: string | null;
  /** The start of the response body, bounded. */
  responseExcerpt: string | null;
  startedAt: number;
  durationMs: number;
}

/** What happens to the outbox row after an attempt. */
export type AfterAttempt =
  | { state: "delivered" }
  | { state: "pending"; nextAttemptAt: number }
  | { state: "exhausted" };

/** What happens to the endpoint after an attempt. */
export type EndpointAfterAttempt =
  | { kind: "healthy" }
  | { kind: "failing"; since: number }
  | { kind: "disabled"; reason: DisabledReason };

export interface EndpointChanges {
  url?: string;
  description?: string;
  eventTypes?: string[];
  /** true disables (reason "account"), false enables again and forgets past failures. */
  disabled?: boolean;
}

/** Counts for metrics. */
export interface OutboxStats {
  pending: number;
  /** created_at of the oldest pending delivery, when there is one. */
  oldestPendingAt: number | undefined;
  /** The number of the newest certificate event recorded (events are numbered from 1, never reused). */
  eventsRecorded: number;
}

/** A notice or test event to queue: its id, type, body and the endpoints that get it. */
export interface QueuedEvent {
  eventId: string;
  accountId: string;
  eventType: string;
  payload: string;
  endpointIds: string[];
}

/** How many attempts each endpoint may be given now. */
export interface EndpointRoom {
  perEndpoint: number;
  /** Attempts in flight now, by endpoint id (absent: none). */
  inFlight: ReadonlyMap<string, number>;
}

/** What webhooks need from storage. */
export interface WebhookStore {
  insertEndpoint(endpoint: WebhookEndpoint): Promise<void>;
  findEndpoint(accountId: string, id: string): Promise<WebhookEndpoint | undefined>;
  listEndpoints(accountId: string): Promise<WebhookEndpoint[]>;
  /** The endpoints of claimed deliveries, in one read (any account's: the deliveries name them). */
  endpointsById(ids: readonly string[]): Promise<Map<string, WebhookEndpoint>>;
  updateEndpoint(accountId: string, id: string, changes: EndpointChanges, now: number): Promise<WebhookEndpoint | undefined>;
  deleteEndpoint(accountId: string, id: string): Promise<boolean>;
  rotateSecret(accountId: string, id: string, secretSealed: string, previousUntil: number, now: number): Promise<WebhookEndpoint | undefined>;
  /** Every account's endpoints whose URL ends with `ending` (the mock environment's demo receiver). */
  endpointsWithUrlEnding(ending: string): Promise<WebhookEndpoint[]>;
  queueEvent(event: QueuedEvent, now: number): Promise<void>;
  /** Puts the (event, endpoint) delivery back in the queue, due now; false when the account has no such event. */
  requeue(accountId: string, eventId: string, endpointId: string, now: number): Promise<boolean>;

  /**
   * Claims up to `limit` due deliveries of enabled endpoints for `leaseMs`,
   * at most `room.perEndpoint` less those `room.inFlight` counts for each
   * endpoint (so no claim has to be given back), oldest due first; a
   * delivery claimed by another instance whose lease has not lapsed is never
   * returned (FOR UPDATE SKIP LOCKED on PostgreSQL, the one write lock on
   * SQLite).
   */
  claimDue(now: number, leaseMs: number, limit: number, room: EndpointRoom): Promise<ClaimedDelivery[]>;
  /** Gives claims back without an attempt (the endpoint was disabled or deleted since). */
  release(deliveries: readonly ClaimedDelivery[]): Promise<void>;
  /**
   * Records a finished attempt, the outbox row's next state and the
   * endpoint's, in one transaction. recorded: false (and nothing written)
   * when the lease was lost to another instance meanwhile; disabled: true
   * when this attempt disabled the endpoint (it was enabled before).
   */
  finishAttempt(
    delivery: ClaimedDelivery,
    attempt: WebhookAttempt,
    after: AfterAttempt,
    endpoint: EndpointAfterAttempt,
    now: number,
  ): Promise<{ recorded: boolean; disabled: boolean }>;

  /** Newest first; with `before`, only the attempts listed after it (older, or as old with a smaller id). */
  listAttempts(
    accountId: string,
    filter: { eventId?: string; endpointId?: string },
    limit: number,
    before?: { startedAt: number; id: string },
  ): Promise<WebhookAttempt[]>;
  /** The recorded events of claimed deliveries (certificate events and notices), by event id, in one read; each of its delivery's account. */
  recordedEvents(deliveries: readonly Pick<ClaimedDelivery, "accountId" | "eventId">[]): Promise<Map<string, AccountEvent>>;
  /**
   * Records a webhook notice with the account's events (numbered in commit
   * order with them); the outbox trigger queues it for the account's
   * endpoints that take its type, except the one it is about.
   */
  recordNotice(notice: { id: string; accountId: string; type: WebhookNoticeType; data: WebhookNoticeData; createdAt: number }): Promise<void>;
  stats(): Promise<OutboxStats>;
  /** Deletes events, finished deliveries and attempts older than the cutoffs; pending deliveries stay. */
  prune(cutoffs: { eventsBefore: number; attemptsBefore: number }): Promise<{ events: number; attempts: number }>;
}

/** A request to an endpoint, signed. */
export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** What came back: a status (and the start of the body), or why none did. */
export type WebhookResponse =
  | { statusCode: number; excerpt: string; durationMs: number }
  | { error: string; durationMs: number };

/** Sends one request: no redirects followed, within the timeout, to addresses the policy allows only. */
export interface WebhookSender {
  send(request: WebhookRequest): Promise<WebhookResponse>;
}
