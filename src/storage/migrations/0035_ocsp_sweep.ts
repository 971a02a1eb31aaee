import { PostgresAdapter, sql, type Kysely } from "kysely";

/**
 * The queue of the OCSP sweep (docs/events.md, "The OCSP sweep"): one row
 * per certificate of a trust anchor, by its issuing anchor and serial number
 * (as `ocsp_responses`), so that a certificate registered by several
 * accounts is asked for once.
 *
 * - due_at: when the sweep may ask for it next; 0 for one never asked.
 * - lease_token, leased_until: the instance that claimed it for a round and
 *   until when; a lapsed lease is claimable again, and only the holder of
 *   the lease moves due_at.
 *
 * `ocsp_sweep_turn` is one row: when the next claim may be made, and the
 * claim that holds the turn. A round takes it with its claim (until its
 * lease ends, should its instance die) and gives it back when done, put
 * off by the requests it made at the rate limit, so instances take turns
 * and the limit holds for all of them.
 *
 * A trigger on certificates adds the row in the statement that registers a
 * certificate, whoever registers it; certificates registered before are
 * added here. Which of them the sweep asks for (issuers with OCSP and no
 * CRL) is the domain's choice, made again at each visit, so the rows of
 * other certificates only come due once per interval.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("ocsp_sweep_queue")
    .addColumn("issuer_anchor", "varchar(80)", (c) => c.notNull())
    .addColumn("serial_number", "varchar(64)", (c) => c.notNull())
    .addColumn("due_at", "bigint", (c) => c.notNull())
    .addColumn("lease_token", "varchar(36)")
    .addColumn("leased_until", "bigint")
    .addPrimaryKeyConstraint("ocsp_sweep_queue_pk", ["issuer_anchor", "serial_number"])
    .execute();
  await db.schema
    .createTable("ocsp_sweep_turn")
    .addColumn("id", "integer", (c) => c.primaryKey())
    .addColumn("next_claim_at", "bigint", (c) => c.notNull())
    .addColumn("holder", "varchar(36)")
    .execute();
  await sql`insert into ocsp_sweep_turn (id, next_claim_at) values (1, 0)`.execute(db);
  await db.schema.createIndex("ocsp_sweep_queue_due").on("ocsp_sweep_queue").columns(["due_at"]).execute();
  await sql`
    insert into ocsp_sweep_queue (issuer_anchor, serial_number, due_at)
    select distinct trust_anchor, serial_number, 0 from certificates where trust_anchor is not null`.execute(db);
  if (isPostgres(db)) {
    await sql.raw(`
      create function ocsp_sweep_enqueue() returns trigger language plpgsql set search_path from current as $$
      begin
        if new.trust_anchor is not null then
          insert into ocsp_sweep_queue (issuer_anchor, serial_number, due_at) values (new.trust_anchor, new.serial_number, 0)
          on conflict do nothing;
        end if;
        return new;
      end $$`).execute(db);
    await sql.raw(`create trigger certificates_ocsp_sweep after insert on certificates for each row execute function ocsp_sweep_enqueue()`).execute(db);
  } else {
    await sql.raw(`
      create trigger certificates_ocsp_sweep after insert on certificates for each row when new.trust_anchor is not null begin
        insert into ocsp_sweep_queue (issuer_anchor, serial_number, due_at) values (new.trust_anchor, new.serial_number, 0)
        on conflict do nothing;
      end`).execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    await sql.raw("drop trigger certificates_ocsp_sweep on certificates").execute(db);
    await sql.raw("drop function ocsp_sweep_enqueue()").execute(db);
  } else {
    await sql.raw("drop trigger certificates_ocsp_sweep").execute(db);
  }
  await db.schema.dropTable("ocsp_sweep_turn").execute();
  await db.schema.dropTable("ocsp_sweep_queue").execute();
}

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
