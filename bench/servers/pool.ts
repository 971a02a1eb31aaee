/**
 * The servers of a run, started when a comparison first needs them and
 * stopped when no later one does: the run's CA (bench-ca.ts), the bare
 * connect-node server, node-oidc-provider, and shomei in production mode on
 * SQLite (a file each in a temporary directory) and PostgreSQL (the schema
 * bench_<pid>, dropped at the end), and once in mock mode on SQLite. Each
 * shomei server and the connect-node server run as BENCH_PROCESSES
 * processes (harness.ts, processesPerServer).
 */
import { rmSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { temporaryDirectory } from "../harness.ts";
import { startConnectEcho, startOidcProvider } from "./peers.ts";
import { BenchCa } from "./bench-ca.ts";
import { startShomei } from "./shomei.ts";

export type ServerName = "echo" | "oidcProvider" | "sqlite" | "postgres" | "sqliteMock" | "sqlite10k" | "sqlite1m";

/** Leaves the CA issues: Verify's requests take the good ones in turn. */
const leafCount = Number(process.env.BENCH_LEAVES ?? 20);

const history = Number(process.env.BENCH_HISTORY ?? 10_000);
export const largeHistory = Number(process.env.BENCH_LARGE_HISTORY ?? 1_000_000);
const postgresUrl = process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export class Servers {
  private readonly started = new Map<ServerName, Promise<unknown>>();
  private readonly stops = new Map<ServerName, () => Promise<void>>();
  private schema: string | undefined;
  private readonly sqliteDirs: string[] = [];
  private caStarted: Promise<BenchCa> | undefined;

  /**
   * The run's servers; with `baselineOf`, a second set whose shomei is the
   * one built in the checkout at `root` (BENCH_BASELINE), sharing the first
   * set's CA and peers, so that both builds answer for the same
   * certificates and are measured in one run.
   */
  constructor(
    private readonly root = ".",
    private readonly baselineOf?: Servers,
  ) {}

  /** The run's CA, started once, kept to the end. */
  ca = (): Promise<BenchCa> =>
    this.baselineOf?.ca() ??
    (this.caStarted ??= (async () => {
      const ca = new BenchCa();
      await ca.start(leafCount);
      return ca;
    })());

  private get<T>(name: ServerName, make: () => Promise<T & { stop(): Promise<void> }>): Promise<T> {
    let server = this.started.get(name) as Promise<T & { stop(): Promise<void> }> | undefined;
    if (!server) {
      server = make();
      this.started.set(name, server);
      this.stops.set(name, async () => (await server!).stop());
    }
    return server;
  }

  echo = (): ReturnType<typeof startConnectEcho> => this.baselineOf?.echo() ?? this.get("echo", async () => startConnectEcho((await this.ca()).certificatePath));
  oidcProvider = (): ReturnType<typeof startOidcProvider> => this.baselineOf?.oidcProvider() ?? this.get("oidcProvider", startOidcProvider);
  sqlite = () => this.get("sqlite", async () => startShomei(this.sqliteUrl(), history, "production", await this.ca(), this.root));
  sqliteMock = () => this.get("sqliteMock", async () => startShomei(this.sqliteUrl(), history, "mock", await this.ca(), this.root));
  sqlite10k = () => this.get("sqlite10k", async () => startShomei(this.sqliteUrl(), 10_000, "production", await this.ca(), this.root));
  sqlite1m = () => this.get("sqlite1m", async () => startShomei(this.sqliteUrl(), largeHistory, "production", await this.ca(), this.root));
  postgres = () =>
    this.get("postgres", async () => {
      this.schema = `bench_${process.pid}${this.baselineOf ? "_baseline" : ""}`;
      await this.admin(`create schema ${this.schema}`);
      const url = new URL(postgresUrl);
      url.searchParams.set("options", `-c search_path=${this.schema}`);
      return startShomei(url.toString(), history, "production", await this.ca(), this.root);
    });

  private sqliteUrl(): string {
    const dir = temporaryDirectory("shomei-bench-db-");
    this.sqliteDirs.push(dir);
    return `sqlite:${path.join(dir, "bench.db")}`;
  }

  private async admin(statement: string): Promise<void> {
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  }

  async stopAllBut(keep: ReadonlySet<ServerName>): Promise<void> {
    for (const [name, stop] of [...this.stops]) {
      if (keep.has(name)) continue;
      this.stops.delete(name);
      this.started.delete(name);
      await stop().catch((error: unknown) => console.error(`stopping ${name}: ${String(error)}`));
    }
  }

  async close(): Promise<void> {
    await this.stopAllBut(new Set());
    if (this.caStarted) await (await this.caStarted).stop();
    if (this.schema) await this.admin(`drop schema if exists ${this.schema} cascade`);
    for (const dir of this.sqliteDirs) rmSync(dir, { recursive: true, force: true });
  }
}

