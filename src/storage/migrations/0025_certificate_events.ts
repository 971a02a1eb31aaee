import { PostgresAdapter, sql, type Kysely } from "kysely";

/**
 * Certificate events: one row per change of a registered certificate's
 * status, recorded by the trigger that links the status history (0024), in
 * the statement that inserts the status record: a check, a batch, a
 * verification or anything else that writes a record differing from the
 * certificate's previous one records the change in the same transaction,
 * whoever wrote it (docs/events.md).
 *
 * The event's id is the status record's; `seq` orders an account's events
 * in the order they were committed, so a watcher resuming after an event
 * misses none: on SQLite every write holds the one write lock; on
 * PostgreSQL a transaction that records an event first takes a
 * transaction-level advisory lock, so events (rare beside checks) are
 * numbered and committed one transaction after another.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = isPostgres(db);
  await db.schema
    .createTable("certificate_events")
    .addColumn("seq", postgres ? "bigint" : "integer", (c) => (postgres ? c.primaryKey().generatedAlwaysAsIdentity() : c.primaryKey().autoIncrement()))
    .addColumn("id", "varchar(36)", (c) => c.notNull().unique())
    .addColumn("account_id", "varchar(36)", (c) => c.notNull())
    .addColumn("certificate_id", "varchar(36)", (c) => c.notNull())
    .addColumn("type", "varchar(40)", (c) => c.notNull())
    .addColumn("status", "varchar(16)", (c) => c.notNull())
    .addColumn("previous_status", "varchar(16)", (c) => c.notNull())
    .addColumn("check_method", "varchar(8)", (c) => c.notNull())
    .addColumn("source_updated_at", "bigint", (c) => c.notNull())
    .addColumn("revoked_at", "bigint")
    .addColumn("revoked_reason", "integer")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("certificate_events_account").on("certificate_events").columns(["account_id", "seq"]).execute();
  await db.schema.createIndex("certificate_events_certificate").on("certificate_events").columns(["certificate_id", "seq"]).execute();
  await createEventsTrigger(db);
}

/** The status history's trigger as this migration makes it (also 0036's down). */
export async function createEventsTrigger(db: Kysely<unknown>): Promise<void> {
  const postgres = isPostgres(db);
  // The type of a change: revoked now; good again after a hold (RFC 5280 certificateHold, reason 6); anything else.
  const type = (previous: string) => `case
      when new.status = 'revoked' then 'certificate.revoked'
      when new.status = 'good' and ${previous}.status = 'revoked' and ${previous}.revoked_reason = 6 then 'certificate.reinstated'
      else 'certificate.status_changed' end`;
  const columns = "id, account_id, certificate_id, type, status, previous_status, check_method, source_updated_at, revoked_at, revoked_reason, created_at";
  const values = (previous: string) =>
    `new.id, new.account_id, new.certificate_id, ${type(previous)}, new.status, ${previous}.status, new.check_method, new.source_updated_at, new.revoked_at, new.revoked_reason, new.created_at`;

  if (postgres) {
    await sql.raw("drop trigger certificate_statuses_link on certificate_statuses").execute(db);
    await sql.raw(`
      create or replace function certificate_status_link() returns trigger language plpgsql set search_path from current as $$
      declare
        previous record;
      begin
        insert into certificate_status_heads as head (certificate_id, status_id) values (new.certificate_id, new.id)
        on conflict (certificate_id) do update set previous_id = head.status_id, status_id = excluded.status_id
        returning head.previous_id into new.previous_id;
        if new.previous_id is not null then
          select status, revoked_reason into previous from certificate_statuses where id = new.previous_id;
          if found and previous.status <> new.status then
            -- One transaction at a time numbers and commits events, so seq follows commit order.
            perform pg_advisory_xact_lock(${String(eventsLockKey)});
            insert into certificate_events (${columns}) values (${values("previous")});
          end if;
        end if;
        return new;
      end $$`).execute(db);
    await sql.raw(`create trigger certificate_statuses_link before insert on certificate_statuses for each row execute function certificate_status_link()`).execute(db);
  } else {
    await sql.raw("drop trigger certificate_statuses_link").execute(db);
    await sql.raw(`
      create trigger certificate_statuses_link after insert on certificate_statuses for each row begin
        insert into certificate_status_heads (certificate_id, status_id) values (new.certificate_id, new.id)
        on conflict (certificate_id) do update set previous_id = status_id, status_id = excluded.status_id;
        update certificate_statuses set previous_id = (select previous_id from certificate_status_heads where certificate_id = new.certificate_id)
        where rowid = new.rowid;
        insert into certificate_events (${columns})
        select ${values("previous")} from certificate_statuses as previous
        where previous.id = (select previous_id from certificate_status_heads where certificate_id = new.certificate_id)
          and previous.status <> new.status;
      end`).execute(db);
  }
}

/** The advisory lock that orders event inserts on PostgreSQL (an arbitrary constant of this schema's own). */
export const eventsLockKey = 7_364_829_001;

export async function down(db: Kysely<unknown>): Promise<void> {
  // The trigger of 0024 again, without the events.
  if (isPostgres(db)) {
    await sql.raw(`
      create or replace function certificate_status_link() returns trigger language plpgsql set search_path from current as $$
      begin
        insert into certificate_status_heads as head (certificate_id, status_id) values (new.certificate_id, new.id)
        on conflict (certificate_id) do update set previous_id = head.status_id, status_id = excluded.status_id
        returning head.previous_id into new.previous_id;
        return new;
      end $$`).execute(db);
  } else {
    await sql.raw("drop trigger certificate_statuses_link").execute(db);
    await sql.raw(`
      create trigger certificate_statuses_link after insert on certificate_statuses for each row begin
        insert into certificate_status_heads (certificate_id, status_id) values (new.certificate_id, new.id)
        on conflict (certificate_id) do update set previous_id = status_id, status_id = excluded.status_id;
        update certificate_statuses set previous_id = (select previous_id from certificate_status_heads where certificate_id = new.certificate_id)
        where rowid = new.rowid;
      end`).execute(db);
  }
  await db.schema.dropTable("certificate_events").execute();
}

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
