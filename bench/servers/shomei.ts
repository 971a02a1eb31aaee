/**
 * shomei, a process of its own on a port of its choosing, built (dist/) and
 * started as `npm start` or an operator would.
 *
 * Production mode (what the comparisons measure): the run's CA (bench-ca.ts)
 * is the one trust anchor; an API account, its token, an OIDC client and a
 * user are made with the shomei CLI; the CA's good leaves are registered by
 * checking them by content over OCSP (which stores each leaf's OCSP answer).
 * Mock mode (an extra key only): the demo seed of `npm start`.
 *
 * Then 1,000 certificates and a history of status records
 * (bench/seed-batch.ts), so that checks read and write tables of a known size.
 */
import { spawnSync } from "node:child_process";
import { createHash, randomBytes, sign } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { processesPerServer, start, stopProcess, temporaryDirectory, type Instance } from "../harness.ts";
import { seedBatchCertificates } from "../seed-batch.ts";
import type { BenchCa } from "./bench-ca.ts";

export type ShomeiMode = "production" | "mock";

export interface Shomei {
  mode: ShomeiMode;
  /** http://127.0.0.1:<port> of the first process. */
  url: string;
  /** Every process of this server (the first one first), each on a port of its own, on the same database and issuer. */
  instances: Instance[];
  token: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  /** The user the OIDC comparisons sign in as. */
  login: { login: string; password: string };
  /** The account's 1,000 certificates. */
  certificateIds: string[];
  /** Ends the processes and removes the data directory (the caller drops a PostgreSQL schema). */
  stop(): Promise<void>;
}

export const certificateCount = 1000;
const accountName = "bench";
const clientId = "bench-client";
const redirectUri = "https://client.example/callback";
const user = { login: "bench-user", password: `pw-${randomBytes(9).toString("base64url")}` };

/** `shomei <args>` of the checkout at `root`, with the server's settings, its standard input `input`; its output. */
function cli(root: string, env: Record<string, string>, args: string[], input?: string): string {
  const run = spawnSync(process.execPath, [path.join(root, "bin/shomei.js"), ...args], { env: { ...process.env, ...env }, encoding: "utf8", ...(input === undefined ? {} : { input }) });
  if (run.status !== 0) throw new Error(`shomei ${args.join(" ")} failed: ${run.stderr}`);
  return run.stdout.trim();
}

async function rpc(url: string, token: string, procedure: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}/service.verify.v2.${procedure}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`${procedure} answered ${response.status}: ${JSON.stringify(json)}`);
  return json;
}

