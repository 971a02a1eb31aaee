import type { CertificateType, CheckMethod, RevocationReasonCode, Status } from "../certificates/model.ts";

/** The types of certificate events (docs/events.md). */
export const certificateEventTypes = ["certificate.revoked", "certificate.reinstated", "certificate.status_changed"] as const;
export type CertificateEventType = (typeof certificateEventTypes)[number];

export function isCertificateEventType(value: string): value is CertificateEventType {
  return (certificateEventTypes as readonly string[]).includes(value);
}

/**
 * A change of a registered certificate's status, as recorded: the status
 * record that taught it (whose id is the event's), and the status before it.
 * `seq` orders an account's events as they were committed.
 */
export interface CertificateEvent {
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
  type?: CertificateEventType;
}

/** What the events need from storage. */
export interface EventStore {
  /** The account's events, newest first, older than `beforeSeq` when given. */
  listEvents(accountId: string, filter: EventFilter, limit: number, beforeSeq: number | undefined): Promise<CertificateEvent[]>;
  findEvent(accountId: string, eventId: string): Promise<CertificateEvent | undefined>;
  /** The account's events after `afterSeq` (all when 0), oldest first. */
  eventsAfter(accountId: string, afterSeq: number, limit: number): Promise<CertificateEvent[]>;
}
