/**
 * `npm run bench -- http`: the paths no comparison covers (Express,
 * discovery, JWKS, an unauthenticated RPC), as ratios to a bare
 * node:http JSON handler measured in the same run by the same load generator.
 * CheckCertificateStatus, batch checks and the OpenID Connect flows are
 * measured against their real peers by bench/compare.ts.
 *
 *   BENCH_SECONDS=10 BENCH_CONNECTIONS=64 npm run bench -- http
 *   BENCH_DATABASE_URL='postgres://…/test?options=-c%20search_path%3Dbench' npm run bench -- http   # an empty database or schema
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { baselineSource, connections, load, seconds, start, stopProcess, type Scenario } from "./harness.ts";

const dir = mkdtempSync(path.join(tmpdir(), "shomei-bench-"));
const children: ChildProcess[] = [];
try {
  const baseline = await start(process.execPath, ["-e", baselineSource], {}, /ready/);
  children.push(baseline.child);
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? `sqlite:${dir}/bench.db`;
  const server = await start(
    process.execPath,
    ["bin/shomei.js", "serve", "--mode", "mock"],
    { PORT: "18191", HOST: "127.0.0.1", LOG_LEVEL: "warn", SHOMEI_DATA_DIR: dir, DATABASE_URL: databaseUrl },
    /revoked one: \{"certificateId":"[0-9a-f-]+"\}/,
  );
  children.push(server.child);
  const json = { "content-type": "application/json" };
  const scenarios: Scenario[] = [
    { name: "baseline: bare node:http JSON", port: 18190, method: "POST", path: "/", headers: json, body: "{}" },
    { name: "GET /healthz (Express)", port: 18191, method: "GET", path: "/healthz" },
    { name: "GetServerInfo (Connect JSON, no auth)", port: 18191, method: "POST", path: "/service.verify.v2.ServerInfoService/GetServerInfo", headers: json, body: "{}" },
    { name: "GET /.well-known/openid-configuration", port: 18191, method: "GET", path: "/.well-known/openid-configuration" },
    { name: "GET /api/oidc/v1/jwks", port: 18191, method: "GET", path: "/api/oidc/v1/jwks" },
  ];
  const dialect = databaseUrl.startsWith("postgres") ? "PostgreSQL" : "SQLite";
  console.log(`${connections} connections, ${seconds} s per scenario, ${dialect}\n`);
  let base = 0;
  for (const s of scenarios) {
    const rate = await load(s);
    base ||= rate;
    console.log(`${s.name.padEnd(45)} ${rate.toFixed(rate < 100 ? 1 : 0).padStart(7)} req/s   ${(rate / base).toFixed(4)} × baseline`);
  }
} finally {
  for (const child of children) await stopProcess(child);
  rmSync(dir, { recursive: true, force: true });
}
