import { sql, type Selectable, type Transaction } from "kysely";
import { sqliteTurnTransactions, type StatementCalls } from "./coalesced-calls.ts";
import type { AccountEvent, WebhookNoticeData, WebhookNoticeType } from "../domain/events/model.ts";
import { eventsLockKey } from "./migrations/0025_certificate_events.ts";
import { newId } from "../domain/ids.ts";
import type {
  AfterAttempt,
  ClaimedDelivery,
  DisabledReason,
  EndpointAfterAttempt,
  EndpointChanges,
  EndpointRoom,
  OutboxStats,
  QueuedEvent,
  WebhookAttempt,
  WebhookEndpoint,
  WebhookStore,
  AttemptOutcome,
} from "../domain/webhooks/model.ts";
import type { Database } from "./database.ts";
import { EventsRepository } from "./events-repository.ts";
import type { Tables, WebhookAttemptTable, WebhookEndpointTable } from "./schema.ts";

/** Kept per attempt: the start of the answer's body and the error text, no more. */
export const maxExcerptChars = 1024;

/**
 * Webhook endpoints, the outbox of deliveries (migration 0028) and the
 * attempts made. Every read and change of an endpoint takes the account id.
 */
export class WebhooksRepository implements WebhookStore {
  private readonly events: EventsRepository;

  constructor(private readonly database: Database) {
    this.events = new EventsRepository(database);
    this.db = database.db;
    this.sqliteFinishes = sqliteTurnTransactions(this.db, finishOne, 64);
  }

  /**
   * Taken once: the delivery loop's statements run in the background, and a
   * test that swaps database.db to count a request's statements must not
   * count them.
   */
  private readonly db: Database["db"];

  async insertEndpoint(e: WebhookEndpoint): Promise<void> {
    await this.db
      .insertInto("webhook_endpoints")
      .values({
        id: e.id,
        account_id: e.accountId,
        url: e.url,
        description: e.description,
        event_types: typesColumn(e.eventTypes),
        secret_sealed: e.secretSealed,
        previous_secret_sealed: e.previousSecretSealed,
        previous_secret_until: e.previousSecretUntil,
        disabled_at: e.disabledAt,
        disabled_reason: e.disabledReason,
        failing_since: e.failingSince,
        created_at: e.createdAt,
        updated_at: e.updatedAt,
      })
      .execute();
  }

  async findEndpoint(accountId: string, id: string): Promise<WebhookEndpoint | undefined> {
    const row = await this.db.selectFrom("webhook_endpoints").selectAll().where("account_id", "=", accountId).where("id", "=", id).executeTakeFirst();
    return row && toEndpoint(row);
  }

  async endpointsById(ids: readonly string[]): Promise<Map<string, WebhookEndpoint>> {
    if (!ids.length) return new Map();
    const rows = await this.db.selectFrom("webhook_endpoints").selectAll().where("id", "in", [...new Set(ids)]).execute();
    return new Map(rows.map((row) => [row.id, toEndpoint(row)]));
  }

  async listEndpoints(accountId: string): Promise<WebhookEndpoint[]> {
    const rows = await this.db.selectFrom("webhook_endpoints").selectAll().where("account_id", "=", accountId).orderBy("created_at").orderBy("id").execute();
    return rows.map(toEndpoint);
  }

  async updateEndpoint(accountId: string, id: string, changes: EndpointChanges, now: number): Promise<WebhookEndpoint | undefined> {
    const values: Partial<WebhookEndpointTable> = { updated_at: now };
    if (changes.url !== undefined) values.url = changes.url;
    if (changes.description !== undefined) values.description = changes.description;
    if (changes.eventTypes !== undefined) values.event_types = typesColumn(changes.eventTypes);
    if (changes.disabled === true) Object.assign(values, { disabled_at: now, disabled_reason: "account" });
    if (changes.disabled === false) Object.assign(values, { disabled_at: null, disabled_reason: null, failing_since: null });
    let query = this.db.updateTable("webhook_endpoints").set(values).where("account_id", "=", accountId).where("id", "=", id);
    // Disabling an endpoint that is disabled already keeps its reason and time.
    if (changes.disabled === true) query = query.where("disabled_at", "is", null);
    await query.execute();
    return this.findEndpoint(accountId, id);
  }

