import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import {
  authorizeUrl,
  basicAuthorization,
  Browser,
  createUser,
  csrfOf,
  expectCodeRedirect,
  expectErrorRedirect,
  expectPage,
  getUserinfo,
  postToken,
  registerClient,
  signIn,
  submitPage,
} from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * SHOMEI_ACR_POLICY_FILE through real requests: levels named by URN aliases
 * lead to the step-up page and come back in the ID token as the client wrote
 * them; acr_values of only unknown values is unmet_authentication_requirements;
 * a bad file stops start-up.
 */
const sqlite = (await databaseTargets()).find((t) => t.name === "sqlite")!;
const redirectUri = "https://acr-policy.example/cb";
const secret = "acr-policy-secret-0123456789";
const urnHigh = "urn:example:acr:high";
const urnLow = "urn:example:acr:low";

const dir = mkdtempSync(path.join(tmpdir(), "shomei-acr-"));
function writeTemp(name: string, content: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, content);
  return file;
}

const policyFile = writeTemp(
  "acr.json",
  JSON.stringify({
    levels: [
      { name: "low", aliases: [urnLow], methods: [["pwd"]] },
      { name: "high", aliases: [urnHigh], methods: [["pwd", "otp"]] },
      { name: "very_high" },
    ],
  }),
);

let database: ScratchDatabase;
let server: TestServer;

beforeAll(async () => {
  database = await sqlite.create();
  server = await startTestServer(database.url, { acrPolicyFile: policyFile });
  await registerClient(server, { client_id: "acr-app", client_secret: secret, redirect_uris: [redirectUri], scope: "openid" });
});

afterAll(async () => {
  await server?.close();
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const params = (extra: Record<string, string>) => ({ client_id: "acr-app", redirect_uri: redirectUri, response_type: "code", scope: "openid", state: "s1", ...extra });

describe("an ACR policy file with URN aliases", () => {
  it("discovery lists every name and alias, weakest first", async () => {
    const metadata = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(metadata.acr_values_supported).toEqual(["low", urnLow, "high", urnHigh, "very_high"]);
  });

  it("acr_values=urn:example:acr:high → step-up page for the one-time code; the ID token and userinfo say the URN", async () => {
    const user = await createUser(server, { totp: true });
    const b = new Browser(server.url);
    const afterLogin = await signIn(b, await b.get(authorizeUrl(params({ acr_values: urnHigh }))), user.login, user.password);
    const reauthPath = expectPage(afterLogin, "reauth");
    const page = await b.get(reauthPath);
    expect(page.status).toBe(200);
    expect(page.body).toContain('name="otp"');
    const otp = server.domain.oidc.users.currentOtp(user.row)!;
    const afterOtp = await b.post(reauthPath, { csrf: csrfOf(page.body), password: user.password, otp });
    const code = expectCodeRedirect(await submitPage(b, afterOtp, "consent", { decision: "allow" }), {
      redirectUri,
      issuer: server.domain.oidc.issuer,
      state: "s1",
    });

    const tokens = await postToken(server, { grant_type: "authorization_code", code, redirect_uri: redirectUri }, { authorization: basicAuthorization("acr-app", secret) });
    expect(tokens.status, tokens.text).toBe(200);
    const claims = decodeJwt(tokens.json!.id_token as string);
    expect(claims.acr).toBe(urnHigh);
    expect(claims.amr).toEqual(["pwd", "otp"]);
    expect((await getUserinfo(server, tokens.json!.access_token as string)).json.acr).toBe(urnHigh);

    // The same session, asked by its level name, answers with the name.
    const byName = expectCodeRedirect(await b.get(authorizeUrl(params({ acr_values: "high" }))), { redirectUri, issuer: server.domain.oidc.issuer, state: "s1" });
    const again = await postToken(server, { grant_type: "authorization_code", code: byName, redirect_uri: redirectUri }, { authorization: basicAuthorization("acr-app", secret) });
    expect(decodeJwt(again.json!.id_token as string).acr).toBe("high");
  });

  it("acr_values of only unknown values → unmet_authentication_requirements at once, without a login page", async () => {
    const reply = await new Browser(server.url).get(authorizeUrl(params({ acr_values: "urn:example:acr:unknown urn:other" })));
    const query = expectErrorRedirect(reply, { redirectUri, error: "unmet_authentication_requirements", issuer: server.domain.oidc.issuer, state: "s1" });
    expect(query.get("error_description")).toMatch(/none of the requested acr_values is supported/);
  });

  it("an unknown value next to a known alias is ignored: the alias applies", async () => {
    const reply = await new Browser(server.url).get(authorizeUrl(params({ acr_values: `urn:other ${urnLow}` })));
    expectPage(reply, "login");
  });
});

describe("a bad ACR policy file stops start-up with a clear message", () => {
  it.each([
    ["a missing file", () => path.join(dir, "missing.json"), /ACR policy file .*missing\.json: cannot read it \(ENOENT\)/],
    ["invalid JSON", () => writeTemp("bad.json", "{"), /ACR policy file .*bad\.json: not valid JSON/],
    ["no levels", () => writeTemp("empty.json", JSON.stringify({ levels: [] })), /levels must list at least one level/],
    ["an unknown method", () => writeTemp("method.json", JSON.stringify({ levels: [{ name: "a", methods: [["sms"]] }] })), /levels\.0\.methods\.0\.0 must be one of pwd, otp/],
    ["a name with a space", () => writeTemp("space.json", JSON.stringify({ levels: [{ name: "a b" }] })), /levels\.0\.name must be printable ASCII without spaces/],
    ["an unknown key", () => writeTemp("key.json", JSON.stringify({ levels: [{ name: "a", level: 1 }] })), /levels\.0 Unrecognized key: "level"/],
    ["an empty method combination", () => writeTemp("none.json", JSON.stringify({ levels: [{ name: "a", methods: [[]] }] })), /levels\.0\.methods\.0 must name at least one method/],
    [
      "an alias used twice",
      () => writeTemp("twice.json", JSON.stringify({ levels: [{ name: "a", aliases: ["x"] }, { name: "b", aliases: ["x"] }] })),
      /ACR policy file .*twice\.json: ACR name "x" is used twice/,
    ],
  ])("%s", async (_label, file, message) => {
    const outcome = await startTestServer("sqlite::memory:", { acrPolicyFile: file() }).then(
      async (started) => {
        await started.close();
        return undefined;
      },
      (error: unknown) => error,
    );
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toMatch(message);
  });

  it("is read before the database is opened or the port bound", async () => {
    // A database nobody answers: had it been opened first, its error would be the one reported.
    const error = await startTestServer("postgres://127.0.0.1:1/nowhere", { acrPolicyFile: writeTemp("early.json", "{") }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(/ACR policy file .*early\.json: not valid JSON/);
  });
});