/** shomei as built in the checkout at `root` (this one, or a baseline's: see BENCH_BASELINE), its account, client and user made, seeded. */
export async function startShomei(databaseUrl: string, history: number, mode: ShomeiMode, ca: BenchCa, root = "."): Promise<Shomei> {
  const dir = temporaryDirectory("shomei-bench-");
  const env: Record<string, string> = { PORT: "0", HOST: "127.0.0.1", SHOMEI_DATA_DIR: dir, DATABASE_URL: databaseUrl, LOG_LEVEL: "warn" };
  let prepared: { token: string; clientSecret: string } | undefined;
  if (mode === "production") {
    Object.assign(env, { SHOMEI_MODE: "production", SHOMEI_TRUST_ANCHORS_FILE: ca.anchorsFile });
    cli(root, env, ["migrate"]);
    cli(root, env, ["account", "create", accountName]);
    cli(root, env, ["account", "start", accountName]);
    const token = cli(root, env, ["token", "create", accountName, "--name", "bench"]).split("\n").at(-1)!;
    const clientSecret = randomBytes(24).toString("base64url");
    cli(root, env, ["client", "add", "--metadata", JSON.stringify({
      client_id: clientId, client_secret: clientSecret, token_endpoint_auth_method: "client_secret_basic",
      redirect_uris: [redirectUri], scope: "openid profile email offline_access", grant_types: ["authorization_code", "refresh_token"],
    })]);
    cli(root, env, ["user", "create", user.login, "--name", "Bench User"], user.password);
    prepared = { token, clientSecret };
  }
  const ready = mode === "production" ? /is listening on http:\S+/ : /revoked one: \{"certificateId":"[0-9a-f-]+"\}[\s\S]*demo-client-secret/;
  const args = [...profileArguments(), path.join(root, "bin/shomei.js"), "serve", ...(mode === "mock" ? ["--mode", "mock"] : [])];
  const { child, output } = await start(process.execPath, args, env, ready);
  const url = listeningUrl(output);

  let template: string;
  let side: Pick<Shomei, "token" | "clientId" | "clientSecret" | "redirectUri" | "login">;
  if (prepared) {
    const registered = [];
    for (const leaf of ca.goodLeaves) {
      registered.push(await rpc(url, prepared.token, "CertificateService/CheckCertificateStatusByContent", { certificate: leaf.der.toString("base64"), checkMethod: "CHECK_METHOD_OCSP" }));
    }
    template = (registered[0]!.certificate as { id: string }).id;
    side = { token: prepared.token, clientId, clientSecret: prepared.clientSecret, redirectUri, login: user };
  } else {
    template = /certificate ([0-9a-f-]{36})\s+jpki_card_digital_signature/.exec(output)![1]!;
    side = {
      token: readFileSync(path.join(dir, "demo-api-token"), "utf8").trim(),
      clientId: "demo-client",
      clientSecret: readFileSync(path.join(dir, "demo-client-secret"), "utf8").trim(),
      redirectUri: decodeURIComponent(/redirect_uri=([^&\s]+)/.exec(output)![1]!),
      login: { login: "demo", password: "demo-password" },
    };
  }
  const seeding = performance.now();
  const account = mode === "production" ? accountName : "demo";
  const certificateIds = await seedBatchCertificates(databaseUrl, account, template, certificateCount, history, mode === "mock");
  const dialect = databaseUrl.startsWith("postgres") ? "PostgreSQL" : "SQLite";
  console.log(`  shomei (${mode}) on ${dialect}: ${certificateCount} certificates and ${history.toLocaleString("en")} status records written in ${((performance.now() - seeding) / 1000).toFixed(1)} s`);
  // The other processes serve the same database as instances of one deployment do: one issuer for all of
  // them (the first's), so that a session, a code or a token one of them made is good at every other.
  const children = [child];
  const instances: Instance[] = [{ url, pid: child.pid! }];
  const issuer = /issuer \/ base URL: (\S+)/.exec(output)![1]!;
  for (let i = 1; i < processesPerServer; i++) {
    const more = await start(process.execPath, args, { ...env, BASE_URL: issuer }, ready);
    children.push(more.child);
    instances.push({ url: listeningUrl(more.output), pid: more.child.pid! });
  }
  return {
    mode,
    url,
    instances,
    ...side,
    certificateIds,
    stop: async () => {
      await Promise.all(children.map(stopProcess));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Where `shomei serve` says it listens, from what it printed. */
function listeningUrl(output: string): string {
  return /is listening on (http:\/\/[^\s]+)/.exec(output)![1]!;
}

/** Verify request bodies as an eKYC back end sends them: each good leaf of the CA, the SHA-256 digest of a document and the card-style signature (RSA PKCS#1 v1.5) over it. */
export function verifyBodies(ca: BenchCa): string[] {
  const document = Buffer.from("a document the user signed with a My Number card");
  const digest = createHash("sha256").update(document).digest("base64");
  return ca.goodLeaves.map((leaf) =>
    JSON.stringify({
      certificate: leaf.der.toString("base64"),
      hashAlgorithm: "HASH_ALGORITHM_SHA256",
      digest,
      signature: sign("sha256", document, leaf.privateKeyPem).toString("base64"),
      identifyUser: true,
    }),
  );
}

/** With BENCH_CPU_PROFILE_DIR, each shomei process writes a V8 CPU profile there when it stops (open it in Chrome's DevTools). */
function profileArguments(): string[] {
  const dir = process.env.BENCH_CPU_PROFILE_DIR;
  return dir ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(dir)}`] : [];
}
