import { PostgresAdapter, sql, type Kysely } from "kysely";

/**
 * On PostgreSQL, a status record no longer has a foreign key of its own to
 * its certificate: the chain's head (0024) holds the same guarantee for it.
 *
 * A foreign key check locks the row it finds (FOR KEY SHARE), and locking
 * a row writes it: every status record, that is every check, wrote its
 * certificate's row and logged it, which was a quarter of PostgreSQL's time
 * in a check (docs/performance.md). The guarantee stays whole without it:
 * - the trigger that inserts a record upserts its certificate's head in the
 *   same statement, and the head's foreign key is checked when the head is
 *   first written, so a record of a certificate that does not exist fails
 *   as before;
 * - a certificate with records has a head, whose foreign key refuses the
 *   certificate's deletion, as the record's did.
 * SQLite keeps the key: its check takes no lock, and dropping it would mean
 * copying the history into a new table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  const keys = await sql<{ name: string }>`
    select conname as name from pg_constraint
    where conrelid = 'certificate_statuses'::regclass and confrelid = 'certificates'::regclass and contype = 'f'`.execute(db);
  for (const { name } of keys.rows) await sql`alter table certificate_statuses drop constraint ${sql.id(name)}`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`
    alter table certificate_statuses add constraint certificate_statuses_certificate_id_fkey
    foreign key (certificate_id) references certificates (id)`.execute(db);
}

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
