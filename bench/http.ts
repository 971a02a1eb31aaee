/**
 * Throughput of shomei's main paths against a bare node:http JSON handler,
 * measured in the same run by the same load generator (machines are noisy:
 * read the ratios, not the absolute numbers). Then the cost of one
 * BatchCheckCertificateStatus of 1,000 ids in single CheckCertificateStatus
 * calls (the aim: under 50).
 *
 *   npm run bench                             # 5 s per scenario, 32 connections, SQLite
 *   BENCH_SECONDS=10 BENCH_CONNECTIONS=64 npm run bench
 *   BENCH_SCENARIOS=Check npm run bench       # only scenarios whose name matches (the baseline always runs)
 *   BENCH_HISTORY=1000000 npm run bench       # status records written before measuring (default 200,000)
 *   BENCH_ROUNDS=5 npm run bench              # alternating single/batch rounds of the cost comparison (default 3)
 *   BENCH_DATABASE_URL='postgres://…/test?options=-c%20search_path%3Dbench' npm run bench   # an empty database or schema
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { verifyRequestBody } from "./verify-request.ts";
import { seedBatchCertificates } from "./seed-batch.ts";
import { baselineSource, connections, load, seconds, start, type Scenario } from "./harness.ts";

const only = process.env.BENCH_SCENARIOS ? new RegExp(process.env.BENCH_SCENARIOS) : undefined;
const history = Number(process.env.BENCH_HISTORY ?? 200_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const batchSize = 1000;
const singleCheck = `CheckCertificateStatus (${batchSize.toLocaleString("en")} certs in turn)`;
const batchCheck = `BatchCheckCertificateStatus (${batchSize.toLocaleString("en")} ids)`;

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
  const token = readFileSync(path.join(dir, "demo-api-token"), "utf8").trim();
  const clientSecret = readFileSync(path.join(dir, "demo-client-secret"), "utf8").trim();
  const certificateId = /certificate ([0-9a-f-]{36})\s+jpki_card_digital_signature/.exec(server.output)![1]!;
  const json = { "content-type": "application/json" };
  const batchIds = await seedBatchCertificates(databaseUrl, certificateId, batchSize, history);
  const verifyBody = await verifyRequestBody("http://127.0.0.1:18191", token);
  let turn = 0;
  const scenarios: Scenario[] = [
    { name: "baseline: bare node:http JSON", port: 18190, method: "POST", path: "/", headers: json, body: "{}" },
    { name: "GET /healthz (Express)", port: 18191, method: "GET", path: "/healthz" },
    { name: "GetServerInfo (Connect JSON, no auth)", port: 18191, method: "POST", path: "/service.verify.v2.ServerInfoService/GetServerInfo", headers: json, body: "{}" },
    {
      name: singleCheck,
      port: 18191,
      method: "POST",
      path: "/service.verify.v2.CertificateService/CheckCertificateStatus",
      headers: { ...json, authorization: `Bearer ${token}` },
      // The certificates the batch checks, one per call: checking one certificate over and over would write
      // to the same index pages every time, which no real workload does and which flatters single calls.
      body: () => JSON.stringify({ certificateId: batchIds[turn++ % batchIds.length] }),
    },
    {
      name: batchCheck,
      port: 18191,
      method: "POST",
      path: "/service.verify.v2.CertificateService/BatchCheckCertificateStatus",
      headers: { ...json, authorization: `Bearer ${token}` },
      body: JSON.stringify({ certificateIds: batchIds }),
    },
    {
      name: "Verify (RSA PKCS#1 v1.5, identifyUser)",
      port: 18191,
      method: "POST",
      path: "/service.verify.v2.VerificationService/Verify",
      headers: { ...json, authorization: `Bearer ${token}` },
      body: verifyBody,
    },
    { name: "GET /.well-known/openid-configuration", port: 18191, method: "GET", path: "/.well-known/openid-configuration" },
    { name: "GET /api/oidc/v1/jwks", port: 18191, method: "GET", path: "/api/oidc/v1/jwks" },
    {
      name: "PAR (client_secret_basic, validate, write)",
      port: 18191,
      method: "POST",
      path: "/api/oidc/v1/par",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${Buffer.from(`demo-client:${clientSecret}`).toString("base64")}`,
      },
      body: new URLSearchParams({
        response_type: "code",
        redirect_uri: decodeURIComponent(/redirect_uri=([^&\s]+)/.exec(server.output)![1]!),
        scope: "openid profile",
        state: "bench",
        code_challenge: "GdmGSxfPo_kyG3zHGwdmVpxCf9hgm2J8na5PZXhtDBM",
        code_challenge_method: "S256",
      }).toString(),
    },
  ];
  const dialect = databaseUrl.startsWith("postgres") ? "PostgreSQL" : "SQLite";
  console.log(`${connections} connections, ${seconds} s per scenario, ${dialect}, ${history} status records before the run\n`);
  let base = 0;
  const measured = new Set<string>();
  for (const s of scenarios.filter((s, i) => i === 0 || !only || only.test(s.name))) {
    const rate = await load(s);
    base ||= rate;
    measured.add(s.name);
    console.log(`${s.name.padEnd(45)} ${rate.toFixed(rate < 100 ? 1 : 0).padStart(7)} req/s   ${(rate / base).toFixed(4)} × baseline`);
  }
  if (measured.has(singleCheck) && measured.has(batchCheck)) {
    // The cost of a call is the inverse of its throughput under the same load. Machines are noisy and every
    // check adds a status record, so the two are measured alternately, a few rounds, and the median is kept.
    const single = scenarios.find((s) => s.name === singleCheck)!;
    const batch = scenarios.find((s) => s.name === batchCheck)!;
    const ratios: number[] = [];
    for (let round = 0; round < rounds; round++) ratios.push((await load(single)) / (await load(batch)));
    ratios.sort((x, y) => x - y);
    console.log(
      `\none batch of ${batchSize} ids costs as much as ${ratios[Math.floor(rounds / 2)]!.toFixed(1)} single CheckCertificateStatus calls ` +
        `(median of ${rounds} alternating rounds, range ${ratios[0]!.toFixed(1)} to ${ratios.at(-1)!.toFixed(1)}; aim: under 50)`,
    );
  }
} finally {
  for (const child of children) child.kill("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
}
