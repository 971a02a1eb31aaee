import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { RawClient, type HttpTransport } from "../support/raw-client.ts";
import { basicAuthorization, pkce, registerClient } from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * PAR and token posts, each case with its status, sent two ways: plain, and
 * with `Content-Encoding: identity` (which the form reader takes as no
 * encoding at all). Both must answer alike: status, JSON body (but for
 * values that are new each time) and the headers a client reads.
 */
const sqlite = (await databaseTargets()).find((t) => t.name === "sqlite")!;
const clientId = "form-client";
const secret = "form-client-secret-0123456789";
const redirectUri = "https://forms.example/cb";

/** The headers a client or browser acts on; Date, Keep-Alive, X-Request-Id and the like differ by nature. */
const comparedHeaders = [
  "content-type",
  "cache-control",
  "pragma",
  "www-authenticate",
  "access-control-allow-origin",
  "access-control-expose-headers",
  "x-content-type-options",
  "referrer-policy",
  "x-frame-options",
  "content-security-policy",
  "retry-after",
  "dpop-nonce",
];

interface Answer {
  status: number;
  headers: Record<string, string | null>;
  body: unknown;
}

describe("PAR and token posts answer each form as its case says, with or without Content-Encoding: identity", () => {
  let scratch: ScratchDatabase;
  let server: TestServer;

  beforeAll(async () => {
    scratch = await sqlite.create();
    server = await startTestServer(scratch.url);
    await registerClient(server, {
      client_id: clientId,
      token_endpoint_auth_method: "client_secret_basic",
      client_secret: secret,
      redirect_uris: [redirectUri],
      scope: "openid profile",
    });
  });

  afterAll(async () => {
    await server?.close();
    await scratch?.drop();
  });

  async function post(path: string, body: string | Buffer, headers: Record<string, string>, identity: boolean): Promise<Answer> {
    const reply = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers, ...(identity ? { "content-encoding": "identity" } : {}) },
      body,
    });
    const text = await reply.text();
    return {
      status: reply.status,
      headers: Object.fromEntries(comparedHeaders.map((name) => [name, reply.headers.get(name)])),
      body: JSON.parse(text) as unknown,
    };
  }

  /** The request both ways; the answers, with values made anew each time blanked. */
  async function bothWays(path: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<[Answer, Answer]> {
    const blank = (a: Answer): Answer => {
      const b = a.body as Record<string, unknown>;
      return { ...a, body: "request_uri" in b ? { ...b, request_uri: typeof b.request_uri } : b };
    };
    const plain = await post(path, body, headers, false);
    const identity = await post(path, body, headers, true);
    return [blank(plain), blank(identity)];
  }

  const basic = { authorization: basicAuthorization(clientId, secret) };
  const parForm = () =>
    new URLSearchParams({ response_type: "code", redirect_uri: redirectUri, scope: "openid", code_challenge: pkce().challenge, code_challenge_method: "S256" }).toString();

  const cases: [string, string, () => string | Buffer, Record<string, string>, number][] = [
    ["a valid PAR", "/api/oidc/v1/par", parForm, basic, 201],
    ["PAR with a wrong secret", "/api/oidc/v1/par", parForm, { authorization: basicAuthorization(clientId, "wrong") }, 401],
    ["PAR without credentials", "/api/oidc/v1/par", parForm, {}, 401],
    ["PAR with a parameter twice", "/api/oidc/v1/par", () => `${parForm()}&scope=profile`, basic, 400],
    ["PAR with more than 100 parameters", "/api/oidc/v1/par", () => Array.from({ length: 101 }, (_, i) => `p${i}=1`).join("&"), basic, 413],
    ["PAR with a bracketed name (a name of its own, unknown, ignored)", "/api/oidc/v1/par", () => `${parForm()}&claims[userinfo]=x`, basic, 201],
    ["PAR with a byte order mark", "/api/oidc/v1/par", () => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(parForm())]), basic, 201],
    ["PAR with broken percent-encoding", "/api/oidc/v1/par", () => `${parForm()}&state=%E0%A4%A`, basic, 201],
    ["PAR with an empty body", "/api/oidc/v1/par", () => "", basic, 400],
    ["PAR with bytes that are not UTF-8", "/api/oidc/v1/par", () => Buffer.concat([Buffer.from(`${parForm()}&state=`), Buffer.from([0xff, 0xfe])]), basic, 400],
    ["a token request with an unknown grant type", "/api/oidc/v1/token", () => "grant_type=password&username=a&password=b", basic, 400],
    ["a token request with an unknown code", "/api/oidc/v1/token", () => `grant_type=authorization_code&code=nope&redirect_uri=${encodeURIComponent(redirectUri)}&code_verifier=${pkce().verifier}`, basic, 400],
    ["a token request with a bad DPoP proof", "/api/oidc/v1/token", () => "grant_type=refresh_token&refresh_token=nope", { ...basic, dpop: "not-a-jwt" }, 400],
  ];

  for (const [name, path, body, headers, status] of cases) {
    it(`${name}: ${status}, the same both ways`, async () => {
      const sent = body();
      const [plain, identity] = await bothWays(path, sent, headers);
      expect(plain.status, JSON.stringify(plain.body)).toBe(status);
      expect(plain).toEqual(identity);
    });
  }

  it("text that is not UTF-8 is refused as such, not read with U+FFFD in its place: in a form, and in authorize's query", async () => {
    const [form] = await bothWays("/api/oidc/v1/par", Buffer.concat([Buffer.from(`${parForm()}&state=`), Buffer.from([0xff, 0xfe])]), basic);
    expect(form.body).toEqual({ error: "invalid_request", error_description: "the form is not valid UTF-8" });
    const query = (state: string) =>
      `${server.url}/api/oidc/v1/authorize?client_id=${clientId}&response_type=code&scope=openid&redirect_uri=${encodeURIComponent(redirectUri)}` +
      `&code_challenge=${pkce().challenge}&code_challenge_method=S256&state=${state}`;
    // Escapes of bytes that are no UTF-8: shown as the error page, never sent back to the client changed.
    const refused = await fetch(query("%FF%FEab"), { redirect: "manual", headers: { accept: "application/json" } });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("location")).toBeNull();
    expect(await refused.text()).toContain("<code>invalid_request</code>");
    // UTF-8 escapes are fine: the request goes on to sign-in.
    const accepted = await fetch(query("%E3%81%82"), { redirect: "manual" });
    expect(accepted.status).toBe(303);
  });

  it("a form in ISO-8859-1 and a chunked body are read too", async () => {
    const latin = await fetch(`${server.url}/api/oidc/v1/par`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded; charset=iso-8859-1", ...basic },
      body: parForm(),
    });
    expect(latin.status).toBe(201);
    const chunked = await fetch(`${server.url}/api/oidc/v1/par`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...basic },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(parForm()));
          controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    expect(chunked.status).toBe(201);
  });

  it("over h2c each case answers as over HTTP/1.1: one app, one route, one error handler for both", async () => {
    const raw = new RawClient(server.url, 10_000);
    const send = async (transport: HttpTransport, path: string, body: Buffer, headers: Record<string, string>) => {
      const reply = await raw.send({ transport, method: "POST", path, headers: { "content-type": "application/x-www-form-urlencoded", "content-length": String(body.length), ...headers }, body });
      const json = JSON.parse(reply.body.toString("utf8")) as Record<string, unknown>;
      const read = (name: string) => reply.headers[name] ?? null;
      return { status: reply.status, body: "request_uri" in json ? { ...json, request_uri: typeof json.request_uri } : json, headers: comparedHeaders.map(read) };
    };
    try {
      for (const [name, path, body, headers, status] of cases) {
        const sent = Buffer.from(body());
        const overHttp1 = await send("http1", path, sent, headers);
        expect(overHttp1.status, name).toBe(status);
        expect(await send("h2c", path, sent, headers), name).toEqual(overHttp1);
      }
    } finally {
      raw.close();
    }
  });

  it("PAR is logged and measured under its route", async () => {
    const before = server.logs.length;
    expect((await post("/api/oidc/v1/par", parForm(), basic, false)).status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const line = server.logs.slice(before).find((l) => l.msg === "request" && l.path === "/api/oidc/v1/par");
    expect(line).toMatchObject({ method: "POST", route: "/api/oidc/v1/par", status: 201 });
  });
});

