import type { CertificateType, CheckMethod, RevocationReasonCode, Status } from "../domain/certificates/model.ts";
import type { AccountEvent, CertificateEventType, EventFilter, EventStore, WebhookNoticeData, WebhookNoticeType } from "../domain/events/model.ts";
import type { Database } from "./database.ts";

/**
 * Certificate events as the trigger of migration 0025 records them, with the
 * certificate's user and type (joined: a deleted certificate leaves them
 * undefined), and the webhook notices recorded beside them (migration
 * 0028). Every read takes the account id.
 */
export class EventsRepository implements EventStore {
  constructor(private readonly database: Database) {}

  private select() {
    return selectEvents(this.database);
  }

  async listEvents(accountId: string, filter: EventFilter, limit: number, beforeSeq: number | undefined): Promise<AccountEvent[]> {
    let query = this.select().where("e.account_id", "=", accountId);
    // A webhook notice's certificate_id holds its endpoint's id: a certificate's events are certificate events.
    if (filter.certificateId) query = query.where("e.certificate_id", "=", filter.certificateId).where("e.type", "like", "certificate.%");
    if (filter.type) query = query.where("e.type", "=", filter.type);
    if (beforeSeq !== undefined) query = query.where("e.seq", "<", beforeSeq);
    return (await query.orderBy("e.seq", "desc").limit(limit).execute()).map(toEvent);
  }

  async findEvent(accountId: string, eventId: string): Promise<AccountEvent | undefined> {
    const row = await this.select().where("e.account_id", "=", accountId).where("e.id", "=", eventId).executeTakeFirst();
    return row && toEvent(row);
  }

  /** The events named, each only of its own account, by id (one statement). */
  async findEvents(keys: readonly { accountId: string; eventId: string }[]): Promise<Map<string, AccountEvent>> {
    if (!keys.length) return new Map();
    const rows = await this.select().where("e.id", "in", [...new Set(keys.map((k) => k.eventId))]).execute();
    const accountOf = new Map(keys.map((k) => [k.eventId, k.accountId]));
    return new Map(rows.filter((row) => accountOf.get(row.id) === row.account_id).map((row) => [row.id, toEvent(row)]));
  }

  async eventsAfter(accountId: string, afterSeq: number, limit: number): Promise<AccountEvent[]> {
    const rows = await this.select().where("e.account_id", "=", accountId).where("e.seq", ">", afterSeq).orderBy("e.seq", "asc").limit(limit).execute();
    return rows.map(toEvent);
  }
}

function selectEvents(database: Database) {
  return database.db
    .selectFrom("certificate_events as e")
    .leftJoin("certificates as c", (join) => join.onRef("c.id", "=", "e.certificate_id").onRef("c.account_id", "=", "e.account_id"))
    .select([
      "e.seq", "e.id", "e.account_id", "e.certificate_id", "e.type", "e.status", "e.previous_status", "e.check_method",
      "e.source_updated_at", "e.revoked_at", "e.revoked_reason", "e.created_at", "e.data", "c.user_id", "c.type as certificate_type",
    ]);
}

type Row = Awaited<ReturnType<ReturnType<typeof selectEvents>["execute"]>>[number];

function toEvent(row: Row): AccountEvent {
  if (row.type.startsWith("webhook.")) {
    return {
      kind: "webhook",
      seq: Number(row.seq),
      id: row.id,
      accountId: row.account_id,
      type: row.type as WebhookNoticeType,
      data: { ...(JSON.parse(row.data ?? "{}") as Omit<WebhookNoticeData, "webhookEndpointId">), webhookEndpointId: row.certificate_id },
      createdAt: Number(row.created_at),
    };
  }
  return {
    kind: "certificate",
    seq: Number(row.seq),
    id: row.id,
    accountId: row.account_id,
    type: row.type as CertificateEventType,
    certificateId: row.certificate_id,
    userId: row.user_id ?? undefined,
    certificateType: (row.certificate_type ?? undefined) as CertificateType | undefined,
    status: row.status as Status,
    previousStatus: row.previous_status as Status,
    checkMethod: row.check_method as CheckMethod,
    sourceUpdatedAt: Number(row.source_updated_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
    revokedReason: row.revoked_reason as RevocationReasonCode | null,
    createdAt: Number(row.created_at),
  };
}
