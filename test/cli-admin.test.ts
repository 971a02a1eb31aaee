import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { CertificateStatus_Status as Status, Certificate_Type as CertificateType, CrlReason } from "../gen/service/verify/v2/certificate_pb.ts";
import { EventService } from "../gen/service/verify/v2/event_service_pb.ts";
import { applyClientsFile } from "../src/adapters/files/clients-file.ts";
import { bearer, expectRpcError, setupClients, stackTracePattern } from "./support/certificate-rpc.ts";
import { WebhookReceiver } from "./support/webhook-receiver.ts";
import { startTestServer, type TestServer } from "./support/server.ts";
import { mockOf } from "../src/app/mock/installed-mock.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const tokenPattern = /^shm_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/;
const stackFrame = /^\s+at /m;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let dir: string;
let databaseUrl: string;
const running = new Set<ChildProcess>();

/** `node bin/shomei.js …` with only PATH, HOME, the data directory and DATABASE_URL in its environment. */
function shomei(...args: string[]): Promise<Run> {
  return run({}, undefined, args);
}

/** The same, with `input` on standard input (a password, say). */
function shomeiWithInput(input: string | undefined, ...args: string[]): Promise<Run> {
  return run({}, input, args);
}

/** The same with more settings in the environment. */
function shomeiWith(env: Record<string, string>, ...args: string[]): Promise<Run> {
  return run(env, undefined, args);
}

