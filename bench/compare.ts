/**
 * shomei side by side with what a user would pick instead, in one run:
 * CheckCertificateStatus against a bare connect-node server answering the
 * same message (Connect JSON and gRPC, SQLite and PostgreSQL), PAR,
 * authorize with consent skipped and the refresh_token grant against
 * node-oidc-provider 9, BatchCheckCertificateStatus against single calls, and
 * a history of 1,000,000 status records against one of 10,000. Every server
 * and the load generator run in processes of their own. Each comparison runs
 * its two sides alternately for a few rounds (a short warm-up first) and
 * keeps the median of the per-round ratios; p99 latency and the peak resident
 * memory of each server are reported beside it. Ends with one JSON line
 * `{"ratios":{…}}` (see docs/performance.md).
 */
import { create, toBinary } from "@bufbuild/protobuf";
import pg from "pg";
import { CheckCertificateStatusRequestSchema } from "../gen/service/verify/v2/certificate_service_pb.ts";
import { connections, loadGenerator, seconds } from "./harness.ts";
import type { LoadJob } from "./load/job.ts";
import type { Measurement } from "./load/client.ts";
import { authorizeQuery, basicAuthorization, mintRefreshTokens, pkcePair, signIn, type Provider } from "./oidc-session.ts";
import { startConnectEcho, startOidcProvider } from "./servers/peers.ts";
import { startShomei, type Shomei } from "./servers/shomei.ts";
import { median, ratiosLine } from "./stats.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export const comparisonNames = [
  "check_sqlite_vs_connect",
  "check_pg_vs_connect",
  "check_grpc_sqlite_vs_connect",
  "check_grpc_pg_vs_connect",
  "par_sqlite_vs_oidc_provider",
  "par_pg_vs_oidc_provider",
  "authorize_vs_oidc_provider",
  "refresh_vs_oidc_provider",
  "batch_vs_single",
  "check_1m_vs_10k_rows",
] as const;
export type ComparisonName = (typeof comparisonNames)[number];

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 1);
const history = Number(process.env.BENCH_HISTORY ?? 10_000);
const largeHistory = Number(process.env.BENCH_LARGE_HISTORY ?? 1_000_000);
const postgresUrl = process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const checkPath = "/service.verify.v2.CertificateService/CheckCertificateStatus";
const batchPath = "/service.verify.v2.CertificateService/BatchCheckCertificateStatus";
const batchConnections = Number(process.env.BENCH_BATCH_CONNECTIONS ?? 4);
const json = { "content-type": "application/json" };
const form = { "content-type": "application/x-www-form-urlencoded" };

/** One side of a comparison: the process measured and the job that loads it (made anew before every round). */
interface Side {
  label: string;
  pid: number;
  job: () => Promise<Omit<LoadJob, "seconds" | "connections">>;
  /** Units per request (ids per batch call); 1 when not given. */
  per?: number;
  /** Requests in flight, when not the run's `connections`. */
  connections?: number;
  unit?: string;
}

interface Comparison {
  title: string;
  shomei: Side;
  peer: Side;
}

type ServerName = "echo" | "oidcProvider" | "sqlite" | "postgres" | "sqlite10k" | "sqlite1m";

const needs: Record<ComparisonName, ServerName[]> = {
  check_sqlite_vs_connect: ["sqlite", "echo"],
  check_pg_vs_connect: ["postgres", "echo"],
  check_grpc_sqlite_vs_connect: ["sqlite", "echo"],
  check_grpc_pg_vs_connect: ["postgres", "echo"],
  par_sqlite_vs_oidc_provider: ["sqlite", "oidcProvider"],
  par_pg_vs_oidc_provider: ["postgres", "oidcProvider"],
  authorize_vs_oidc_provider: ["sqlite", "oidcProvider"],
  refresh_vs_oidc_provider: ["sqlite", "oidcProvider"],
  batch_vs_single: ["sqlite"],
  check_1m_vs_10k_rows: ["sqlite10k", "sqlite1m"],
};

/** A gRPC message on the wire: uncompressed flag, big-endian length, the bytes. */
function grpcFrame(message: Uint8Array): string {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  return frame.toString("base64");
}

const checkBodies = (s: Shomei) => s.certificateIds.map((certificateId) => JSON.stringify({ certificateId }));
const checkFrames = (s: Shomei) =>
  s.certificateIds.map((certificateId) => grpcFrame(toBinary(CheckCertificateStatusRequestSchema, create(CheckCertificateStatusRequestSchema, { certificateId }))));

