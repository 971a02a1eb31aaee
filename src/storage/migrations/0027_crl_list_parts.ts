import { PostgresAdapter, sql, type Kysely } from "kysely";

/**
 * A list's DER in parts of at most a megabyte instead of one value. A list
 * of a million entries is about 38 MB: written as one value, SQLite copied
 * it in one statement on the event loop's thread for a second or more, and
 * PostgreSQL's driver encoded it as one 76 MB parameter. The parts are
 * written first, each in a statement of its own, under the list's SHA-256;
 * the transaction that installs the list (its row now names that SHA-256)
 * and records its changes is then small, and parts of other lists are
 * deleted after it.
 *
 * `crl_lists.der` is no longer written (emptied here); a list is stored when
 * its row has a sha256, and its DER is the parts of that sha256.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const binary = db.getExecutor().adapter instanceof PostgresAdapter ? "bytea" : "blob";
  await db.schema
    .createTable("crl_list_parts")
    .addColumn("issuer_anchor", "varchar(80)", (c) => c.notNull())
    .addColumn("url", "varchar(2048)", (c) => c.notNull())
    .addColumn("sha256", "varchar(64)", (c) => c.notNull())
    .addColumn("part", "integer", (c) => c.notNull())
    .addColumn("bytes", binary, (c) => c.notNull())
    .addPrimaryKeyConstraint("crl_list_parts_pk", ["issuer_anchor", "url", "sha256", "part"])
    .execute();
  await sql`
    insert into crl_list_parts (issuer_anchor, url, sha256, part, bytes)
    select issuer_anchor, url, sha256, 0, der from crl_lists where der is not null and sha256 is not null`.execute(db);
  await sql`update crl_lists set der = null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Parts joined back in order: string_agg on PostgreSQL; on SQLite a recursive concatenation would do, but lists are refetched anyway.
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`
      update crl_lists set der = joined.der from (
        select issuer_anchor, url, string_agg(bytes, ''::bytea order by part) as der from crl_list_parts group by issuer_anchor, url
      ) as joined where crl_lists.issuer_anchor = joined.issuer_anchor and crl_lists.url = joined.url`.execute(db);
  } else {
    await sql`update crl_lists set sha256 = null`.execute(db);
  }
  await db.schema.dropTable("crl_list_parts").execute();
}