function run(env: Record<string, string>, input: string | undefined, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["bin/shomei.js", ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? dir, SHOMEI_DATA_DIR: path.join(dir, "data"), DATABASE_URL: databaseUrl, ...env },
      stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    if (input !== undefined) child.stdin!.end(input);
    running.add(child);
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 25_000);
    child.on("error", (error) => {
      clearTimeout(timer);
      running.delete(child);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A command that must succeed: exit 0, nothing that looks like a failure. */
async function ok(...args: string[]): Promise<Run> {
  const run = await shomei(...args);
  expect(run, `shomei ${args.join(" ")}`).toMatchObject({ code: 0 });
  expect(run.stderr).not.toMatch(stackFrame);
  return run;
}

function expectNoStackTrace(run: Run): void {
  for (const text of [run.stdout, run.stderr]) {
    expect(text).not.toMatch(stackFrame);
    expect(text).not.toMatch(stackTracePattern);
  }
}

describe("account and token administration through the CLI, against a running server on the same database", () => {
  let server: TestServer;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "shomei-cli-admin-"));
    databaseUrl = `sqlite:${path.join(dir, "x.db")}`;
    // The same data directory as the CLI: both must hold the same server key to share sealed signing keys.
    server = await startTestServer(databaseUrl, { mode: "mock", dataDir: path.join(dir, "data") });
  });

  afterAll(async () => {
    for (const child of running) child.kill("SIGKILL");
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * An account of the test's own with one token, made through the domain: each test runs the commands it is
   * about, and passes alone and in any order.
   */
  async function accountWithToken(name: string, apiStatus: "not_started" | "active"): Promise<{ token: string; prefix: string }> {
    await server.domain.accounts.create(name, apiStatus);
    const { token } = await server.domain.accounts.createToken(name, "ci");
    return { token, prefix: token.slice(0, 16) };
  }

  /** A mock certificate of the token's account, made through the API. */
  async function mockCertificate(token: string): Promise<string> {
    const created = await setupClients(server, token).mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE });
    return created.certificate!.id;
  }

  const call = (token: string, certificateId: string = randomUUID()) => setupClients(server, token).certificates.getCertificate({ certificateId });

  it("user create --names: the name in other languages, as claims_locales returns it; bad names are refused", async () => {
    const names = [
      { tag: "ja", value: "山田 花子" },
      { tag: "ja-Kana-JP", value: "ヤマダ ハナコ" },
    ];
    const created = await shomeiWithInput("a long password\n", "user", "create", "hanako", "--name", "Hanako Yamada", "--names", JSON.stringify(names));
    expect(created, created.stderr).toMatchObject({ code: 0 });
    const user = await server.domain.oidc.users.findByLogin("hanako");
    expect(user).toMatchObject({ name: "Hanako Yamada", localizedNames: names });
    for (const bad of ["not json", '{"tag":"ja"}', '[{"tag":"ja"}]', '[{"tag":"日本","value":"x"}]', '[{"tag":"ja","value":"a"},{"tag":"JA","value":"b"}]']) {
      const refused = await shomeiWithInput("a long password\n", "user", "create", "refused-user", "--names", bad);
      expect(refused.code, `${bad}: ${refused.stderr}`).not.toBe(0);
      expect(refused.stderr).toMatch(/names|tag|twice/);
      expectNoStackTrace(refused);
    }
    expect(await server.domain.oidc.users.findByLogin("refused-user")).toBeUndefined();
  });

  it("user set-password: a new password from standard input; a short one or an unknown login is refused, nothing changed", async () => {
    const user = await server.domain.oidc.users.create({ login: "resetting", password: "the old password" });
    const reset = await shomeiWithInput("the new password\n", "user", "set-password", "resetting");
    expect(reset, reset.stderr).toMatchObject({ code: 0 });
    const after = (await server.domain.oidc.users.findByLogin("resetting"))!;
    expect(await server.domain.oidc.users.checkPassword(after, "the new password")).toBe(true);
    expect(await server.domain.oidc.users.checkPassword(after, "the old password")).toBe(false);
    for (const [input, login, words] of [["short\n", "resetting", /at least 8 characters/], ["a long password\n", "nobody-here", /no user nobody-here/]] as const) {
      const refused = await shomeiWithInput(input, "user", "set-password", login);
      expect(refused.code, refused.stderr).not.toBe(0);
      expect(refused.stderr).toMatch(words);
      expectNoStackTrace(refused);
    }
    expect(await server.domain.oidc.users.checkPassword((await server.domain.oidc.users.find(user.id))!, "the new password")).toBe(true);
  });

  it("account create acme: API use not started yet", async () => {
    const run = await ok("account", "create", "acme");
    expect(run.stdout).toMatch(/^created account acme \([0-9a-f-]{36}\), API use not_started\n$/);
    const account = await server.domain.accounts.get("acme");
    expect(account.apiStatus).toBe("not_started");
    expect(run.stdout).toContain(account.id);
  });

  it("token create <account> --name ci prints the token, and only the token, on stdout", async () => {
    await server.domain.accounts.create("token-create");
    const run = await ok("token", "create", "token-create", "--name", "ci");
    expect(run.stdout.endsWith("\n")).toBe(true);
    expect(run.stdout.split("\n")).toHaveLength(2);
    const token = run.stdout.trimEnd();
    expect(token).toMatch(tokenPattern);
    const prefix = token.slice(0, 16);
    // The note on stderr names the prefix but never the secret.
    expect(run.stderr).toContain(prefix);
    expect(run.stderr).not.toContain(token.slice(17));
    const tokens = await server.domain.accounts.listTokens("token-create");
    expect(tokens.map((t) => [t.prefix, t.name, t.revokedAt])).toEqual([[prefix, "ci", null]]);
  });

  it("before account start, the token is refused with permission_denied API_USE_NOT_STARTED", async () => {
    const { token } = await accountWithToken("not-started", "not_started");
    await expectRpcError(call(token), Code.PermissionDenied, "ERROR_REASON_API_USE_NOT_STARTED");
    await expectRpcError(
      setupClients(server, token).mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE }),
      Code.PermissionDenied,
      "ERROR_REASON_API_USE_NOT_STARTED",
    );
  });

  it("after account start <account>, the token works", async () => {
    const { token } = await accountWithToken("starting", "not_started");
    const run = await ok("account", "start", "starting");
    expect(run.stdout).toBe("account starting: API use active\n");
    const certificateId = await mockCertificate(token);
    expect((await call(token, certificateId)).certificate!.id).toBe(certificateId);
    expect((await setupClients(server, token).certificates.checkCertificateStatus({ certificateId })).certificate!.id).toBe(certificateId);
  });

  it("certificate link <account> <certificate> <user>: the certificate belongs to that user from then on", async () => {
    const { token } = await accountWithToken("linking", "active");
    const certificateId = await mockCertificate(token);
    const api = setupClients(server, token);
    const other = await api.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_USER_AUTHENTICATION });
    const otherUser = other.user!.id;
    expect((await call(token, certificateId)).user!.id).not.toBe(otherUser);
    const run = await ok("certificate", "link", "linking", certificateId.toUpperCase(), otherUser);
    expect(run.stdout).toBe(`certificate ${certificateId} of account linking now belongs to user ${otherUser}\n`);
    expect((await call(token, certificateId)).user!.id).toBe(otherUser);
    // The user's latest certificate can now be the linked one (same notBefore second: the later-stored wins).
    const latest = await api.certificates.checkUserCertificateStatus({ userId: otherUser, certificateType: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE });
    expect(latest.certificate!.id).toBe(certificateId);

    for (const [args, message] of [
      [["certificate", "link", "linking", randomUUID(), otherUser], "no certificate with this id"],
      [["certificate", "link", "linking", certificateId, randomUUID()], "no user with this id"],
    ] as const) {
      const failed = await shomei(...args);
      expect(failed.code).toBe(1);
      expect(failed.stderr).toContain(message);
      expectNoStackTrace(failed);
    }
    const usage = await shomei("certificate", "link", "linking");
    expect(usage.code).toBe(2);
  });

  it("certificate link-login <login> <file>: a JPKI certificate is linked to an end user once its status is good", async () => {
    const user = await server.domain.oidc.users.create({ login: "cli-holder", password: "cli-holder-password" });
    const other = await server.domain.oidc.users.create({ login: "cli-other", password: "cli-other-password" });
    // An account of its own (API use active), so that the test passes alone and in any order.
    const account = await server.domain.accounts.create("link-login", "active");
    const issued = await mockOf(server.domain).createCertificate(account.id, { type: "jpki_card_digital_signature" });
    const file = path.join(dir, "holder.pem");
    writeFileSync(file, issued.certificatePem);
    // Mock mode, and the server's URL: the mock CA's CRL and OCSP answer there.
    const env = { SHOMEI_MODE: "mock", BASE_URL: server.config.baseUrl };
    const run = await shomeiWith(env, "certificate", "link-login", "cli-holder", file);
    expect(run.code, run.stderr).toBe(0);
    const [link] = await server.domain.oidc.jpki.linksOf(user.id);
    expect(run.stdout).toBe(`certificate ${link!.certificateId} (jpki_card_digital_signature) is linked to cli-holder\n`);
    expect(link).toMatchObject({ status: "good", fingerprintSha256: issued.certificate.fingerprintSha256 });
    expect(await server.domain.oidc.jpki.isVerified(user.id)).toBe(true);

    const elsewhere = await shomeiWith(env, "certificate", "link-login", "cli-other", file);
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain("certificate_linked_elsewhere: This certificate is already linked to another account.");
    expectNoStackTrace(elsewhere);
    expect(await server.domain.oidc.jpki.linksOf(other.id)).toEqual([]);

    await mockOf(server.domain).setStatus(account.id, issued.certificate.id, { status: "revoked" });
    const second = await mockOf(server.domain).createCertificate(account.id, { type: "jpki_card_user_authentication" });
    await mockOf(server.domain).setStatus(account.id, second.certificate.id, { status: "revoked" });
    writeFileSync(file, issued.certificatePem.replace(/[\s\S]*/, second.certificatePem));
    const revoked = await shomeiWith(env, "certificate", "link-login", "cli-other", file);
    expect(revoked.code).toBe(1);
    expect(revoked.stderr).toContain("certificate_revoked: This certificate has been revoked");
    expect(await server.domain.oidc.jpki.linksOf(other.id)).toEqual([]);

    const unknown = await shomeiWith(env, "certificate", "link-login", "nobody", file);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("no end user with login nobody");
    // Four CLI processes, each opening the database and asking the mock CA's CRL over HTTP.
  }, 120_000);

  it("events list <account> shows the account's events; events redeliver sends one again with the same webhook-id", async () => {
    const { token } = await accountWithToken("eventful", "active");
    const receiver = await new WebhookReceiver().start();
    try {
      const api = setupClients(server, token);
      const events = createClient(EventService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", interceptors: [bearer(token)] }));
      const endpoint = (await events.createWebhookEndpoint({ url: receiver.url("/cli"), eventTypes: ["certificate.revoked"] })).webhookEndpoint!;
      const certificateId = await mockCertificate(token);
      await api.certificates.checkCertificateStatus({ certificateId });
      await api.mock.setMockCertificateStatus({ certificateId, status: Status.REVOKED, revokedReason: CrlReason.KEY_COMPROMISE });
      await api.certificates.checkCertificateStatus({ certificateId });
      const eventId = (await events.listEvents({ certificateId })).events[0]!.id;
      await receiver.waitFor("/cli", 1);

      const listed = await ok("events", "list", "eventful");
      expect(listed.stdout.trimEnd().split("\n").map((line) => line.split("\t").slice(1))).toEqual([[eventId, "certificate.revoked", certificateId, "good -> revoked"]]);
      const redelivered = await ok("events", "redeliver", "eventful", eventId);
      expect(redelivered.stdout).toBe(`queued ${eventId} for ${endpoint.id}\n`);
      const requests = await receiver.waitFor("/cli", 2);
      expect(requests.map((r) => r.headers["webhook-id"])).toEqual([eventId, eventId]);

      const unknown = await shomei("events", "redeliver", "eventful", randomUUID());
      expect({ code: unknown.code, stderr: unknown.stderr }).toMatchObject({ code: 1, stderr: expect.stringContaining("no event with this id") });
      expectNoStackTrace(unknown);
      expect((await shomei("events", "list")).code).toBe(2);
      expect((await shomei("events", "list", "eventful", "--limit", "0")).code).toBe(2);
    } finally {
      await receiver.close();
    }
  });

  it("account list shows the account and its API status", async () => {
    await server.domain.accounts.create("listed", "active");
    const run = await ok("account", "list");
    const account = await server.domain.accounts.get("listed");
    expect(run.stdout).toMatch(new RegExp(`^listed\\t${account.id}\\tactive\\t\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z$`, "m"));
  });

  it("token list <account> shows the prefix, name and last use, never the secret", async () => {
    const { token, prefix } = await accountWithToken("token-list", "active");
    // A call with the token, whose use the server records.
    await mockCertificate(token);
    const run = await ok("token", "list", "token-list");
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    const [shownPrefix, name, created, lastUsed, state] = lines[0]!.split("\t");
    expect({ shownPrefix, name, state }).toEqual({ shownPrefix: prefix, name: "ci", state: "active" });
    expect(created).toMatch(/^created \d{4}-\d\d-\d\dT/);
    expect(lastUsed).toMatch(/^last used \d{4}-\d\d-\d\dT/);
    const secret = token.slice(17);
    expect(run.stdout).not.toContain(secret);
    expect(run.stderr).not.toContain(secret);
    expect(run.stdout).not.toContain(token);
  });

  it("token revoke <prefix>: the token stops working", async () => {
    const { token, prefix } = await accountWithToken("token-revoke", "active");
    const run = await ok("token", "revoke", prefix);
    expect(run.stdout).toBe(`revoked token ${prefix}\n`);
    await expectRpcError(call(token), Code.Unauthenticated, "ERROR_REASON_TOKEN_INVALID");
    const list = await ok("token", "list", "token-revoke");
    expect(list.stdout).toMatch(new RegExp(`^${prefix}\\tci\\t.*\\trevoked \\d{4}-`, "m"));
    // A second revoke of the same prefix is an error, not a silent success.
    const again = await shomei("token", "revoke", prefix);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`no active token with prefix ${prefix}`);
    expectNoStackTrace(again);
  });

  it("account suspend <account>: a fresh token of the account is refused with API_USE_SUSPENDED", async () => {
    const { token: first } = await accountWithToken("suspended", "active");
    const certificateId = await mockCertificate(first);
    const created = await ok("token", "create", "suspended", "--name", "second");
    const token = created.stdout.trimEnd();
    expect(token).toMatch(tokenPattern);
    expect((await call(token, certificateId)).certificate!.id).toBe(certificateId);

    const run = await ok("account", "suspend", "suspended");
    expect(run.stdout).toBe("account suspended: API use suspended\n");
    await expectRpcError(call(token, certificateId), Code.PermissionDenied, "ERROR_REASON_API_USE_SUSPENDED");
    await expectRpcError(
      setupClients(server, token).certificates.checkCertificateStatus({ certificateId }),
      Code.PermissionDenied,
      "ERROR_REASON_API_USE_SUSPENDED",
    );
  });

  it("keys list shows the keys the server publishes; keys rotate adds a key per algorithm and keeps the old ones published, retired", async () => {
    type Published = { kid: string; alg: string };
    const jwks = async () => ((await (await fetch(`${server.url}/api/oidc/v1/jwks`)).json()) as { keys: Published[] }).keys;
    const algs = ["ES256", "RS256", "PS256", "EdDSA"];
    const before = await jwks();
    expect(before.map((k) => k.alg)).toEqual(algs);
    const old = before.map((k) => k.kid);
    const listed = await ok("keys", "list");
    expect(listed.stdout).toBe(before.map((k) => `${k.kid}\t${k.alg}\tgeneration 1\tactive\n`).join(""));

    const rotated = await ok("keys", "rotate");
    const fresh = new RegExp(`^${algs.map((alg) => `${alg} signing with (\\S+)\n`).join("")}$`).exec(rotated.stdout)?.slice(1) ?? [];
    expect(fresh).toHaveLength(4);
    for (const kid of old) {
      expect(fresh).not.toContain(kid);
      expect(rotated.stderr).toContain(`retired ${kid}`);
    }
    // The server reads the published set from the database: every line of keys, the new one first in each.
    expect((await jwks()).map((k) => k.kid)).toEqual(algs.flatMap((_, i) => [fresh[i], old[i]]));
    const after = await ok("keys", "list");
    const retired = "retired \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z";
    expect(after.stdout).toMatch(new RegExp(`^${algs.map((alg, i) => `${fresh[i]}\t${alg}\tgeneration 2\tactive\n${old[i]}\t${alg}\tgeneration 1\t${retired}\n`).join("")}$`));
    const [newEs, es, newRs, rs] = [fresh[0], old[0], fresh[1], old[1]];

    // --alg rotates that algorithm's key only.
    const onlyRs = await ok("keys", "rotate", "--alg", "RS256");
    const newestRs = /^RS256 signing with (\S+)\n$/.exec(onlyRs.stdout)?.[1];
    expect(newestRs).toBeDefined();
    expect(onlyRs.stderr).toBe(`retired ${newRs}: it stays in the JWKS for the grace period, so tokens it signed still verify\n`);
    expect((await jwks()).map((k) => k.kid)).toEqual([newEs, es, newestRs, newRs, rs, fresh[2], old[2], fresh[3], old[3]]);

    // A key the server signs with after its cache expires is the new one: the server's own SigningKeys sees the rotation.
    await server.domain.oidc.signingKeys.rotate("ES256");
    expect((await server.domain.oidc.signingKeys.active("ES256")).kid).not.toBe(newEs);
  });

  it("client add takes id_token_signed_response_alg, and client list shows it", async () => {
    const metadata = (id: string, alg?: string) =>
      JSON.stringify({ client_id: id, token_endpoint_auth_method: "none", redirect_uris: ["https://rp.example.test/cb"], ...(alg ? { id_token_signed_response_alg: alg } : {}) });
    const rs = await ok("client", "add", "--metadata", metadata("cli-rs256", "RS256"));
    expect(rs.stderr).toBe("saved client cli-rs256 (none, ID tokens RS256)\n");
    const ed = await ok("client", "add", "--metadata", metadata("cli-eddsa", "EdDSA"));
    expect(ed.stderr).toBe("saved client cli-eddsa (none, ID tokens EdDSA)\n");
    const es = await ok("client", "add", "--metadata", metadata("cli-default"));
    expect(es.stderr).toBe("saved client cli-default (none, ID tokens ES256)\n");
    expect((await server.domain.oidc.clients.find("cli-rs256"))?.idTokenSignedResponseAlg).toBe("RS256");
    const listed = await ok("client", "list");
    expect(listed.stdout).toContain("cli-default\tnone\tPAR optional\tES256\thttps://rp.example.test/cb\n");
    expect(listed.stdout).toContain("cli-rs256\tnone\tPAR optional\tRS256\thttps://rp.example.test/cb\n");
    expect(listed.stdout).toContain("cli-eddsa\tnone\tPAR optional\tEdDSA\thttps://rp.example.test/cb\n");

    const refused = await shomei("client", "add", "--metadata", metadata("cli-hs256", "HS256"));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      "shomei client: id_token_signed_response_alg: must be one of ES256, RS256, PS256, EdDSA (the algorithms this provider signs ID tokens with)\n",
    );
    expectNoStackTrace(refused);
    expect(await server.domain.oidc.clients.find("cli-hs256")).toBeUndefined();
  });

  it("client add takes the fapi2 profile, and refuses a fapi2 client that cannot meet it", async () => {
    const jwk = { kty: "EC", crv: "P-256", x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", y: "x_FEzRu9m36HLN_tJ8aN_nTj_Js_5_2dC1Mm4dr0sVc" };
    const bank = { client_id: "bank-cli", profile: "fapi2", token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [jwk] }, redirect_uris: ["https://bank.example/cb"] };
    const added = await ok("client", "add", "--metadata", JSON.stringify(bank));
    expect(added.stderr).toBe("saved client bank-cli (private_key_jwt, ID tokens ES256, profile fapi2)\n");
    expect(await server.domain.oidc.clients.find("bank-cli")).toMatchObject({ profile: "fapi2", requirePushedAuthorizationRequests: true, dpopBoundAccessTokens: true });

    const withSecret = { ...bank, client_id: "bank-secret", token_endpoint_auth_method: "client_secret_basic", jwks: undefined };
    const refused = await shomei("client", "add", "--metadata", JSON.stringify(withSecret));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe("shomei client: token_endpoint_auth_method: the fapi2 profile authenticates clients by private_key_jwt\n");
    expectNoStackTrace(refused);
    expect(await server.domain.oidc.clients.find("bank-secret")).toBeUndefined();
  });

  it("client add and the clients file register a public client that must use DPoP", async () => {
    const mobile = { token_endpoint_auth_method: "none", redirect_uris: ["https://app.example.com/mobile/cb"], scope: "openid offline_access", dpop_bound_access_tokens: true };
    const added = await ok("client", "add", "--metadata", JSON.stringify({ client_id: "mobile-cli", ...mobile }));
    expect(added.stderr).toContain("saved client mobile-cli (none, ID tokens ES256)");
    expect(added.stderr).not.toContain("client_secret");
    const expected = { type: "public", tokenEndpointAuthMethod: "none", secretHash: null, dpopBoundAccessTokens: true };
    expect(await server.domain.oidc.clients.find("mobile-cli")).toMatchObject(expected);

    const file = path.join(dir, "clients.json");
    writeFileSync(file, JSON.stringify({ clients: [{ client_id: "mobile-file", ...mobile }] }));
    expect(await applyClientsFile(file, server.domain.oidc.clients, Date.now())).toEqual(["mobile-file"]);
    expect(await server.domain.oidc.clients.find("mobile-file")).toMatchObject(expected);

    const bad = await shomei("client", "add", "--metadata", JSON.stringify({ client_id: "mobile-bad", ...mobile, dpop_bound_access_tokens: "yes" }));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/dpop_bound_access_tokens/);
    expectNoStackTrace(bad);
    expect(await server.domain.oidc.clients.find("mobile-bad")).toBeUndefined();
  });

  it("client registration-token create, list and revoke: the token shown once, listed without it, refused once revoked", async () => {
    const name = `ci ${randomUUID().slice(0, 8)}`;
    const created = await ok("client", "registration-token", "create", "--name", name);
    const token = created.stdout.trim();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const id = /^created initial access token ([0-9a-f-]{36}) \(/.exec(created.stderr)?.[1];
    expect(created.stderr).toBe(`created initial access token ${id} (${name}); it is shown once, store it now:\n`);
    expect(await server.domain.oidc.registrationTokens.accepts(token)).toBe(true);

    const listed = await ok("client", "registration-token", "list");
    expect(listed.stdout).toMatch(new RegExp(`^${id}\t${name}\t\\d{4}-\\d\\d-\\d\\dT`, "m"));
    expect(listed.stdout).not.toContain(token);

    expect((await ok("client", "registration-token", "revoke", id!)).stdout).toBe(`revoked initial access token ${id}\n`);
    expect(await server.domain.oidc.registrationTokens.accepts(token)).toBe(false);
    const again = await shomei("client", "registration-token", "revoke", id!);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`shomei client: no initial access token ${id}\n`);
    expectNoStackTrace(again);
  });

  describe("bad usage: non-zero exit, a message, no stack trace", () => {
    const cases: { args: string[]; code: number; message: RegExp; /** An account that must exist first. */ exists?: string }[] = [
      { args: ["account"], code: 2, message: /^shomei account: unknown action "": use create, start, suspend or list$/m },
      { args: ["account", "frobnicate"], code: 2, message: /^shomei account: unknown action "frobnicate": use create, start, suspend or list$/m },
      { args: ["account", "create"], code: 2, message: /^shomei account: account create needs a name$/m },
      { args: ["token"], code: 2, message: /^shomei token: unknown action "": use create, revoke or list$/m },
      { args: ["token", "revoke"], code: 2, message: /^shomei token: token revoke needs a token prefix/m },
      { args: ["token", "revoke", "notaprefix"], code: 1, message: /^shomei token: "notaprefix" is not a token prefix \(shm_ and 12 hex digits\)$/m },
      { args: ["token", "create", "nosuch"], code: 1, message: /^shomei token: no account named "nosuch"$/m },
      { args: ["account", "create", "already-there"], code: 1, message: /^shomei account: an account named "already-there" already exists$/m, exists: "already-there" },
      { args: ["account", "create", "Not Valid"], code: 1, message: /^shomei account: an account name is 1–63 characters/m },
      { args: ["token", "create", "acme", "--nmae", "x"], code: 2, message: /^shomei token: Unknown option '--nmae'/m },
      { args: ["keys", "rotate", "--alg", "HS256"], code: 2, message: /^shomei keys: unknown algorithm "HS256": use one of ES256, RS256, PS256, EdDSA$/m },
      { args: ["keys", "list", "--alg", "RS256"], code: 2, message: /^shomei keys: --alg is only used with rotate$/m },
      { args: ["client", "registration-token"], code: 2, message: /^shomei client: unknown action "": use registration-token create, list or revoke$/m },
      { args: ["client", "registration-token", "revoke"], code: 2, message: /^shomei client: client registration-token revoke needs a token id/m },
    ];
    for (const c of cases) {
      it(`shomei ${c.args.join(" ")} exits ${c.code}`, async () => {
        const exists = c.exists;
        if (exists && !(await server.domain.accounts.list()).some((a) => a.name === exists)) await server.domain.accounts.create(exists);
        const run = await shomei(...c.args);
        expect(run.code).toBe(c.code);
        expect(run.stderr).toMatch(c.message);
        expect(run.stdout).toBe("");
        expectNoStackTrace(run);
      });
    }
  });
});
