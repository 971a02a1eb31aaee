import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { exportJWK, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postClientForm } from "./support/api-oauth.ts";
import { clientAssertion } from "./support/oidc.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

/*
 * `shomei account oauth-client add|list|remove`: an operator registers an
 * account's OAuth clients; a server on the same database issues their tokens.
 */
const root = fileURLToPath(new URL("..", import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let dir: string;
let databaseUrl: string;
let server: TestServer;

function shomei(...args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["bin/shomei.js", ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", HOME: dir, SHOMEI_DATA_DIR: path.join(dir, "data"), DATABASE_URL: databaseUrl },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The value of a "name value" line of the output. */
function line(output: string, name: string): string {
  const found = output.split("\n").find((l) => l.startsWith(`${name} `));
  expect(found, `${name} in ${output}`).toBeDefined();
  return found!.slice(name.length + 1);
}

describe("shomei account oauth-client", () => {
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "shomei-cli-oauth-"));
    databaseUrl = `sqlite://${path.join(dir, "shomei.db")}`;
    expect(await shomei("migrate")).toMatchObject({ code: 0 });
    server = await startTestServer(databaseUrl);
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("adds a client_secret_basic client whose secret is shown once, lists it, and removes it", async () => {
    expect(await shomei("account", "create", "cli-oauth-a", "--start")).toMatchObject({ code: 0 });

    const added = await shomei("account", "oauth-client", "add", "cli-oauth-a", "--scope", "certificate.status verify", "--name", "nightly job");

    expect(added).toMatchObject({ code: 0, stderr: expect.stringContaining('scope "certificate.status verify"') });
    const client = { clientId: line(added.stdout, "client_id"), secret: line(added.stdout, "client_secret") };
    expect(await postClientForm(server, "token", client, { grant_type: "client_credentials" })).toMatchObject({ status: 200, body: { scope: "certificate.status verify" } });
    const listed = await shomei("account", "oauth-client", "list", "cli-oauth-a");
    expect(listed.stdout).toContain(`${client.clientId}\tnightly job\tclient_secret_basic\tcertificate.status verify\t-\t`);
    expect(listed.stdout).not.toContain(client.secret);

    expect(await shomei("account", "oauth-client", "remove", "cli-oauth-a", client.clientId)).toMatchObject({ code: 0 });

    expect(await postClientForm(server, "token", client, { grant_type: "client_credentials" })).toMatchObject({ status: 401, body: { error: "invalid_client" } });
    expect((await shomei("account", "oauth-client", "list", "cli-oauth-a")).stdout).toBe("");
  });

  it("adds a private_key_jwt client from a JWK Set file", async () => {
    expect(await shomei("account", "create", "cli-oauth-b", "--start")).toMatchObject({ code: 0 });
    const { privateKey, publicKey } = await generateKeyPair("ES256");
    const file = path.join(dir, "jwks.json");
    writeFileSync(file, JSON.stringify({ keys: [await exportJWK(publicKey)] }));

    const added = await shomei("account", "oauth-client", "add", "cli-oauth-b", "--jwks", file, "--dpop");

    expect(added).toMatchObject({ code: 0, stderr: expect.stringContaining("private_key_jwt") });
    expect(added.stdout).not.toContain("client_secret");
    const clientId = line(added.stdout, "client_id");
    const answer = await fetch(`${server.url}/api/oidc/v1/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        client_assertion: await clientAssertion(privateKey, clientId, server.config.baseUrl),
      }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
    // --dpop: a token request without a proof is refused.
    expect(answer).toMatchObject({ status: 400, body: { error: "invalid_dpop_proof" } });
  });

  it("refuses another account's client, an unknown account and a bad scope, exit status 1 or 2", async () => {
    expect(await shomei("account", "create", "cli-oauth-c", "--start")).toMatchObject({ code: 0 });
    expect(await shomei("account", "create", "cli-oauth-d", "--start")).toMatchObject({ code: 0 });
    const clientId = line((await shomei("account", "oauth-client", "add", "cli-oauth-c")).stdout, "client_id");

    expect(await shomei("account", "oauth-client", "remove", "cli-oauth-d", clientId)).toMatchObject({ code: 1, stderr: `shomei account: no OAuth client ${clientId} for this account\n` });
    expect(await shomei("account", "oauth-client", "list", "no-such-account")).toMatchObject({ code: 1, stderr: 'shomei account: no account named "no-such-account"\n' });
    expect(await shomei("account", "oauth-client", "add", "cli-oauth-c", "--scope", "openid")).toMatchObject({ code: 1, stderr: expect.stringContaining('unknown scope "openid"') });
    expect(await shomei("account", "oauth-client", "add", "cli-oauth-c", "--method", "none")).toMatchObject({ code: 2 });
    expect((await shomei("account", "oauth-client", "list", "cli-oauth-c")).stdout.trim().split("\n")).toHaveLength(1);
  });
});