  async deleteEndpoint(accountId: string, id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const found = await trx.selectFrom("webhook_endpoints").select("id").where("account_id", "=", accountId).where("id", "=", id).executeTakeFirst();
      if (!found) return false;
      await trx.deleteFrom("webhook_attempts").where("endpoint_id", "=", id).execute();
      await trx.deleteFrom("webhook_deliveries").where("endpoint_id", "=", id).execute();
      await trx.deleteFrom("webhook_endpoints").where("id", "=", id).execute();
      return true;
    });
  }

  async rotateSecret(accountId: string, id: string, secretSealed: string, previousUntil: number, now: number): Promise<WebhookEndpoint | undefined> {
    await this.db
      .updateTable("webhook_endpoints")
      .set((eb) => ({
        previous_secret_sealed: eb.ref("secret_sealed"),
        previous_secret_until: previousUntil,
        secret_sealed: secretSealed,
        updated_at: now,
      }))
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .execute();
    return this.findEndpoint(accountId, id);
  }

  async endpointsWithUrlEnding(ending: string): Promise<WebhookEndpoint[]> {
    const rows = await this.db.selectFrom("webhook_endpoints").selectAll().where("url", "like", `%${ending.replace(/[%_\\]/g, "")}`).limit(100).execute();
    return rows.map(toEndpoint).filter((e) => e.url.endsWith(ending));
  }

  async queueEvent(event: QueuedEvent, now: number): Promise<void> {
    if (!event.endpointIds.length) return;
    await this.db
      .insertInto("webhook_deliveries")
      .values(
        event.endpointIds.map((endpointId) => ({
          event_id: event.eventId,
          endpoint_id: endpointId,
          account_id: event.accountId,
          event_type: event.eventType,
          payload: event.payload,
          state: "pending",
          attempts: 0,
          next_attempt_at: now,
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
  }

  async requeue(accountId: string, eventId: string, endpointId: string, now: number): Promise<boolean> {
    const again = { state: "pending", attempts: 0, next_attempt_at: now, lease_token: null, lease_until: null, updated_at: now };
    const event = await this.db.selectFrom("certificate_events").select("type").where("account_id", "=", accountId).where("id", "=", eventId).executeTakeFirst();
    const queued = event
      ? { event_type: event.type, payload: null }
      : await this.db.selectFrom("webhook_deliveries").select(["event_type", "payload"]).where("account_id", "=", accountId).where("event_id", "=", eventId).executeTakeFirst();
    if (!queued) return false;
    await this.db
      .insertInto("webhook_deliveries")
      .values({ event_id: eventId, endpoint_id: endpointId, account_id: accountId, ...queued, ...again, created_at: now })
      .onConflict((oc) => oc.columns(["event_id", "endpoint_id"]).doUpdateSet(again))
      .execute();
    return true;
  }

  async claimDue(now: number, leaseMs: number, limit: number, room: EndpointRoom): Promise<ClaimedDelivery[]> {
    const token = newId();
    const postgres = this.database.dialect === "postgres";
    const busy = [...room.inFlight].filter(([, n]) => n >= room.perEndpoint).map(([id]) => id);
    const notBusy = busy.length ? sql`and d.endpoint_id not in (${sql.join(busy)})` : sql``;
    const partly = [...room.inFlight].filter(([, n]) => n > 0 && n < room.perEndpoint);
    const roomOf = partly.length
      ? sql`case endpoint_id ${sql.join(partly.map(([id, n]) => sql`when ${id} then cast(${room.perEndpoint - n} as integer)`), sql` `)} else cast(${room.perEndpoint} as integer) end`
      : sql`${room.perEndpoint}`;
    // One statement: the oldest due rows (on PostgreSQL, those another instance is claiming are skipped, not waited
    // for; on SQLite the statement holds the one write lock), of which each endpoint gets what it has room for. A row
    // whose lease lapsed (its instance died) is due again. The endpoints filled by this claim are left out of the next,
    // which finds the others' rows: a backlog of one endpoint does not hold up the rest for more than a claim.
    const result = await sql<DeliveryRow>`
      with due as (
        select d.event_id, d.endpoint_id, d.next_attempt_at from webhook_deliveries d
        join webhook_endpoints e on e.id = d.endpoint_id and e.disabled_at is null
        where d.state = 'pending' and d.next_attempt_at <= ${now} and (d.lease_until is null or d.lease_until <= ${now}) ${notBusy}
        order by d.next_attempt_at
        limit ${limit * room.perEndpoint}
        ${postgres ? sql`for update of d skip locked` : sql``}),
      ranked as (
        select event_id, endpoint_id, next_attempt_at, row_number() over (partition by endpoint_id order by next_attempt_at, event_id) as nth from due)
      update webhook_deliveries set lease_token = ${token}, lease_until = ${now + leaseMs}, updated_at = ${now}
      where (event_id, endpoint_id) in (select event_id, endpoint_id from ranked where nth <= ${roomOf} order by next_attempt_at limit ${limit})
      returning event_id, endpoint_id, account_id, event_type, payload, attempts, created_at, lease_token`.execute(this.db);
    return result.rows.map((r) => ({
      eventId: r.event_id,
      endpointId: r.endpoint_id,
      accountId: r.account_id,
      eventType: r.event_type,
      payload: r.payload,
      attempts: Number(r.attempts),
      createdAt: Number(r.created_at),
      leaseToken: r.lease_token,
    }));
  }

  async release(deliveries: readonly ClaimedDelivery[]): Promise<void> {
    if (!deliveries.length) return;
    const keys = deliveries.map((d) => sql`(${d.eventId}, ${d.endpointId})`);
    await sql`update webhook_deliveries set lease_token = null, lease_until = null
      where (event_id, endpoint_id) in (values ${sql.join(keys)}) and lease_token in (${sql.join([...new Set(deliveries.map((d) => d.leaseToken))])})`.execute(this.db);
  }

  async finishAttempt(
    d: ClaimedDelivery,
    attempt: WebhookAttempt,
    after: AfterAttempt,
    endpoint: EndpointAfterAttempt,
    now: number,
  ): Promise<{ recorded: boolean; disabled: boolean }> {
    const row = attemptRow(attempt, d.accountId);
    const next = after.state === "pending" ? after.nextAttemptAt : now;
    if (this.database.dialect === "postgres") return this.finishInOneStatement(d, row, after.state, next, endpoint, now);
    return this.sqliteFinishes.call({ d, row, state: after.state, next, endpoint, now });
  }

  /** On SQLite the attempts finished in one turn of the event loop are recorded in one transaction. */
  private readonly sqliteFinishes: StatementCalls<Finish, { recorded: boolean; disabled: boolean }>;

  /**
   * The same three changes in one PostgreSQL statement (data-modifying CTEs),
   * each conditional on the lease still being this claim's: one round trip
   * instead of five, which is what bounds deliveries per second.
   */
  private async finishInOneStatement(
    d: ClaimedDelivery,
    a: WebhookAttemptTable,
    state: string,
    next: number,
    endpoint: EndpointAfterAttempt,
    now: number,
  ): Promise<{ recorded: boolean; disabled: boolean }> {
    const endpointChange =
      endpoint.kind === "healthy"
        ? sql`set failing_since = null where failing_since is not null`
        : endpoint.kind === "failing"
          ? sql`set failing_since = ${endpoint.since}::bigint where failing_since is null`
          : sql`set disabled_at = ${now}::bigint, disabled_reason = ${endpoint.reason}::text, updated_at = ${now}::bigint where disabled_at is null`;
    const result = await sql<{ recorded: number; changed: number }>`
      with d as (
        update webhook_deliveries
        set state = ${state}, attempts = ${d.attempts + 1}, next_attempt_at = ${next}, lease_token = null, lease_until = null, updated_at = ${now}
        where event_id = ${d.eventId} and endpoint_id = ${d.endpointId} and lease_token = ${d.leaseToken}
        returning 1),
      a as (
        insert into webhook_attempts (id, event_id, endpoint_id, account_id, attempt, outcome, status_code, error, response_excerpt, started_at, duration_ms)
        select ${a.id}::text, ${a.event_id}::text, ${a.endpoint_id}::text, ${a.account_id}::text, ${a.attempt}::integer, ${a.outcome}::text,
          ${a.status_code}::integer, ${a.error}::text, ${a.response_excerpt}::text, ${a.started_at}::bigint, ${a.duration_ms}::integer
        where exists (select 1 from d)),
      e as (
        update webhook_endpoints ${endpointChange} and id = ${d.endpointId} and exists (select 1 from d)
        returning 1)
      select (select count(*) from d)::integer as recorded, (select count(*) from e)::integer as changed`.execute(this.db);
    const row = result.rows[0]!;
    return { recorded: row.recorded > 0, disabled: endpoint.kind === "disabled" && row.changed > 0 };
  }

  async listAttempts(
    accountId: string,
    filter: { eventId?: string; endpointId?: string },
    limit: number,
    before?: { startedAt: number; id: string },
  ): Promise<WebhookAttempt[]> {
    let query = this.db.selectFrom("webhook_attempts").selectAll().where("account_id", "=", accountId);
    if (filter.eventId) query = query.where("event_id", "=", filter.eventId);
    if (filter.endpointId) query = query.where("endpoint_id", "=", filter.endpointId);
    if (before) {
      query = query.where((eb) => eb.or([eb("started_at", "<", before.startedAt), eb.and([eb("started_at", "=", before.startedAt), eb("id", "<", before.id)])]));
    }
    const rows = await query.orderBy("started_at", "desc").orderBy("id", "desc").limit(limit).execute();
    return rows.map(toAttempt);
  }

  recordedEvents(deliveries: readonly Pick<ClaimedDelivery, "accountId" | "eventId">[]): Promise<Map<string, AccountEvent>> {
    return this.events.findEvents(deliveries);
  }

  async recordNotice(notice: { id: string; accountId: string; type: WebhookNoticeType; data: WebhookNoticeData; createdAt: number }): Promise<void> {
    const { webhookEndpointId, ...data } = notice.data;
    await this.db.transaction().execute(async (trx) => {
      // As the status trigger does (migration 0025): events are numbered and committed one transaction after another.
      if (this.database.dialect === "postgres") await sql`select pg_advisory_xact_lock(${eventsLockKey})`.execute(trx);
      await trx
        .insertInto("certificate_events")
        .values({
          id: notice.id,
          account_id: notice.accountId,
          certificate_id: webhookEndpointId,
          type: notice.type,
          status: "",
          previous_status: "",
          check_method: "",
          source_updated_at: notice.createdAt,
          revoked_at: null,
          revoked_reason: null,
          created_at: notice.createdAt,
          data: JSON.stringify(data),
        })
        .execute();
    });
  }

  async stats(): Promise<OutboxStats> {
    const pending = await this.db
      .selectFrom("webhook_deliveries")
      .select((eb) => [eb.fn.countAll<number | string>().as("n"), eb.fn.min("created_at").as("oldest")])
      .where("state", "=", "pending")
      .executeTakeFirstOrThrow();
    const events = await this.db.selectFrom("certificate_events").select((eb) => eb.fn.max("seq").as("seq")).executeTakeFirstOrThrow();
    return {
      pending: Number(pending.n),
      oldestPendingAt: pending.oldest === null ? undefined : Number(pending.oldest),
      eventsRecorded: events.seq === null ? 0 : Number(events.seq),
    };
  }

  async prune(cutoffs: { eventsBefore: number; attemptsBefore: number }): Promise<{ events: number; attempts: number }> {
    const attempts = await this.db.deleteFrom("webhook_attempts").where("started_at", "<", cutoffs.attemptsBefore).executeTakeFirst();
    await this.db.deleteFrom("webhook_deliveries").where("state", "<>", "pending").where("updated_at", "<", cutoffs.attemptsBefore).execute();
    // An event still waiting for a delivery is kept until it is delivered or exhausted.
    const events = await this.db
      .deleteFrom("certificate_events")
      .where("created_at", "<", cutoffs.eventsBefore)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom("webhook_deliveries as d").select("d.event_id").whereRef("d.event_id", "=", "certificate_events.id").where("d.state", "=", "pending"))),
      )
      .executeTakeFirst();
    return { events: Number(events.numDeletedRows), attempts: Number(attempts.numDeletedRows) };
  }
}

