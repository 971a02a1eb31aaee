import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createConnectRouter, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Mode, ServerInfoService } from "../../gen/service/verify/v2/server_info_pb.ts";
import { routes } from "../../src/rpc/routes.ts";
import { setupClients } from "../support/certificate-rpc.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import type { FuzzCase } from "../support/fuzz-case.ts";
import { FuzzFindings } from "../support/fuzz-findings.ts";
import { prepareFuzzTarget, type FuzzTarget } from "../support/fuzz-target.ts";
import { judge } from "../support/fuzz-verdict.ts";
import { nestedJsonCase } from "../support/nested-json-cases.ts";
import { oidcCase } from "../support/oidc-fuzz-cases.ts";
import { pageCase } from "../support/page-fuzz-cases.ts";
import { RawClient } from "../support/raw-client.ts";
import { rpcCase } from "../support/rpc-fuzz-cases.ts";
import { generatedProcedures } from "../support/rpc-procedures.ts";
import { SeededRandom } from "../support/seeded-random.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Bounded, seeded fuzzing of every way in: each RPC procedure found in gen/
 * (Connect binary, JSON and GET, gRPC, gRPC-Web; HTTP/1.1 and h2c), each
 * OpenID Connect endpoint and each interaction page, with random and damaged
 * input. Bad input must get a 4xx (or a clean RPC error), never a 5xx, an
 * `internal`/`unknown` code, or an answer that shows the implementation.
 *
 * FUZZ_SEED changes the seed (printed with every failure); FUZZ_CASES=3,17
 * replays only those case numbers. Each case draws from its own stream
 * (seed, database, number), so a case is the same whatever else runs.
 */
const seed = process.env.FUZZ_SEED ?? "shomei-fuzz-1";
/** FUZZ_VERBOSE=1 prints how often each route answered each status, to see what the cases reach, and where the time goes. */
const verbose = process.env.FUZZ_VERBOSE === "1";
const onlyCases = process.env.FUZZ_CASES?.split(",").map((n) => Number(n.trim()));
/** Requests per database; PostgreSQL is slower per request, so it gets a smaller share of the time. */
const requestsPerDatabase = { sqlite: 6000, postgres: 2000 } as const;
const concurrency = 12;
const answerTimeoutMs = 10_000;
/** Small, so that oversize bodies are cheap to send. */
const maxBodyBytes = 16 * 1024;
/** Nested-JSON cases per database, sent to a server with the default body limit (1 MB). */
const nestedJsonCases = 16;
/**
 * The longest text JSON.parse may be given while a nested case is answered: the server's own small
 * documents (stored client metadata, say) are far shorter, and each case's nested JSON far longer.
 */
const parsedTextLimit = 64 * 1024;

const targets = await databaseTargets();
const procedures = await generatedProcedures();

function generateCase(target: FuzzTarget, random: SeededRandom): FuzzCase {
  const transport = random.pick(["http1", "h2c"] as const);
  return random.weighted<() => FuzzCase>([
    [60, () => rpcCase(target, random)],
    [28, () => oidcCase(target, random, transport)],
    [12, () => pageCase(target, random, transport)],
  ])();
}

interface RunResult {
  sent: number;
  statuses: Map<number | string, number>;
  findings: FuzzFindings;
}

