import { PostgresAdapter, sql, type Kysely } from "kysely";

/**
 * Webhooks (docs/events.md):
 * - webhook_endpoints: an account's receivers, with the types they take
 *   (`,type,type,` or empty for every type) and the signing secret sealed
 *   with the server key; after a rotation the previous one, until it lapses.
 * - webhook_deliveries: the transactional outbox, one row per (event,
 *   endpoint). A trigger on certificate_events adds the rows of the
 *   account's enabled endpoints that take the event's type, in the statement
 *   that records the event, so a committed event is never without its
 *   deliveries. Events that are not certificate events (a test, a webhook
 *   notice) carry their body in `payload`. Each instance claims due rows
 *   with a lease (lease_token, lease_until); an instance that dies leaves
 *   its lease to lapse, and another claims the row again.
 * - webhook_attempts: one row per finished attempt, with bounded excerpts.
 * - certificate_events.data: the events about webhooks themselves
 *   (webhook.attempt_exhausted, webhook.endpoint_disabled) are recorded
 *   beside the certificate events, numbered with them, with the endpoint's
 *   id as certificate_id (their subject), empty statuses and their data as
 *   JSON here. The trigger sends them to the account's other endpoints.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.alterTable("certificate_events").addColumn("data", "text").execute();
  await db.schema
    .createTable("webhook_endpoints")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("account_id", "varchar(36)", (c) => c.notNull())
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull())
    .addColumn("event_types", "text", (c) => c.notNull())
    .addColumn("secret_sealed", "text", (c) => c.notNull())
    .addColumn("previous_secret_sealed", "text")
    .addColumn("previous_secret_until", "bigint")
    .addColumn("disabled_at", "bigint")
    .addColumn("disabled_reason", "varchar(16)")
    .addColumn("failing_since", "bigint")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("webhook_endpoints_account").on("webhook_endpoints").columns(["account_id", "created_at"]).execute();

  await db.schema
    .createTable("webhook_deliveries")
    .addColumn("event_id", "varchar(36)", (c) => c.notNull())
    .addColumn("endpoint_id", "varchar(36)", (c) => c.notNull().references("webhook_endpoints.id").onDelete("cascade"))
    .addColumn("account_id", "varchar(36)", (c) => c.notNull())
    .addColumn("event_type", "varchar(40)", (c) => c.notNull())
    .addColumn("payload", "text")
    .addColumn("state", "varchar(12)", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull())
    .addColumn("next_attempt_at", "bigint", (c) => c.notNull())
    .addColumn("lease_token", "varchar(36)")
    .addColumn("lease_until", "bigint")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("webhook_deliveries_pk", ["event_id", "endpoint_id"])
    .execute();
  // What the delivery loop asks for: pending rows by due time.
  await db.schema.createIndex("webhook_deliveries_due").on("webhook_deliveries").columns(["state", "next_attempt_at"]).execute();
  await db.schema.createIndex("webhook_deliveries_endpoint").on("webhook_deliveries").columns(["endpoint_id", "created_at"]).execute();

  await db.schema
    .createTable("webhook_attempts")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("event_id", "varchar(36)", (c) => c.notNull())
    .addColumn("endpoint_id", "varchar(36)", (c) => c.notNull().references("webhook_endpoints.id").onDelete("cascade"))
    .addColumn("account_id", "varchar(36)", (c) => c.notNull())
    .addColumn("attempt", "integer", (c) => c.notNull())
    .addColumn("outcome", "varchar(16)", (c) => c.notNull())
    .addColumn("status_code", "integer")
    .addColumn("error", "text")
    .addColumn("response_excerpt", "text")
    .addColumn("started_at", "bigint", (c) => c.notNull())
    .addColumn("duration_ms", "integer", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("webhook_attempts_event").on("webhook_attempts").columns(["event_id", "started_at"]).execute();
  await db.schema.createIndex("webhook_attempts_endpoint").on("webhook_attempts").columns(["endpoint_id", "started_at"]).execute();

  const rows = `select new.id, e.id, new.account_id, new.type, null, 'pending', 0, new.created_at, new.created_at, new.created_at
        from webhook_endpoints e
        where e.account_id = new.account_id and e.disabled_at is null
          and not (new.type like 'webhook.%' and e.id = new.certificate_id)
          and (e.event_types = '' or ${postgres ? "position(',' || new.type || ',' in e.event_types) > 0" : "instr(e.event_types, ',' || new.type || ',') > 0"})`;
  const insert = `insert into webhook_deliveries (event_id, endpoint_id, account_id, event_type, payload, state, attempts, next_attempt_at, created_at, updated_at)`;
  if (postgres) {
    await sql.raw(`
      create function certificate_event_outbox() returns trigger language plpgsql set search_path from current as $$
      begin
        ${insert} ${rows};
        return null;
      end $$`).execute(db);
    await sql.raw(`create trigger certificate_events_outbox after insert on certificate_events for each row execute function certificate_event_outbox()`).execute(db);
  } else {
    await sql.raw(`create trigger certificate_events_outbox after insert on certificate_events for each row begin ${insert} ${rows}; end`).execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await sql.raw("drop trigger certificate_events_outbox" + (postgres ? " on certificate_events" : "")).execute(db);
  if (postgres) await sql.raw("drop function certificate_event_outbox()").execute(db);
  await db.schema.dropTable("webhook_attempts").execute();
  await db.schema.dropTable("webhook_deliveries").execute();
  await db.schema.dropTable("webhook_endpoints").execute();
  await db.schema.alterTable("certificate_events").dropColumn("data").execute();
}