/** Servers started when a comparison first needs them and stopped when no later one does. */
class Servers {
  private readonly started = new Map<ServerName, Promise<unknown>>();
  private readonly stops = new Map<ServerName, () => Promise<void>>();
  private schema: string | undefined;
  private readonly sqliteDirs: string[] = [];

  private get<T>(name: ServerName, make: () => Promise<T & { stop(): Promise<void> }>): Promise<T> {
    let server = this.started.get(name) as Promise<T & { stop(): Promise<void> }> | undefined;
    if (!server) {
      server = make();
      this.started.set(name, server);
      this.stops.set(name, async () => (await server!).stop());
    }
    return server;
  }

  echo = () => this.get("echo", startConnectEcho);
  oidcProvider = () => this.get("oidcProvider", startOidcProvider);
  sqlite = () => this.get("sqlite", () => startShomei(this.sqliteUrl(), history));
  sqlite10k = () => this.get("sqlite10k", () => startShomei(this.sqliteUrl(), 10_000));
  sqlite1m = () => this.get("sqlite1m", () => startShomei(this.sqliteUrl(), largeHistory));
  postgres = () =>
    this.get("postgres", async () => {
      this.schema = `bench_${process.pid}`;
      await this.admin(`create schema ${this.schema}`);
      const url = new URL(postgresUrl);
      url.searchParams.set("options", `-c search_path=${this.schema}`);
      return startShomei(url.toString(), history);
    });

  private sqliteUrl(): string {
    const dir = mkdtempSync(path.join(tmpdir(), "shomei-bench-db-"));
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
    if (this.schema) await this.admin(`drop schema if exists ${this.schema} cascade`);
    for (const dir of this.sqliteDirs) rmSync(dir, { recursive: true, force: true });
  }
}

function shomeiProvider(s: Shomei): Provider {
  return {
    base: s.url,
    authorizePath: "/api/oidc/v1/authorize",
    parPath: "/api/oidc/v1/par",
    tokenPath: "/api/oidc/v1/token",
    clientId: "demo-client",
    clientSecret: s.clientSecret,
    redirectUri: s.redirectUri,
    pageFields: { "/auth/login": { login: "demo", password: "demo-password" }, "/auth/consent": { decision: "allow" } },
  };
}

function peerProvider(issuer: string, clientSecret: string): Provider {
  return {
    base: issuer,
    authorizePath: "/auth",
    parPath: "/request",
    tokenPath: "/token",
    clientId: "demo-client",
    clientSecret,
    redirectUri: `${issuer}/demo/callback`,
    pageFields: {},
  };
}

function checkSide(label: string, s: Shomei, target: { url: string; pid: number }, protocol: "http1" | "grpc"): Side {
  const headers = { authorization: `Bearer ${s.token}` };
  if (protocol === "grpc") {
    const frames = checkFrames(s);
    return { label, pid: target.pid, job: async () => ({ name: label, protocol, origin: target.url, path: checkPath, headers, frames }) };
  }
  const bodies = checkBodies(s);
  return {
    label,
    pid: target.pid,
    job: async () => ({ name: label, protocol, url: `${target.url}${checkPath}`, method: "POST", headers: { ...json, ...headers }, bodies }),
  };
}

function parSide(label: string, provider: Provider, pid: number): Side {
  const body = new URLSearchParams({
    response_type: "code",
    client_id: provider.clientId,
    redirect_uri: provider.redirectUri,
    scope: "openid profile",
    state: "bench-state",
    code_challenge: pkcePair().challenge,
    code_challenge_method: "S256",
  }).toString();
  const headers = { ...form, authorization: basicAuthorization(provider.clientId, provider.clientSecret) };
  return {
    label,
    pid,
    job: async () => ({ name: label, protocol: "http1", url: `${provider.base}${provider.parPath}`, method: "POST", headers, bodies: [body], expectStatus: 201 }),
  };
}

/** GET authorize in a signed-in browser whose grant covers the scopes: a redirect to the client with a code. */
async function authorizeSide(label: string, provider: Provider, pid: number, signInExtra: Record<string, string>): Promise<Side> {
  const jar = await signIn(provider, signInExtra);
  const target = `${provider.base}${provider.authorizePath}?${authorizeQuery(provider, "openid profile", pkcePair().challenge)}`;
  const cookie = jar.header(provider.authorizePath);
  const probe = await fetch(target, { redirect: "manual", headers: { cookie } });
  const location = probe.headers.get("location") ?? "";
  if (probe.status < 300 || probe.status > 399 || !location.startsWith(`${provider.redirectUri}?`) || !location.includes("code=")) {
    throw new Error(`${label}: a signed-in authorize answered ${probe.status} ${location || (await probe.text()).slice(0, 200)}, not a code`);
  }
  return {
    label,
    pid,
    job: async () => ({ name: label, protocol: "http1", url: target, method: "GET", headers: { cookie }, expectStatus: probe.status, expectLocation: "code=" }),
  };
}

