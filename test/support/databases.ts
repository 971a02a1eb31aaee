import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";

/** A fresh, empty database for one test file or test, and how to throw it away. */
export interface ScratchDatabase {
  url: string;
  drop(): Promise<void>;
}

export interface DatabaseTarget {
  name: "sqlite" | "postgres";
  /** Why the target is skipped; undefined when it is available. */
  unavailable?: string;
  create(): Promise<ScratchDatabase>;
}

export const postgresUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

const sqlite: DatabaseTarget = {
  name: "sqlite",
  async create() {
    const dir = mkdtempSync(path.join(tmpdir(), "shomei-test-"));
    return { url: `sqlite:${path.join(dir, "shomei.db")}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  },
};

/**
 * Each scratch PostgreSQL database is a schema of its own, chosen through
 * search_path in the URL. Within a test run (test/setup/postgres-schemas.ts
 * sets SHOMEI_TEST_RUN_ID) the schemas are named after the run and dropped
 * when it ends; outside one, drop() drops at once.
 */
function postgres(unavailable?: string): DatabaseTarget {
  return {
    name: "postgres",
    ...(unavailable ? { unavailable } : {}),
    async create() {
      const run = process.env.SHOMEI_TEST_RUN_ID;
      const schema = `shomei_test_${run ? `${run}_` : ""}${randomBytes(6).toString("hex")}`;
      const admin = new pg.Client({ connectionString: postgresUrl });
      await admin.connect();
      await admin.query(`create schema ${schema}`);
      await admin.end();
      const url = new URL(postgresUrl);
      url.searchParams.set("options", `-c search_path=${schema}`);
      return {
        url: url.toString(),
        async drop() {
          if (run) return;
          const client = new pg.Client({ connectionString: postgresUrl });
          await client.connect();
          await client.query(`drop schema if exists ${schema} cascade`);
          await client.end();
        },
      };
    },
  };
}

let probed: Promise<string | undefined> | undefined;

/** Resolves to undefined when PostgreSQL answers, or to the reason it does not. */
function probePostgres(): Promise<string | undefined> {
  return (probed ??= (async () => {
    const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query("select 1");
      return undefined;
    } catch (error) {
      return `PostgreSQL not reachable at ${postgresUrl.replace(/:[^:@/]*@/, ":***@")}: ${(error as Error).message || (error as { code?: string }).code}`;
    } finally {
      await client.end().catch(() => undefined);
    }
  })());
}

/**
 * SQLite always; PostgreSQL when it answers. Under CI=true a missing PostgreSQL
 * is a failure, not a skip, so CI can never pass without having tested it.
 */
export async function databaseTargets(): Promise<DatabaseTarget[]> {
  const reason = await probePostgres();
  if (reason && process.env.CI === "true") {
    throw new Error(`${reason}. CI=true requires PostgreSQL (set TEST_DATABASE_URL).`);
  }
  if (reason) console.warn(`\n  SKIPPING PostgreSQL tests: ${reason}\n`);
  return [sqlite, postgres(reason)];
}

/** Title for describe blocks, so a skip says why in the test report. */
export function targetTitle(target: DatabaseTarget): string {
  return target.unavailable ? `${target.name} (skipped: ${target.unavailable})` : target.name;
}
