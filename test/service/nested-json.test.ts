import { mkdtempSync, rmSync } from "node:fs";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedOidcDemo, type OidcDemo } from "../../src/app/mock/oidc-demo-seed.ts";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { basicAuthorization, postPar, pkce } from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const sqlite = (await databaseTargets()).find((t) => t.name === "sqlite")!;
const procedurePath = "/service.verify.v2.ServerInfoService/GetServerInfo";
/** The budget: no one request may hold the event loop longer than this. */
const budgetMs = 20;

/** `[[[…]]]` nested `depth` deep. */
function nestedArrays(depth: number): string {
  return "[".repeat(depth) + "]".repeat(depth);
}

/** A GetServerInfoRequest of about 1 MB (the default body limit) whose only field holds arrays nested ~500,000 deep. */
const nestedRpcBody = Buffer.from(`{"x":${nestedArrays(524_000)}}`);

/**
 * The longest the event loop was held while `send` ran (the server runs in this process), the best of
 * five tries: a busy machine's hiccups only ever add to a try, a stall of the server's is in each.
 */
async function eventLoopHeldMs<T>(send: () => Promise<T>): Promise<{ heldMs: number; tries: string; answers: T[] }> {
  const tries: number[] = [];
  const answers: T[] = [];
  for (let i = 0; i < 5; i++) {
    const histogram = monitorEventLoopDelay({ resolution: 1 });
    histogram.enable();
    answers.push(await send());
    histogram.disable();
    tries.push(histogram.max / 1e6);
  }
  return { heldMs: Math.min(...tries), tries: tries.map((ms) => `${ms.toFixed(1)} ms`).join(", "), answers };
}

describe("deeply nested JSON is refused before it is parsed", () => {
  let scratch: ScratchDatabase;
  let dataDir: string;
  let server: TestServer;
  let demo: OidcDemo;

  beforeAll(async () => {
    scratch = await sqlite.create();
    dataDir = mkdtempSync(path.join(tmpdir(), "shomei-nested-"));
    server = await startTestServer(scratch.url, { dataDir, sweepIntervalSeconds: 0 });
    demo = await seedOidcDemo(server.domain.oidc, dataDir, Date.now());
  });

  afterAll(async () => {
    await server?.close();
    await scratch?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const refusal = { code: "invalid_argument", message: "the JSON request nests arrays and objects more than 64 levels deep" };

  const h2c = (body: Buffer) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const session = http2.connect(server.url);
      session.on("error", reject);
      const stream = session.request({ ":method": "POST", ":path": procedurePath, "content-type": "application/json" });
      let status = 0;
      let text = "";
      stream.setEncoding("utf8");
      stream.on("response", (h) => (status = Number(h[":status"])));
      stream.on("data", (chunk: string) => (text += chunk));
      stream.on("end", () => {
        session.close();
        resolve({ status, body: text });
      });
      stream.on("error", reject);
      stream.end(body);
    });

  const rpcCases: [string, () => Promise<{ status: number; body: string }>][] = [
    [
      "Connect JSON with a Content-Length over HTTP/1.1 (the unary fast path)",
      async () => {
        const response = await fetch(server.url + procedurePath, { method: "POST", headers: { "content-type": "application/json" }, body: nestedRpcBody });
        return { status: response.status, body: await response.text() };
      },
    ],
    ["Connect JSON without a length over h2c (the router)", () => h2c(nestedRpcBody)],
    [
      "Connect JSON gzip-compressed (the router, after decompression)",
      async () => {
        const response = await fetch(server.url + procedurePath, {
          method: "POST",
          headers: { "content-type": "application/json", "content-encoding": "gzip" },
          body: gzipSync(nestedRpcBody),
        });
        return { status: response.status, body: await response.text() };
      },
    ],
  ];
  for (const [name, send] of rpcCases) {
    it(`GetServerInfo (no token needed), ${name}: invalid_argument, the event loop held under ${budgetMs} ms`, async () => {
      const { heldMs, tries, answers } = await eventLoopHeldMs(send);
      for (const answer of answers) {
        expect(answer.status).toBe(400);
        expect(JSON.parse(answer.body)).toEqual(refusal);
      }
      expect(heldMs, `longest hold per try: ${tries}`).toBeLessThan(budgetMs);
    });
  }

  it("a message nested 64 deep is still parsed and judged by its fields", async () => {
    const response = await fetch(server.url + procedurePath, { method: "POST", headers: { "content-type": "application/json" }, body: `{"x":${nestedArrays(63)}}` });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string }).message).not.toMatch(/levels deep/);
  });

  it(`PAR with a megabyte form of nested authorization_details: invalid_request, the event loop held under ${budgetMs} ms`, async () => {
    // Form-encoded, each bracket takes three bytes: the body is just under the 1 MB limit.
    const details = nestedArrays(174_000);
    const form = new URLSearchParams({
      response_type: "code",
      redirect_uri: demo.redirectUri,
      scope: "openid",
      code_challenge: pkce().challenge,
      code_challenge_method: "S256",
      authorization_details: details,
    });
    expect(form.toString().length).toBeGreaterThan(1_000_000);
    expect(form.toString().length).toBeLessThan(server.config.maxBodyBytes);
    const body = form.toString();
    const headers = { authorization: basicAuthorization(demo.clientId, demo.clientSecret), "content-type": "application/x-www-form-urlencoded" };
    const { heldMs, tries, answers } = await eventLoopHeldMs(() => postPar(server, body, headers));
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(answer.json).toEqual({ error: "invalid_request", error_description: "authorization_details nests arrays and objects more than 64 levels deep" });
    }
    expect(heldMs, `longest hold per try: ${tries}`).toBeLessThan(budgetMs);
  });
});