/**
 * The refresh_token grant with rotation: every token is single-use, so each
 * connection carries a chain (the next request sends the token the last
 * answer gave), started from a pool minted before the round.
 */
async function refreshSide(label: string, provider: Provider, pid: number, extra: Record<string, string>): Promise<Side> {
  const jar = await signIn(provider, extra);
  const headers = { ...form, authorization: basicAuthorization(provider.clientId, provider.clientSecret) };
  return {
    label,
    pid,
    job: async () => ({
      name: label,
      protocol: "http1",
      url: `${provider.base}${provider.tokenPath}`,
      method: "POST",
      headers,
      chain: {
        template: "grant_type=refresh_token&refresh_token={token}",
        tokens: await mintRefreshTokens(provider, jar, connections, extra),
        primerPath: "/.well-known/openid-configuration",
      },
    }),
  };
}

async function comparison(name: ComparisonName, servers: Servers): Promise<Comparison> {
  // node-oidc-provider grants offline_access only when prompt=consent is asked for.
  const peerConsent = { prompt: "consent" };
  switch (name) {
    case "check_sqlite_vs_connect":
    case "check_pg_vs_connect":
    case "check_grpc_sqlite_vs_connect":
    case "check_grpc_pg_vs_connect": {
      const grpc = name.startsWith("check_grpc");
      const s = await (name.includes("_pg_") ? servers.postgres() : servers.sqlite());
      const echo = await servers.echo();
      const protocol = grpc ? "grpc" : "http1";
      return {
        title: `CheckCertificateStatus, ${grpc ? "gRPC" : "Connect JSON"}, ${name.includes("_pg_") ? "PostgreSQL" : "SQLite"}`,
        shomei: checkSide("shomei", s, { url: s.url, pid: s.pid }, protocol),
        peer: checkSide("connect-node echo", s, { url: grpc ? echo.h2c : echo.http1, pid: echo.pid }, protocol),
      };
    }
    case "par_sqlite_vs_oidc_provider":
    case "par_pg_vs_oidc_provider": {
      const s = await (name === "par_pg_vs_oidc_provider" ? servers.postgres() : servers.sqlite());
      const peer = await servers.oidcProvider();
      return {
        title: `PAR, client_secret_basic, ${name === "par_pg_vs_oidc_provider" ? "PostgreSQL" : "SQLite"}`,
        shomei: parSide("shomei", shomeiProvider(s), s.pid),
        peer: parSide("node-oidc-provider", peerProvider(peer.issuer, peer.clientSecret), peer.pid),
      };
    }
    case "authorize_vs_oidc_provider": {
      const s = await servers.sqlite();
      const peer = await servers.oidcProvider();
      return {
        title: "authorize, session + prior grant -> code, SQLite",
        shomei: await authorizeSide("shomei", shomeiProvider(s), s.pid, {}),
        peer: await authorizeSide("node-oidc-provider", peerProvider(peer.issuer, peer.clientSecret), peer.pid, peerConsent),
      };
    }
    case "refresh_vs_oidc_provider": {
      const s = await servers.sqlite();
      const peer = await servers.oidcProvider();
      return {
        title: "refresh_token grant, rotation, SQLite",
        shomei: await refreshSide("shomei", shomeiProvider(s), s.pid, {}),
        peer: await refreshSide("node-oidc-provider", peerProvider(peer.issuer, peer.clientSecret), peer.pid, peerConsent),
      };
    }
    case "batch_vs_single": {
      const s = await servers.sqlite();
      const headers = { ...json, authorization: `Bearer ${s.token}` };
      const body = JSON.stringify({ certificateIds: s.certificateIds });
      return {
        title: `BatchCheckCertificateStatus of ${s.certificateIds.length} ids vs single calls, SQLite`,
        shomei: {
          label: "batch",
          pid: s.pid,
          per: s.certificateIds.length,
          unit: "ids/s",
          // Enough batches in flight to keep the server busy; 32 of 1,000 ids each would only queue.
          connections: batchConnections,
          job: async () => ({ name: "batch", protocol: "http1", url: `${s.url}${batchPath}`, method: "POST", headers, bodies: [body] }),
        },
        peer: { ...checkSide("single", s, { url: s.url, pid: s.pid }, "http1"), unit: "ids/s" },
      };
    }
    case "check_1m_vs_10k_rows": {
      const small = await servers.sqlite10k();
      const large = await servers.sqlite1m();
      return {
        title: `CheckCertificateStatus, ${largeHistory.toLocaleString("en")} vs 10,000 status records, SQLite`,
        shomei: checkSide(`${largeHistory.toLocaleString("en")} rows`, large, { url: large.url, pid: large.pid }, "http1"),
        peer: checkSide("10,000 rows", small, { url: small.url, pid: small.pid }, "http1"),
      };
    }
  }
}

