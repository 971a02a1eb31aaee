import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { leanAuthorize } from "../../src/http/lean-authorize.ts";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { authorizePath, browserCookie, Browser, createUser, obtainCode, registerClient, type TestUser } from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * The authorization endpoint's plain GET is answered without Express
 * (src/http/lean-authorize.ts); the Express route answers every other shape,
 * and the errors of both. The same request is sent both ways here: to the
 * exact path, and with a trailing slash (which Express's router matches to
 * the same route, and which sends the request to Express). Both must answer
 * alike: status, headers a browser acts on, Location and body, with the
 * values made anew each time (a code, an interaction id, a browser cookie)
 * blanked.
 */
const sqlite = (await databaseTargets()).find((t) => t.name === "sqlite")!;
const clientId = "lean-authorize-client";
const redirectUri = "https://lean.example/cb";

const comparedHeaders = [
  "content-type",
  "content-length",
  "cache-control",
  "pragma",
  "vary",
  "x-content-type-options",
  "referrer-policy",
  "x-frame-options",
  "content-security-policy",
];

interface Answer {
  status: number;
  headers: Record<string, string | null>;
  location: string | null;
  cookies: string[];
  body: string;
}

describe("the authorization endpoint's GET answered without Express answers as the Express route does", () => {
  let scratch: ScratchDatabase;
  let server: TestServer;
  let user: TestUser;
  /** A browser signed in, whose user has granted `openid profile` to the client. */
  let signedIn: Browser;

  beforeAll(async () => {
    scratch = await sqlite.create();
    server = await startTestServer(scratch.url);
    await registerClient(server, {
      client_id: clientId,
      token_endpoint_auth_method: "client_secret_basic",
      client_secret: "lean-authorize-secret-0123456789",
      redirect_uris: [redirectUri],
      scope: "openid profile",
    });
    user = await createUser(server);
    signedIn = new Browser(server.url);
    await obtainCode(server, signedIn, user, { clientId, redirectUri, scope: "openid profile" });
  });

  afterAll(async () => {
    await server?.close();
    await scratch?.drop();
  });

  async function get(query: string, headers: Record<string, string>, viaExpress: boolean): Promise<Answer> {
    const reply = await fetch(`${server.url}${authorizePath}${viaExpress ? "/" : ""}?${query}`, { redirect: "manual", headers });
    return {
      status: reply.status,
      headers: Object.fromEntries(comparedHeaders.map((name) => [name, reply.headers.get(name)])),
      location: reply.headers.get("location"),
      cookies: reply.headers.getSetCookie(),
      body: await reply.text(),
    };
  }

  /** Codes, interaction ids, new browser ids and request ids (on error pages) differ by nature: each is replaced by its kind. */
  function blank(a: Answer): Answer {
    const anew = (text: string) =>
      text
        .replace(/(code=|interaction=|shomei_browser=)[A-Za-z0-9_-]{43,51}/g, "$1…")
        .replace(/(id="request-id">[^<]*<code>)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "$1…");
    return { ...a, location: a.location && anew(a.location), cookies: a.cookies.map(anew), body: anew(a.body) };
  }

  /** An error page links to itself in other languages: under the path it was asked for, here with the slash. */
  function asIfExact(a: Answer): Answer {
    const body = a.body.replaceAll(`${authorizePath}/?`, `${authorizePath}?`);
    return body === a.body ? a : { ...a, body, headers: { ...a.headers, "content-length": String(Buffer.byteLength(body)) } };
  }

  async function bothWays(query: string, headers: Record<string, string>): Promise<[Answer, Answer]> {
    return [blank(await get(query, headers, false)), blank(asIfExact(await get(query, headers, true)))];
  }

  const signedInHeaders = (accept?: string): Record<string, string> => ({ cookie: signedIn.jar.header() ?? "", ...(accept ? { accept } : {}) });
  const request = (extra: Record<string, string> = {}) =>
    new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: "code", scope: "openid profile", state: "s-1", ...extra }).toString();

  const cases: [string, () => string, () => Record<string, string>, number, RegExp | null][] = [
    ["a signed-in browser with a grant, HTML preferred: the code", () => request(), () => signedInHeaders("text/html"), 303, /^https:\/\/lean\.example\/cb\?code=…&state=s-1&iss=/],
    ["the same without an Accept header: a text note", () => request(), () => signedInHeaders(), 303, /^https:\/\/lean\.example\/cb\?code=…/],
    ["the same accepting only JSON: no note", () => request(), () => signedInHeaders("application/json"), 303, /^https:\/\/lean\.example\/cb\?code=…/],
    ["a browser never seen: the login page, and a browser cookie", () => request(), () => ({ accept: "text/html" }), 303, /^\/auth\/login\?interaction=…$/],
    ["an unknown client: the error page", () => request({ client_id: "nobody" }), () => ({ accept: "text/html" }), 400, null],
    ["a redirect_uri not registered: the error page", () => request({ redirect_uri: "https://elsewhere.example/cb" }), () => ({ accept: "text/html" }), 400, null],
    ["the error page in the language ui_locales names", () => request({ client_id: "nobody", ui_locales: "ja" }), () => ({ accept: "text/html" }), 400, null],
    ["an unsupported response_type: an error sent back to the client", () => request({ response_type: "token" }), () => signedInHeaders("text/html"), 303, /^https:\/\/lean\.example\/cb\?error=unsupported_response_type/],
    ["prompt=none in a browser never seen: login_required back to the client", () => request({ prompt: "none" }), () => ({ accept: "text/html" }), 303, /^https:\/\/lean\.example\/cb\?error=login_required/],
    ["a parameter twice: the error page", () => `${request()}&scope=openid`, () => signedInHeaders("text/html"), 400, null],
    ["no parameters at all", () => "", () => ({ accept: "text/html" }), 400, null],
  ];

  for (const [name, query, headers, status, location] of cases) {
    it(`${name}: ${status}, the same both ways`, async () => {
      const [lean, express] = await bothWays(query(), headers());
      expect(lean.status, lean.body).toBe(status);
      if (location) expect(lean.location).toMatch(location);
      else expect(lean.location).toBeNull();
      expect(lean).toEqual(express);
    });
  }

  it("the notes say where the browser goes: HTML escaped for HTML, the address itself in text", async () => {
    const html = await get(request(), signedInHeaders("text/html"), false);
    expect(html.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(html.body).toContain(`<p>See Other. Redirecting to ${html.location!.replaceAll("&", "&amp;")}</p>`);
    const text = await get(request(), signedInHeaders("text/plain"), false);
    expect(text.headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(text.body).toBe(`See Other. Redirecting to ${text.location}`);
    const none = await get(request(), signedInHeaders("application/json"), false);
    expect(none.headers["content-type"]).toBeNull();
    expect(none.body).toBe("");
    expect(none.headers["content-length"]).toBe("0");
  });

  it("a new browser's cookie is set once, and the code it later gets is the user's", async () => {
    const fresh = await get(request(), { accept: "text/html" }, false);
    expect(fresh.cookies).toHaveLength(1);
    expect(fresh.cookies[0]).toMatch(new RegExp(`^${browserCookie}=[A-Za-z0-9_-]{43}; Path=/; HttpOnly; SameSite=Lax; Max-Age=\\d+$`));
    const known = await get(request(), signedInHeaders("text/html"), false);
    expect(known.cookies).toEqual([]);
  });

  it("requests answered without Express are logged under their route, errors included", async () => {
    const before = server.logs.length;
    expect((await get(request(), signedInHeaders("text/html"), false)).status).toBe(303);
    expect((await get(request({ client_id: "nobody" }), { accept: "text/html" }, false)).status).toBe(400);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const lines = server.logs.slice(before).filter((l) => l.msg === "request" && l.path === authorizePath);
    expect(lines.map((l) => [l.route, l.status])).toEqual([
      [authorizePath, 303],
      [authorizePath, 400],
    ]);
  });

  it("takes exactly a GET to the exact path without a body, and hands its failures on", async () => {
    const handedOn: string[] = [];
    const leave = (req: { url?: string }, res: { statusCode: number; end(): void }) => {
      handedOn.push(req.url ?? "");
      res.statusCode = 599;
      res.end();
    };
    const lean = leanAuthorize(server.domain.oidc, leave as never);
    const bare = createServer((req, res) => {
      if (!lean(req, res)) leave(req, res);
    });
    await new Promise<void>((resolve) => bare.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;
    const send = (path: string, init: RequestInit = {}) =>
      fetch(`${base}${path}`, { redirect: "manual", ...init, headers: { ...signedInHeaders("text/html"), ...(init.headers as Record<string, string>) } }).then((r) => r.status);
    try {
      expect(await send(`${authorizePath}?${request()}`)).toBe(303);
      expect(handedOn).toEqual([]);
      expect(await send(`${authorizePath}/?${request()}`)).toBe(599);
      expect(await send(`${authorizePath}?${request()}`, { method: "HEAD" })).toBe(599);
      expect(await send(authorizePath, { method: "POST", body: request(), headers: { "content-type": "application/x-www-form-urlencoded" } })).toBe(599);
      expect(await getWithBody(`${base}${authorizePath}?${request()}`)).toBe(599);
      expect(await send(`${authorizePath}?${request({ client_id: "nobody" })}`)).toBe(599);
      expect(handedOn.at(-1)).toBe(`${authorizePath}?${request({ client_id: "nobody" })}`);
    } finally {
      await new Promise((resolve) => bare.close(resolve));
    }
  });
});

/** A GET with a body (fetch sends none): the status it is answered with. */
function getWithBody(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "GET", headers: { "content-length": "2" } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end("{}");
  });
}
