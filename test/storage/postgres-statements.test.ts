import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AccountsRepository } from "../../src/storage/accounts-repository.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";

const postgres = (await databaseTargets()).find((t) => t.name === "postgres")!;

/**
 * On PostgreSQL, Kysely's data statements run as named prepared statements
 * (parsed once per connection, src/storage/postgres-named-statements.ts),
 * DDL stays unnamed, and a migration leaves fresh planner statistics.
 */
describe.skipIf(!!postgres.unavailable)(targetTitle(postgres), () => {
  let scratch: ScratchDatabase;
  let database: Database;

  beforeAll(async () => {
    scratch = await postgres.create();
    database = await openDatabase(scratch.url);
    await migrateToLatest(database);
  });
  afterAll(async () => {
    await database?.close();
    await scratch?.drop();
  });

  it("a migration leaves every table of the schema analysed", async () => {
    const { rows } = await sql<{ relname: string; analysed: boolean }>`
      select relname, last_analyze is not null as analysed from pg_stat_user_tables where schemaname = current_schema()`.execute(database.db);
    expect(rows.length).toBeGreaterThan(10);
    expect(rows.filter((r) => !r.analysed).map((r) => r.relname)).toEqual([]);
  });

  it("a repository statement is prepared once per connection under a name, and answers alike each time", async () => {
    await database.db.connection().execute(async (connection) => {
      const repository = new AccountsRepository({ ...database, db: connection });
      const first = await repository.authVersion();
      const second = await repository.authVersion();
      expect(first).toBe(0);
      expect(second).toBe(0);
      const { rows } = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(connection);
      const mine = rows.filter((r) => r.statement.includes('"api_auth_version"'));
      expect(mine).toHaveLength(1);
      expect(mine[0]!.name).toMatch(/^shomei_\d+$/);
      // The statement that lists them is a data statement too, and so is named; DDL never is.
      expect(rows.every((r) => /^\s*(select|insert|update|delete|with)\b/i.test(r.statement))).toBe(true);
    });
  });

  it("a column added under a prepared select * (a newer instance migrating) does not break the older instance's reads", async () => {
    const repository = new AccountsRepository(database);
    await repository.insertAccount({ id: "00000000-0000-4000-8000-000000000001", name: "before", apiStatus: "active", createdAt: 1, updatedAt: 1 });
    // Every pooled connection prepares the statement, so whichever runs the next read has it.
    await Promise.all(Array.from({ length: 12 }, () => repository.findAccountByName("before")));
    await sql`alter table accounts add column probe integer`.execute(database.db);
    try {
      const found = await Promise.all(Array.from({ length: 12 }, () => repository.findAccountByName("before")));
      expect(found.map((a) => a?.name)).toEqual(Array(12).fill("before"));
    } finally {
      await sql`alter table accounts drop column probe`.execute(database.db);
    }
  });
});
