import { randomBytes } from "node:crypto";
import pg from "pg";
import { postgresUrl } from "../support/databases.ts";

/**
 * The PostgreSQL schemas of one test run (test/support/databases.ts names
 * them shomei_test_<run>_…) are dropped when the run ends, not as each file
 * ends: dropping a schema while another file's migrator introspects the
 * catalog makes PostgreSQL's has_schema_privilege fail on the vanished
 * schema, and that file's migration with it.
 */
export default function setup(): () => Promise<void> {
  const run = randomBytes(4).toString("hex");
  process.env.SHOMEI_TEST_RUN_ID = run;
  return async () => {
    const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      const { rows } = await client.query<{ name: string }>("select nspname as name from pg_namespace where nspname like $1", [`shomei_test_${run}_%`]);
      for (const { name } of rows) await client.query(`drop schema if exists ${name} cascade`);
    } catch {
      // No PostgreSQL: nothing was created in it.
    } finally {
      await client.end().catch(() => undefined);
    }
  };
}