async function fuzz(target: FuzzTarget, client: RawClient, database: string, count: number): Promise<RunResult> {
  const findings = new FuzzFindings();
  const statuses = new Map<number | string, number>();
  const indices = onlyCases ?? Array.from({ length: count }, (_, i) => i);
  let next = 0;
  let sent = 0;
  const routeStatuses = new Map<string, number>();
  const routeMs = new Map<string, number>();
  const worker = async () => {
    while (next < indices.length) {
      const caseIndex = indices[next++]!;
      const fuzzCase = generateCase(target, new SeededRandom(seed, database, caseIndex));
      sent++;
      const caseStarted = performance.now();
      try {
        const reply = await client.send(fuzzCase);
        statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
        if (verbose) {
          routeMs.set(fuzzCase.route, (routeMs.get(fuzzCase.route) ?? 0) + performance.now() - caseStarted);
          const key = `${fuzzCase.route} ${reply.status}`;
          routeStatuses.set(key, (routeStatuses.get(key) ?? 0) + 1);
        }
        const verdict = judge(fuzzCase, reply);
        if (verdict.problems.length) {
          const body = reply.body.toString("utf8");
          findings.add({ problem: verdict.problems.join(" + "), caseIndex, fuzzCase, status: reply.status, code: verdict.code, message: verdict.message, body });
        }
      } catch (error) {
        // No complete answer: a reset connection, a reset stream or a hang. Bad input must still be answered.
        const message = (error as Error).message;
        statuses.set("no answer", (statuses.get("no answer") ?? 0) + 1);
        findings.add({ problem: "no complete answer", caseIndex, fuzzCase, status: undefined, code: undefined, message, body: "" });
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  if (verbose) {
    console.log([...routeStatuses].sort().map(([key, n]) => `${key}: ${n}`).join("\n"));
    console.log([...routeMs].sort((a, b) => b[1] - a[1]).map(([route, ms]) => `${route}: ${Math.round(ms)} ms waiting in all`).join("\n"));
  }
  return { sent, statuses, findings };
}

/** Error lines of the server's log (levels error and fatal, written as labels), deduplicated by message and error text. */
function loggedErrors(server: TestServer): string[] {
  const seen = new Map<string, number>();
  for (const line of server.logs) {
    if (line.level !== "error" && line.level !== "fatal") continue;
    const err = line.err as { type?: string; message?: string } | undefined;
    const key = `${String(line.msg)}: ${err?.type ?? ""} ${String(err?.message ?? "").replace(/\d+/g, "#").slice(0, 160)}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  return [...seen].map(([key, n]) => `${key} (${n}x)`);
}

describe("fuzz: bad input never gets a 5xx or a glimpse of the implementation", () => {
  it("finds the RPC procedures in gen/, including every one the server registers", () => {
    const router = createConnectRouter();
    // routes() only keeps its dependencies for later calls, so empty stand-ins are enough to list what it registers.
    routes(router, { config: { mode: "mock" }, domain: { statusChecks: {}, extensions: [], events: {}, oidc: { issuer: "" } } } as unknown as Parameters<typeof routes>[1]);
    const registered = router.handlers.filter((h) => h.method.methodKind === "unary").map((h) => h.requestPath).sort();
    expect(registered.length).toBeGreaterThan(0);
    expect(procedures.map((p) => p.path).sort()).toEqual(expect.arrayContaining(registered));
  });

  for (const database of targets) {
    describe.skipIf(!!database.unavailable)(targetTitle(database), () => {
      let scratch: ScratchDatabase;
      let dataDir: string;
      let server: TestServer;
      let target: FuzzTarget;
      let client: RawClient;

      beforeAll(async () => {
        scratch = await database.create();
        dataDir = mkdtempSync(path.join(tmpdir(), "shomei-fuzz-"));
        server = await startTestServer(scratch.url, { dataDir, maxBodyBytes, sweepIntervalSeconds: 0 });
        target = await prepareFuzzTarget(server, dataDir, procedures);
        client = new RawClient(server.url, answerTimeoutMs);
      });

      afterAll(async () => {
        client?.close();
        await server?.close();
        await scratch?.drop();
        if (dataDir) rmSync(dataDir, { recursive: true, force: true });
      });

      const count = requestsPerDatabase[database.name];
      it(`answers ${onlyCases?.length ?? count} random and damaged requests without a 5xx, a failure code or internals`, async () => {
        const started = Date.now();
        const { sent, statuses, findings } = await fuzz(target, client, database.name, count);
        const histogram = [...statuses].sort((a, b) => String(a[0]).localeCompare(String(b[0]))).map(([s, n]) => `${s}: ${n}`).join(", ");
        console.log(`fuzz ${database.name}: seed ${JSON.stringify(seed)}, ${sent} requests in ${Date.now() - started} ms (${histogram})`);
        expect(sent).toBe(onlyCases?.length ?? count);

        const errors = loggedErrors(server);
        const placeholders = { TOKEN: target.apiToken, CLIENT_SECRET: target.clientSecret };
        const replay = (n: number) => `FUZZ_SEED=${JSON.stringify(seed)} FUZZ_CASES=${n} npx vitest run test/service/fuzz.test.ts (${database.name})`;
        const report = [
          `${findings.total} failing answers in ${findings.size} groups, ${database.name}, seed ${JSON.stringify(seed)} (replay with FUZZ_SEED=${JSON.stringify(seed)})`,
          findings.report(placeholders, replay),
          errors.length ? `server error log lines:\n${errors.map((e) => `   ${e}`).join("\n")}` : "",
        ].filter(Boolean).join("\n");
        expect(findings.size === 0 && errors.length === 0, report).toBe(true);
      }, 180_000);

      it(`answers ${nestedJsonCases} bodies of deeply nested JSON up to 1 MB with the limit's error, refused before JSON.parse reads them`, async () => {
        const limit = 1024 * 1024;
        const bigDir = mkdtempSync(path.join(tmpdir(), "shomei-fuzz-nested-"));
        const bigScratch = await database.create();
        const big = await startTestServer(bigScratch.url, { dataDir: bigDir, sweepIntervalSeconds: 0 });
        const bigClient = new RawClient(big.url, answerTimeoutMs);
        try {
          expect(big.config.maxBodyBytes).toBe(limit);
          const bigTarget = await prepareFuzzTarget(big, bigDir, procedures);
          const problems: string[] = [];
          for (let n = 0; n < nestedJsonCases; n++) {
            const { fuzzCase, expected } = nestedJsonCase(bigTarget, new SeededRandom(seed, database.name, "nested", n), limit);
            // What the nesting check spares the event loop is the parse itself: the server (in this process) must refuse
            // the body before JSON.parse is given it. The spy watches every JSON.parse while the case is answered.
            const parses = vi.spyOn(JSON, "parse");
            let reply: Awaited<ReturnType<RawClient["send"]>>;
            let longestParsed: number;
            try {
              reply = await bigClient.send(fuzzCase);
              longestParsed = Math.max(0, ...parses.mock.calls.map(([text]) => String(text).length));
            } finally {
              parses.mockRestore();
            }
            const answer = { status: reply.status, error: JSON.parse(reply.body.toString("utf8")) as unknown };
            if (JSON.stringify(answer) !== JSON.stringify(expected)) problems.push(`case ${n} (${fuzzCase.route}, ${fuzzCase.transport}, ${fuzzCase.description}): ${JSON.stringify(answer)}`);
            if (longestParsed >= parsedTextLimit) problems.push(`case ${n} (${fuzzCase.route}, ${fuzzCase.transport}, ${fuzzCase.description}): JSON.parse was given ${longestParsed} characters`);
          }
          expect(problems, `seed ${JSON.stringify(seed)}`).toEqual([]);
        } finally {
          bigClient.close();
          await big.close();
          await bigScratch.drop();
          rmSync(bigDir, { recursive: true, force: true });
        }
      }, 120_000);

      it("is still healthy afterwards: /healthz, and RPCs with and without a token", async () => {
        for (const transport of ["http1", "h2c"] as const) {
          const health = await client.send({ transport, method: "GET", path: "/healthz", headers: {} });
          expect(health.status).toBe(200);
          expect(JSON.parse(health.body.toString("utf8"))).toEqual({ status: "ok" });
        }
        const info = await createClient(ServerInfoService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" })).getServerInfo({});
        expect(info.mode).toBe(Mode.MOCK);
        const demoCertificateId = target.ids[0]!;
        const { certificate } = await setupClients(server, target.apiToken).certificates.getCertificate({ certificateId: demoCertificateId });
        expect(certificate?.id).toBe(demoCertificateId);
      });
    });
  }
});