interface Row {
  name: ComparisonName;
  title: string;
  labels: [string, string];
  unit: string;
  ratio: number;
  ratios: number[];
  rate: [number, number];
  p99: [number, number];
  rssMb: [number, number];
  error?: string;
}

async function measureSide(side: Side, secondsToRun: number, warmUp = false): Promise<Measurement> {
  const job = { ...(await side.job()), seconds: secondsToRun, connections: side.connections ?? connections } as LoadJob;
  const result = await (await loadGenerator()).measure(job, side.pid, warmUp);
  return { ...result, rate: result.rate * (side.per ?? 1) };
}

async function run(name: ComparisonName, servers: Servers): Promise<Row> {
  const c = await comparison(name, servers);
  const sides = [c.shomei, c.peer] as const;
  for (const side of sides) await measureSide(side, warmupSeconds, true);
  const results: [Measurement[], Measurement[]] = [[], []];
  for (let round = 0; round < rounds; round++) {
    // Alternate which side goes first, so that a drift of the machine's load does not favour one.
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (const i of order) results[i]!.push(await measureSide(sides[i]!, seconds));
  }
  const ratios = results[0].map((ours, i) => ours.rate / results[1][i]!.rate);
  const pick = (f: (m: Measurement) => number): [number, number] => [median(results[0].map(f)), median(results[1].map(f))];
  return {
    name,
    title: c.title,
    labels: [c.shomei.label, c.peer.label],
    unit: c.shomei.unit ?? "req/s",
    ratio: median(ratios),
    ratios,
    rate: pick((m) => m.rate),
    p99: pick((m) => m.p99),
    rssMb: pick((m) => m.rssMb),
  };
}

function printTable(rows: Row[]): void {
  const header = ["key", "path", "shomei side", "compared with", "rate (median)", "ratio", "rounds", "p99 ms", "RSS MB"];
  const f = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : "-");
  const cells = rows.map((r) =>
    r.error
      ? [r.name, r.title, "", "", "", "failed", "", "", ""]
      : [
          r.name,
          r.title,
          r.labels[0],
          r.labels[1],
          `${f(r.rate[0])} vs ${f(r.rate[1])} ${r.unit}`,
          `${r.ratio.toFixed(3)}x`,
          r.ratios.map((x) => x.toFixed(2)).join(" "),
          `${f(r.p99[0], 1)} vs ${f(r.p99[1], 1)}`,
          `${f(r.rssMb[0])} vs ${f(r.rssMb[1])}`,
        ],
  );
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]!.length)));
  for (const row of [header, ...cells]) console.log(row.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd());
  for (const r of rows) if (r.error) console.log(`\n${r.name} failed: ${r.error}`);
}

/** Runs the named comparisons in the order of `comparisonNames`; prints the table and the JSON line. */
export async function runComparisons(selected: ReadonlySet<ComparisonName>): Promise<boolean> {
  const names = comparisonNames.filter((name) => selected.has(name));
  console.log(`${connections} connections, ${seconds} s per measurement, ${rounds} interleaved rounds, ${warmupSeconds} s warm-up per side\n`);
  const servers = new Servers();
  const rows: Row[] = [];
  try {
    for (const [i, name] of names.entries()) {
      const started = performance.now();
      try {
        const row = await run(name, servers);
        rows.push(row);
        console.log(`${name}: ${row.ratio.toFixed(3)}x (rounds ${row.ratios.map((x) => x.toFixed(3)).join(", ")}) in ${((performance.now() - started) / 1000).toFixed(0)} s`);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        rows.push({ name, title: name, labels: ["", ""], unit: "", ratio: Number.NaN, ratios: [], rate: [0, 0], p99: [0, 0], rssMb: [0, 0], error: message });
        console.log(`${name}: failed: ${message}`);
      }
      await servers.stopAllBut(new Set(names.slice(i + 1).flatMap((later) => needs[later])));
    }
  } finally {
    await servers.close();
  }
  console.log("");
  printTable(rows);
  console.log("");
  console.log(ratiosLine(rows.map((r) => [r.name, r.error ? undefined : r.ratio])));
  return rows.every((r) => !r.error);
}
