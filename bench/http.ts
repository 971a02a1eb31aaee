/**
 * Throughput of shomei's main paths against a bare node:http JSON handler,
 * measured in the same run by the same load generator (machines are noisy:
 * read the ratios, not the absolute numbers).
 *
 *   npm run bench              # 5 s per scenario, 32 connections
 *   BENCH_SECONDS=10 BENCH_CONNECTIONS=64 npm run bench
 */
import { spawn, type ChildProcess } from "node:child_process";
import http from "node:http";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);

interface Scenario {
  name: string;
  port: number;
  method: "GET" | "POST";
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

function start(command: string, args: string[], env: Record<string, string>, ready: RegExp): Promise<{ child: ChildProcess; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready.test(output)) resolve({ child, output });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`${command} exited with ${code}:\n${output}`)));
  });
}

async function load(s: Scenario): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const deadline = Date.now() + seconds * 1000;
  let done = 0;
  let failed = 0;
  const one = () =>
    new Promise<void>((resolve) => {
      const req = http.request({ host: "127.0.0.1", port: s.port, method: s.method, path: s.path, headers: s.headers, agent }, (res) => {
        res.resume();
        res.on("end", () => {
          if (res.statusCode! >= 200 && res.statusCode! < 300) done++;
          else failed++;
          resolve();
        });
      });
      req.on("error", () => {
        failed++;
        resolve();
      });
      req.end(s.body);
    });
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < deadline) await one();
    }),
  );
  agent.destroy();
  if (failed) throw new Error(`${s.name}: ${failed} requests failed`);
  return done / seconds;
}

const baselineSource = `require("node:http").createServer((q, r) => { q.resume(); q.on("end", () => { const b = JSON.stringify({ name: "shomei", ok: true }); r.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(b) }); r.end(b); }); }).listen(18190, "127.0.0.1", () => console.log("ready"));`;

const dir = mkdtempSync(path.join(tmpdir(), "shomei-bench-"));
const children: ChildProcess[] = [];
try {
  const baseline = await start(process.execPath, ["-e", baselineSource], {}, /ready/);
  children.push(baseline.child);
  const server = await start(
    process.execPath,
    ["bin/shomei.js", "serve", "--mode", "mock"],
    { PORT: "18191", HOST: "127.0.0.1", LOG_LEVEL: "warn", SHOMEI_DATA_DIR: dir, DATABASE_URL: `sqlite:${dir}/bench.db` },
    /revoked one: \{"certificateId":"[0-9a-f-]+"\}/,
  );
  children.push(server.child);
  const token = readFileSync(path.join(dir, "demo-api-token"), "utf8").trim();
  const clientSecret = readFileSync(path.join(dir, "demo-client-secret"), "utf8").trim();
  const certificateId = /certificate ([0-9a-f-]{36})\s+jpki_card_digital_signature/.exec(server.output)![1]!;
  const json = { "content-type": "application/json" };
  const scenarios: Scenario[] = [
    { name: "baseline: bare node:http JSON", port: 18190, method: "POST", path: "/", headers: json, body: "{}" },
    { name: "GET /healthz (Express)", port: 18191, method: "GET", path: "/healthz" },
    { name: "GetServerInfo (Connect JSON, no auth)", port: 18191, method: "POST", path: "/service.verify.v2.ServerInfoService/GetServerInfo", headers: json, body: "{}" },
    {
      name: "CheckCertificateStatus (auth, read, write)",
      port: 18191,
      method: "POST",
      path: "/service.verify.v2.CertificateService/CheckCertificateStatus",
      headers: { ...json, authorization: `Bearer ${token}` },
      body: JSON.stringify({ certificateId }),
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
  console.log(`${connections} connections, ${seconds} s per scenario, SQLite\n`);
  let base = 0;
  for (const s of scenarios) {
    const rate = await load(s);
    base ||= rate;
    console.log(`${s.name.padEnd(45)} ${rate.toFixed(0).padStart(7)} req/s   ${(rate / base).toFixed(3)} × baseline`);
  }
} finally {
  for (const child of children) child.kill("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
}
