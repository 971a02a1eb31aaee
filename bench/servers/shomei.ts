/**
 * shomei in mock mode, a process of its own on a port of its choosing, with
 * what the comparisons need from its start-up banner and data directory: the
 * demo account's API token and certificate, the demo client's secret and
 * redirect_uri. Then 1,000 certificates and a history of status records
 * (bench/seed-batch.ts), so that checks read and write tables of a known size.
 */
import type { ChildProcess } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { start, stopProcess, temporaryDirectory } from "../harness.ts";
import { seedBatchCertificates } from "../seed-batch.ts";

export interface Shomei {
  child: ChildProcess;
  pid: number;
  /** http://127.0.0.1:<port>, also the issuer. */
  url: string;
  token: string;
  clientSecret: string;
  redirectUri: string;
  /** The demo account's 1,000 certificates. */
  certificateIds: string[];
  /** Ends the process and removes its data directory (the caller drops a PostgreSQL schema). */
  stop(): Promise<void>;
}

export const certificateCount = 1000;

export async function startShomei(databaseUrl: string, history: number): Promise<Shomei> {
  const dir = temporaryDirectory("shomei-bench-");
  const { child, output } = await start(
    process.execPath,
    [...profileArguments(), "bin/shomei.js", "serve", "--mode", "mock"],
    { PORT: "0", HOST: "127.0.0.1", SHOMEI_DATA_DIR: dir, DATABASE_URL: databaseUrl },
    /revoked one: \{"certificateId":"[0-9a-f-]+"\}[\s\S]*demo-client-secret/,
  );
  const url = /is listening on (http:\/\/[^\s]+)/.exec(output)![1]!;
  const certificateId = /certificate ([0-9a-f-]{36})\s+jpki_card_digital_signature/.exec(output)![1]!;
  const seeding = performance.now();
  const certificateIds = await seedBatchCertificates(databaseUrl, certificateId, certificateCount, history);
  const dialect = databaseUrl.startsWith("postgres") ? "PostgreSQL" : "SQLite";
  console.log(`  shomei on ${dialect}: ${certificateCount} certificates and ${history.toLocaleString("en")} status records written in ${((performance.now() - seeding) / 1000).toFixed(1)} s`);
  return {
    child,
    pid: child.pid!,
    url,
    token: readFileSync(path.join(dir, "demo-api-token"), "utf8").trim(),
    clientSecret: readFileSync(path.join(dir, "demo-client-secret"), "utf8").trim(),
    redirectUri: decodeURIComponent(/redirect_uri=([^&\s]+)/.exec(output)![1]!),
    certificateIds,
    stop: () => stopProcess(child).then(() => rmSync(dir, { recursive: true, force: true })),
  };
}

/** With BENCH_CPU_PROFILE_DIR, each shomei process writes a V8 CPU profile there when it stops (open it in Chrome's DevTools). */
function profileArguments(): string[] {
  const dir = process.env.BENCH_CPU_PROFILE_DIR;
  return dir ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(dir)}`] : [];
}
