import type { AccountEvent, CertificateEvent } from "../events/model.ts";

/**
 * The body of a webhook: a CloudEvents 1.0 event in the JSON structured
 * mode. A certificate event's data is the same as EventService's (times in
 * RFC 3339, the revocation reason as its RFC 5280 code); never certificate
 * content.
 */
export function eventBody(event: AccountEvent, source: string): string {
  if (event.kind === "webhook") return cloudEvent(event.id, event.type, source, event.data.webhookEndpointId, event.createdAt, { ...event.data });
  return certificateEventBody(event, source);
}

function certificateEventBody(event: CertificateEvent, source: string): string {
  return cloudEvent(event.id, event.type, source, event.certificateId, event.createdAt, {
    certificateId: event.certificateId,
    ...(event.userId ? { userId: event.userId } : {}),
    ...(event.certificateType ? { certificateType: event.certificateType } : {}),
    status: event.status,
    previousStatus: event.previousStatus,
    ...(event.revokedAt !== null ? { revokedAt: new Date(event.revokedAt).toISOString() } : {}),
    ...(event.revokedReason !== null ? { revokedReason: event.revokedReason } : {}),
    checkMethod: event.checkMethod,
    sourceUpdatedAt: new Date(event.sourceUpdatedAt).toISOString(),
  });
}

export function cloudEvent(id: string, type: string, source: string, subject: string, time: number, data: Record<string, unknown>): string {
  return JSON.stringify({
    specversion: "1.0",
    id,
    source,
    type,
    subject,
    time: new Date(time).toISOString(),
    datacontenttype: "application/json",
    data,
  });
}

/** An event's source: the server's issuer and the account. */
export function eventSource(issuer: string, accountId: string): string {
  return `${issuer}/accounts/${accountId}`;
}
