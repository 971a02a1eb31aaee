import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import SqliteDatabase from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteDialect, sql } from "kysely";
import type PostgresDriver from "pg";
import type { Tables } from "./schema.ts";
import { nameStatements } from "./postgres-named-statements.ts";
import { SqliteCheckpointer } from "./sqlite-checkpointer.ts";
import { withStatementCache } from "./sqlite-statement-cache.ts";

export type Dialect = "sqlite" | "postgres";

export interface Database {
  db: Kysely<Tables>;
  dialect: Dialect;
  /** The URL with any password masked, safe for logs and messages. */
  displayUrl: string;
  ping(timeoutMs?: number): Promise<void>;
  /**
   * Resolves when SQLite's write-ahead log has been copied into the database
   * file by the checkpointer's thread (see SqliteCheckpointer.checkpointNow):
   * a write of many megabytes waits for it between its statements. At once on
   * PostgreSQL and for an in-memory database.
   */
  logCopied(): Promise<void>;
  close(): Promise<void>;
}

/** Parses "postgres://…", "sqlite:<path>" or a bare file path. */
export function describeDatabaseUrl(url: string): { dialect: Dialect; location: string } {
  if (/^postgres(ql)?:\/\//.test(url)) return { dialect: "postgres", location: url };
  return { dialect: "sqlite", location: url.replace(/^sqlite:(\/\/)?/, "") };
}

export function maskUrl(url: string): string {
  // Up to the last "@" before the path: a password may hold an unescaped "@", and the user may be empty.
  return url.replace(/^(postgres(?:ql)?:\/\/[^:/@]*):[^/?#]*@/, "$1:***@");
}

export async function openDatabase(url: string): Promise<Database> {
  const { dialect, location } = describeDatabaseUrl(url);
  const displayUrl = maskUrl(url);
  const { db, beforeClose, checkpointer } = dialect === "postgres" ? { db: await openPostgres(location), beforeClose: undefined, checkpointer: undefined } : openSqlite(location);
  const database: Database = {
    db,
    dialect,
    displayUrl,
    async ping(timeoutMs = 2000) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        await Promise.race([sql`select 1`.execute(db), timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    logCopied: () => checkpointer?.checkpointNow() ?? Promise.resolve(),
    close: async () => {
      await beforeClose?.();
      await db.destroy();
    },
  };
  try {
    await database.ping(5000);
  } catch (error) {
    await db.destroy().catch(() => undefined);
    throw new DatabaseUnavailableError(`cannot reach database ${displayUrl}: ${describeCause(error)}`, { cause: error });
  }
  return database;
}

/**
 * Where `npm ci` built better-sqlite3's addon. Named, it is loaded at once; otherwise better-sqlite3 asks the
 * `bindings` package, which tries a dozen folders with a realpath each (about 8 ms of every start). A build
 * elsewhere (another layout, a prebuilt binary) still works: undefined lets better-sqlite3 search.
 */
function sqliteAddonPath(): string | undefined {
  try {
    return createRequire(import.meta.url).resolve("better-sqlite3/build/Release/better_sqlite3.node");
  } catch {
    return undefined;
  }
}

function openSqlite(file: string): { db: Kysely<Tables>; beforeClose?: () => Promise<void>; checkpointer?: SqliteCheckpointer } {
  if (file !== ":memory:") mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const nativeBinding = sqliteAddonPath();
  const connection = new SqliteDatabase(file, { timeout: 5000, ...(nativeBinding ? { nativeBinding } : {}) });
  // WAL lets readers run while one writer commits; NORMAL sync is durable across
  // process crashes, which is what an embedded single-node store needs.
  connection.pragma("journal_mode = WAL");
  connection.pragma("synchronous = NORMAL");
  connection.pragma("foreign_keys = ON");
  connection.pragma("cache_size = -65536");
  // SQLite copies the log back into the database (and syncs both files) when a commit finds it longer than
  // this many pages: by default 1,000, which under steady writes is every few hundred requests, each time
  // on the request that happens to commit. At 10,000 (about 40 MB) a page written by many requests is
  // copied once for all of them and the syncs are ten times rarer: a status record's insert went from 46 to
  // 32 µs (docs/performance.md). The log file is trimmed back after a large transaction.
  connection.pragma("wal_autocheckpoint = 10000");
  connection.pragma(`journal_size_limit = ${48 * 1024 * 1024}`);
  // The checkpoints themselves happen on a thread of their own (the setting above is the fallback).
  const checkpointer = file === ":memory:" || file === "" ? undefined : new SqliteCheckpointer(path.resolve(file));
  const onStatement = checkpointer && (() => checkpointer.noteStatement());
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: withStatementCache(connection, onStatement) }) });
  return { db, beforeClose: checkpointer && (() => checkpointer.close()), checkpointer };
}

async function openPostgres(url: string): Promise<Kysely<Tables>> {
  // Loaded only here: a server on SQLite (the default) starts without reading the PostgreSQL driver.
  // Required rather than imported: the build runs as a script with no module loader for import().
  const pg = createRequire(import.meta.url)("pg") as typeof PostgresDriver;
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: 5000,
    // BIGINT (epoch milliseconds) comes back as a JS number, as it does from SQLite.
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        oid === pg.types.builtins.INT8 ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // A client losing its server must not crash the process. Idle clients report it to the pool; a
  // checked-out client (query in flight) emits it on itself, where pg-pool listens only while idle.
  // The query in flight fails with the same error, and the pool drops the client when it comes back.
  pool.on("error", () => undefined);
  pool.on("connect", (client) => client.on("error", () => undefined));
  nameStatements(pool);
  return new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
}

/** The database cannot be reached or answered with a connection-level failure. */
export class DatabaseUnavailableError extends Error {
  override name = "DatabaseUnavailableError";
}

const connectionErrorCodes = new Set([
  "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "EPIPE", "EHOSTUNREACH",
  "57P01", "57P02", "57P03", "08000", "08001", "08003", "08006", "3D000", "28P01", "28000",
  "SQLITE_BUSY", "SQLITE_CANTOPEN", "SQLITE_IOERR", "SQLITE_FULL", "SQLITE_READONLY",
]);

/** True when an error means "the database is not available", as opposed to a bug in a query. */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof DatabaseUnavailableError) return true;
  const e = error as { code?: unknown; message?: unknown } | null;
  if (!e) return false;
  if (typeof e.code === "string" && connectionErrorCodes.has(e.code)) return true;
  const message = typeof e.message === "string" ? e.message : "";
  return /driver has already been destroyed|Connection terminated|timeout exceeded when trying to connect|database connection is not open/i.test(message);
}

function describeCause(error: unknown): string {
  const e = error as { code?: string; message?: string; errors?: { message?: string }[] };
  const message = e?.message || e?.errors?.map((x) => x.message).join("; ") || String(error);
  return e?.code && !message.includes(e.code) ? `${message} (${e.code})` : message;
}
