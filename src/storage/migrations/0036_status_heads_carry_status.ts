import { PostgresAdapter, sql, type Kysely } from "kysely";
import { createEventsTrigger, eventsLockKey } from "./0025_certificate_events.ts";

/**
 * The head of a certificate's status chain (0024) carries the newest
 * record's status and revocation reason, and the previous record's, so the
 * trigger that records events (0025) compares the two without reading the
 * previous record back from the history: one lookup of the history's
 * primary key less in every insert of a status record, which was most of
 * what recording events added to a check that changes nothing (about 7 of
 * 44 µs an insert, measured on SQLite; the target is 5 % of a check).
 *
 * The statuses are copies of what the records say, written by the trigger
 * in the statement that inserts a record, as the chain's links are; heads
 * written before are filled in from their records here. A previous record
 * deleted since (none is today) still gives its status through its copy.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // One column a statement: SQLite adds no more.
  for (const [name, type] of headColumns) await db.schema.alterTable("certificate_status_heads").addColumn(name, type).execute();
  await sql`
    update certificate_status_heads set
      status = (select s.status from certificate_statuses s where s.id = certificate_status_heads.status_id),
      revoked_reason = (select s.revoked_reason from certificate_statuses s where s.id = certificate_status_heads.status_id),
      previous_status = (select s.status from certificate_statuses s where s.id = certificate_status_heads.previous_id),
      previous_revoked_reason = (select s.revoked_reason from certificate_statuses s where s.id = certificate_status_heads.previous_id)`.execute(db);

  // As in 0025: revoked now; good again after a hold (RFC 5280 certificateHold, reason 6); anything else.
  const type = (previous: string) => `case
      when new.status = 'revoked' then 'certificate.revoked'
      when new.status = 'good' and ${previous}.previous_status = 'revoked' and ${previous}.previous_revoked_reason = 6 then 'certificate.reinstated'
      else 'certificate.status_changed' end`;
  const columns = "id, account_id, certificate_id, type, status, previous_status, check_method, source_updated_at, revoked_at, revoked_reason, created_at";
  const values = (previous: string) =>
    `new.id, new.account_id, new.certificate_id, ${type(previous)}, new.status, ${previous}.previous_status, new.check_method, new.source_updated_at, new.revoked_at, new.revoked_reason, new.created_at`;
  // The previous values are the row's before the update (SET reads the old row); SQLite takes no alias in a trigger.
  const upsertHead = (alias: string) => `insert into certificate_status_heads${alias ? ` as ${alias}` : ""} (certificate_id, status_id, status, revoked_reason)
        values (new.certificate_id, new.id, new.status, new.revoked_reason)
        on conflict (certificate_id) do update set
          previous_id = ${alias && `${alias}.`}status_id, previous_status = ${alias && `${alias}.`}status, previous_revoked_reason = ${alias && `${alias}.`}revoked_reason,
          status_id = excluded.status_id, status = excluded.status, revoked_reason = excluded.revoked_reason`;

  if (isPostgres(db)) {
    await sql.raw(`
      create or replace function certificate_status_link() returns trigger language plpgsql set search_path from current as $$
      declare
        linked record;
      begin
        ${upsertHead("head")}
        returning head.previous_id, head.previous_status, head.previous_revoked_reason into linked;
        new.previous_id := linked.previous_id;
        if linked.previous_status is not null and linked.previous_status <> new.status then
          -- One transaction at a time numbers and commits events, so seq follows commit order.
          perform pg_advisory_xact_lock(${String(eventsLockKey)});
          insert into certificate_events (${columns}) values (${values("linked")});
        end if;
        return new;
      end $$`).execute(db);
  } else {
    await sql.raw("drop trigger certificate_statuses_link").execute(db);
    await sql.raw(`
      create trigger certificate_statuses_link after insert on certificate_statuses for each row begin
        ${upsertHead("")};
        update certificate_statuses set previous_id = (select previous_id from certificate_status_heads where certificate_id = new.certificate_id)
        where rowid = new.rowid;
        insert into certificate_events (${columns})
        select ${values("head")} from certificate_status_heads as head
        where head.certificate_id = new.certificate_id and head.previous_status <> new.status;
      end`).execute(db);
  }
}

const headColumns = [
  ["status", "varchar(16)"],
  ["revoked_reason", "integer"],
  ["previous_status", "varchar(16)"],
  ["previous_revoked_reason", "integer"],
] as const;

export async function down(db: Kysely<unknown>): Promise<void> {
  await createEventsTrigger(db);
  for (const [name] of headColumns) await db.schema.alterTable("certificate_status_heads").dropColumn(name).execute();
}

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