interface DeliveryRow {
  event_id: string;
  endpoint_id: string;
  account_id: string;
  event_type: string;
  payload: string | null;
  attempts: number | string;
  created_at: number | string;
  lease_token: string;
}

/** `,a,b,` so that the outbox trigger finds a type by `,type,`; empty for every type. */
function typesColumn(types: string[]): string {
  return types.length ? `,${types.join(",")},` : "";
}

function toEndpoint(row: Selectable<WebhookEndpointTable>): WebhookEndpoint {
  return {
    id: row.id,
    accountId: row.account_id,
    url: row.url,
    description: row.description,
    eventTypes: row.event_types.split(",").filter(Boolean),
    secretSealed: row.secret_sealed,
    previousSecretSealed: row.previous_secret_sealed,
    previousSecretUntil: row.previous_secret_until === null ? null : Number(row.previous_secret_until),
    disabledAt: row.disabled_at === null ? null : Number(row.disabled_at),
    disabledReason: row.disabled_reason as DisabledReason | null,
    failingSince: row.failing_since === null ? null : Number(row.failing_since),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

function attemptRow(a: WebhookAttempt, accountId: string): WebhookAttemptTable {
  return {
    id: a.id,
    event_id: a.eventId,
    endpoint_id: a.endpointId,
    account_id: accountId,
    attempt: a.attempt,
    outcome: a.outcome,
    status_code: a.statusCode,
    error: a.error === null ? null : a.error.slice(0, maxExcerptChars),
    response_excerpt: a.responseExcerpt === null ? null : a.responseExcerpt.slice(0, maxExcerptChars),
    started_at: a.startedAt,
    duration_ms: Math.round(a.durationMs),
  };
}

function toAttempt(row: Selectable<WebhookAttemptTable>): WebhookAttempt {
  return {
    id: row.id,
    eventId: row.event_id,
    endpointId: row.endpoint_id,
    attempt: Number(row.attempt),
    outcome: row.outcome as AttemptOutcome,
    statusCode: row.status_code === null ? null : Number(row.status_code),
    error: row.error,
    responseExcerpt: row.response_excerpt,
    startedAt: Number(row.started_at),
    durationMs: Number(row.duration_ms),
  };
}

/** An attempt to record: its delivery, its row, and the delivery's and the endpoint's next states. */
interface Finish {
  d: ClaimedDelivery;
  row: WebhookAttemptTable;
  state: AfterAttempt["state"];
  next: number;
  endpoint: EndpointAfterAttempt;
  now: number;
}

/** An attempt's three changes, each only while the delivery's lease is still this claim's. */
async function finishOne(trx: Transaction<Tables>, { d, row, state, next, endpoint, now }: Finish): Promise<{ recorded: boolean; disabled: boolean }> {
  const updated = await trx
    .updateTable("webhook_deliveries")
    .set({ state, attempts: d.attempts + 1, next_attempt_at: next, lease_token: null, lease_until: null, updated_at: now })
    .where("event_id", "=", d.eventId)
    .where("endpoint_id", "=", d.endpointId)
    .where("lease_token", "=", d.leaseToken)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) return { recorded: false, disabled: false };
  await trx.insertInto("webhook_attempts").values(row).execute();
  const endpoints = trx.updateTable("webhook_endpoints").where("id", "=", d.endpointId);
  if (endpoint.kind === "healthy") {
    await endpoints.set({ failing_since: null }).where("failing_since", "is not", null).execute();
    return { recorded: true, disabled: false };
  }
  if (endpoint.kind === "failing") {
    await endpoints.set({ failing_since: endpoint.since }).where("failing_since", "is", null).execute();
    return { recorded: true, disabled: false };
  }
  const result = await endpoints.set({ disabled_at: now, disabled_reason: endpoint.reason, updated_at: now }).where("disabled_at", "is", null).executeTakeFirst();
  return { recorded: true, disabled: Number(result.numUpdatedRows) > 0 };
}
