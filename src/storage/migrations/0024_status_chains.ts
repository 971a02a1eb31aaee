import { PostgresAdapter, sql, type Kysely } from "kysely";

/**
 * A certificate's status history as a chain instead of an index.
 *
 * The history index (certificate, time, id) took one entry per status
 * record at that certificate's place in it: a batch of 1,000 certificates
 * wrote 1,000 index pages, each copied to the write-ahead log, and the index
 * grew with every check. It cost three quarters of a batch's insert on
 * SQLite (docs/performance.md, "Status history as a chain").
 *
 * Now each record names the record before it for the same certificate
 * (`previous_id`), and `certificate_status_heads` holds one row per
 * certificate: its newest record. Records are only appended (a time-ordered
 * primary key), and a batch rewrites one small row per certificate in a
 * table the size of the registry, not of the history. A listing walks the
 * chain from the head, a page at a time.
 *
 * Triggers keep the chain, so that every writer (grouped checks, batches,
 * the bench's seeding, a statement run by hand) links its rows the same way
 * and a row is linked in the statement that inserts it. The head's upsert
 * locks the head row (PostgreSQL), so concurrent writers of one certificate,
 * in one instance or several, link one after another: no record is left
 * out of the chain, none is linked twice.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("certificate_statuses").addColumn("previous_id", "varchar(36)").execute();
  await db.schema
    .createTable("certificate_status_heads")
    .addColumn("certificate_id", "varchar(36)", (c) => c.primaryKey().references("certificates.id"))
    .addColumn("status_id", "varchar(36)", (c) => c.notNull())
    .addColumn("previous_id", "varchar(36)")
    .execute();

  // Records written before: linked in the order the history index listed them (time, then id).
  await sql`
    update certificate_statuses set previous_id = linked.previous_id
    from (
      select id, lag(id) over (partition by certificate_id order by created_at, id) as previous_id
      from certificate_statuses
    ) as linked
    where certificate_statuses.id = linked.id and linked.previous_id is not null`.execute(db);
  await sql`
    insert into certificate_status_heads (certificate_id, status_id, previous_id)
    select certificate_id, id, previous_id from (
      select certificate_id, id, previous_id,
        row_number() over (partition by certificate_id order by created_at desc, id desc) as newest
      from certificate_statuses
    ) as ranked
    where newest = 1`.execute(db);

  if (isPostgres(db)) {
    // BEFORE INSERT: the row is stored with its link. The upsert waits for another writer's lock on the head and then sees its record.
    await sql.raw(`
      create function certificate_status_link() returns trigger language plpgsql set search_path from current as $$
      begin
        insert into certificate_status_heads as head (certificate_id, status_id) values (new.certificate_id, new.id)
        on conflict (certificate_id) do update set previous_id = head.status_id, status_id = excluded.status_id
        returning head.previous_id into new.previous_id;
        return new;
      end $$`).execute(db);
    await sql.raw(`create trigger certificate_statuses_link before insert on certificate_statuses for each row execute function certificate_status_link()`).execute(db);
  } else {
    // SQLite cannot change NEW before the insert: the new row (the last page of the table) gets its link just after. Writers take the database's one write lock, so links follow commit order.
    await sql.raw(`
      create trigger certificate_statuses_link after insert on certificate_statuses for each row begin
        insert into certificate_status_heads (certificate_id, status_id) values (new.certificate_id, new.id)
        on conflict (certificate_id) do update set previous_id = status_id, status_id = excluded.status_id;
        update certificate_statuses set previous_id = (select previous_id from certificate_status_heads where certificate_id = new.certificate_id)
        where rowid = new.rowid;
      end`).execute(db);
  }
  await db.schema.dropIndex("certificate_statuses_history").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex("certificate_statuses_history").on("certificate_statuses").columns(["certificate_id", "created_at", "id"]).execute();
  if (isPostgres(db)) {
    await sql.raw("drop trigger certificate_statuses_link on certificate_statuses").execute(db);
    await sql.raw("drop function certificate_status_link()").execute(db);
  } else {
    await sql.raw("drop trigger certificate_statuses_link").execute(db);
  }
  await db.schema.dropTable("certificate_status_heads").execute();
  await db.schema.alterTable("certificate_statuses").dropColumn("previous_id").execute();
}

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
