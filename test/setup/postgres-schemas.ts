import { randomBytes } from "node:crypto";
import pg from "pg";
import { postgresUrl } from "../support/databases.ts";

/**
 * Each test run gets a PostgreSQL database of its own, shomei_test_<run>,
 * in which test/support/databases.ts makes a schema per file or test; the
 * database is dropped when the run ends. Not one database shared by every
 * run: a migration looks for its bookkeeping tables through every schema of
 * the database (Kysely's introspector, has_schema_privilege on each), and
 * fails when another run drops its schemas at that moment. Within a run,
 * schemas are dropped only at its end for the same reason. A server that
 * does not let the tests create a database gets the old arrangement: the
 * run's schemas in TEST_DATABASE_URL's database, dropped at the end.
 */
export default async function setup(): Promise<() => Promise<void>> {
  const run = randomBytes(4).toString("hex");
  process.env.SHOMEI_TEST_RUN_ID = run;
  const database = `shomei_test_${run}`;
  const created = await withClient(postgresUrl, (client) => client.query(`create database ${database}`)).then(
    () => true,
    () => false,
  );
  if (created) {
    const url = new URL(postgresUrl);
    url.pathname = `/${database}`;
    process.env.TEST_DATABASE_URL = url.toString();
  }
  return async () => {
    await withClient(postgresUrl, async (client) => {
      if (created) {
        await client.query(`drop database if exists ${database} with (force)`);
        return;
      }
      const { rows } = await client.query<{ name: string }>("select nspname as name from pg_namespace where nspname like $1", [`shomei\\_test\\_${run}\\_%`]);
      for (const { name } of rows) await client.query(`drop schema if exists ${name} cascade`);
    }).catch(() => undefined); // No PostgreSQL: nothing was created in it.
  };
}

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    return await use(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
