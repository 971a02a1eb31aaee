/**
 * `npm run bench -- ocsp`: CheckCertificateStatus answered by OCSP from a
 * stored response (no request to the responder) and by a CRL lookup, as
 * ratios to a bare node:http JSON handler measured in the same run. A CA made
 * with openssl, `openssl ocsp` on loopback, its CRL on a loopback HTTP server,
 * shomei in production mode with the CA as trust anchor (SQLite, or
 * BENCH_DATABASE_URL). Ends with one JSON line:
 *
 *   {"ocsp":{"cachedOcsp":<ratio>,"crlLookup":<ratio>|null,"crlSkipped":<reason>|undefined}}
 *
 * The CRL scenario needs a CRL loader that accepts the list: where the
 * checks answer unavailable, it is skipped and says why.
 */
import { spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { CrlHttpServer } from "../test/support/crl-http-server.ts";
import { OcspProxy } from "../test/support/ocsp-proxy.ts";
import { OpensslCrlCa } from "../test/support/openssl-crl-ca.ts";
import { OpensslOcspResponder, responderCertificate } from "../test/support/openssl-ocsp.ts";
import { baselineSource, connections, load, seconds, start, type Scenario } from "./harness.ts";

const policy = "1.2.392.200149.8.5.1.1.20";
const port = 18192;
const dir = mkdtempSync(path.join(tmpdir(), "shomei-bench-ocsp-"));
const children: ChildProcess[] = [];
const http = new CrlHttpServer();
let responder: OpensslOcspResponder | undefined;
/** Counts the requests that reach the responder. */
const proxy = new OcspProxy(undefined);

/** `shomei <args>` on the bench's database, for the account and its token. */
function cli(env: Record<string, string>, ...args: string[]): string {
  const run = spawnSync(process.execPath, ["bin/shomei.js", ...args], { env: { ...process.env, ...env }, encoding: "utf8" });
  if (run.status !== 0) throw new Error(`shomei ${args.join(" ")} failed: ${run.stderr}`);
  return run.stdout.trim();
}

async function call(procedure: string, token: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${port}/service.verify.v2.CertificateService/${procedure}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

try {
  mkdirSync(path.join(dir, "ca"));
  await http.start();
  const ca = new OpensslCrlCa(path.join(dir, "ca"), "bench OCSP CA");
  responder = new OpensslOcspResponder(ca, responderCertificate(dir, "responder", ca), { nextUpdateMinutes: 24 * 60 });
  const leaf = ca.issue("bench", http.url("/ca.crl"), policy, "http://127.0.0.1:1/unused");
  http.publish("/ca.crl", ca.gencrl().der);
  await responder.start();
  await proxy.start();
  proxy.upstream = responder.url;
  const issues = [{ type: "jpki_card_digital_signature", policyOid: policy, keyUsage: ["digitalSignature", "nonRepudiation"] }];
  const anchors = [{ name: "bench OCSP CA", certificates: "ca/ca.pem", issues, ocspUrls: [proxy.url] }];
  writeFileSync(path.join(dir, "anchors.json"), JSON.stringify({ anchors }));
  const env = {
    SHOMEI_MODE: "production",
    PORT: String(port),
    HOST: "127.0.0.1",
    LOG_LEVEL: "info",
    SHOMEI_DATA_DIR: dir,
    DATABASE_URL: process.env.BENCH_DATABASE_URL ?? `sqlite:${dir}/bench.db`,
    SHOMEI_TRUST_ANCHORS_FILE: path.join(dir, "anchors.json"),
  };
  cli(env, "migrate");
  cli(env, "account", "create", "bench");
  cli(env, "account", "start", "bench");
  const token = cli(env, "token", "create", "bench", "--name", "bench").split("\n").at(-1)!;

  const baseline = await start(process.execPath, ["-e", baselineSource], {}, /ready/);
  children.push(baseline.child);
  const server = await start(process.execPath, ["bin/shomei.js", "serve"], { ...env, LOG_LEVEL: "warn" }, /listening/);
  children.push(server.child);

  // Registers the certificate, and stores its OCSP response: later OCSP checks ask no responder.
  const registered = await call("CheckCertificateStatusByContent", token, { certificate: leaf.der.toString("base64"), checkMethod: "CHECK_METHOD_OCSP" });
  if (registered.status !== 200) throw new Error(`the OCSP check failed: ${JSON.stringify(registered.json)}`);
  const certificateId = (registered.json.certificate as { id: string }).id;
  const crlProbe = await call("CheckCertificateStatus", token, { certificateId, checkMethod: "CHECK_METHOD_CRL" });
  const crlSkipped = crlProbe.status === 200 ? undefined : `CRL checks answer ${String(crlProbe.json.code)}: ${String(crlProbe.json.message)}`;

  const json = { "content-type": "application/json" };
  const checkBy = (method: string): Scenario => ({
    name: `CheckCertificateStatus by ${method}`,
    port,
    method: "POST",
    path: "/service.verify.v2.CertificateService/CheckCertificateStatus",
    headers: { ...json, authorization: `Bearer ${token}` },
    body: JSON.stringify({ certificateId, checkMethod: `CHECK_METHOD_${method}` }),
  });
  console.log(`${connections} connections, ${seconds} s per scenario, ${env.DATABASE_URL.startsWith("postgres") ? "PostgreSQL" : "SQLite"}\n`);
  const base = await load({ name: "baseline", port: 18190, method: "POST", path: "/", headers: json, body: "{}" });
  const line = (name: string, rate: number) => console.log(`${name.padEnd(45)} ${rate.toFixed(0).padStart(7)} req/s   ${(rate / base).toFixed(4)} × baseline`);
  line("baseline: bare node:http JSON", base);
  const before = proxy.requests;
  const ocsp = await load(checkBy("OCSP"));
  line("CheckCertificateStatus, cached OCSP answer", ocsp);
  let crl: number | undefined;
  if (crlSkipped) console.log(`CheckCertificateStatus, CRL lookup: skipped (${crlSkipped})`);
  else line("CheckCertificateStatus, CRL lookup", (crl = await load(checkBy("CRL"))));
  if (proxy.requests !== before) throw new Error("the OCSP scenario asked the responder: it did not measure cached answers");
  console.log(JSON.stringify({ ocsp: { cachedOcsp: round(ocsp / base), crlLookup: crl === undefined ? null : round(crl / base), crlSkipped } }));
} finally {
  for (const child of children) child.kill("SIGTERM");
  await proxy.close();
  await responder?.stop();
  await http.close();
  rmSync(dir, { recursive: true, force: true });
}

function round(ratio: number): number {
  return Math.round(ratio * 10_000) / 10_000;
}
