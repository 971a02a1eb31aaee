import type { CertificateType, CheckMethod, RevocationReasonCode, Status } from "../certificates/model.ts";

/** The types of certificate events (docs/events.md). */
export const certificateEventTypes = ["certificate.revoked", "certificate.reinstated", "certificate.status_changed"] as const;
export type CertificateEventType = (typeof certificateEventTypes)[number];

export function isCertificateEventType(value: string): value is CertificateEventType {
  return (certificateEventTypes as readonly string[]).includes(value);
}

/** The events about an account's webhooks, recorded and listed beside the certificate events (docs/events.md). */
export const webhookNoticeTypes = ["webhook.attempt_exhausted", "webhook.endpoint_disabled"] as const;
export type WebhookNoticeType = (typeof webhookNoticeTypes)[number];
export type EventType = CertificateEventType | WebhookNoticeType;

export function isEventType(value: string): value is EventType {
  return isCertificateEventType(value) || (webhookNoticeTypes as readonly string[]).includes(value);
}

/** What a webhook notice says: which endpoint, and the event exhausted or why the endpoint was disabled. */
export interface WebhookNoticeData {
  webhookEndpointId: string;
  /** webhook.attempt_exhausted: the event whose delivery was exhausted, and its type. */
  eventId?: string;
  eventType?: string;
  /** webhook.endpoint_disabled: the endpoint's URL and why (gone, failing). */
  url?: string;
  reason?: string;
}

/** An event about the account's webhooks: an exhausted delivery, a disabled endpoint. */
export interface WebhookNotice {
  kind: "webhook";
  seq: number;
  id: string;
  accountId: string;
  type: WebhookNoticeType;
  data: WebhookNoticeData;
  createdAt: number;
}

/** Whatever an account's event list holds. */
export type AccountEvent = CertificateEvent | WebhookNotice;

/**
 * A change of a registered certificate's status, as recorded: the status
 * record that taught it (whose id is the event's), and the status before it.
 * `seq` orders an account's events as they were committed.
 */
export interface CertificateEvent {
  kind: "certificate";
  seq: number;
  id: string;
  accountId: string;
  type: CertificateEventType;
  certificateId: string;
  /** Undefined when the certificate has since been deleted. */
  userId: string | undefined;
  certificateType: CertificateType | undefined;
  status: Status;
  previousStatus: Status;
  checkMethod: CheckMethod;
  sourceUpdatedAt: number;
  revokedAt: number | null;
  revokedReason: RevocationReasonCode | null;
  createdAt: number;
}

export interface EventFilter {
  certificateId?: string;
  type?: EventType;
}

/** What the events need from storage. */
export interface EventStore {
  /** The account's events, newest first, older than `beforeSeq` when given. */
  listEvents(accountId: string, filter: EventFilter, limit: number, beforeSeq: number | undefined): Promise<AccountEvent[]>;
  findEvent(accountId: string, eventId: string): Promise<AccountEvent | undefined>;
  /** The account's events after `afterSeq` (all when 0), oldest first. */
  eventsAfter(accountId: string, afterSeq: number, limit: number): Promise<AccountEvent[]>;
}
