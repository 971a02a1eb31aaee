import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { authorizePath, browserCookie, Browser, createUser, obtainCode, registerClient, type TestUser } from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * The authorization endpoint's GET, each case with its status and Location,
 * sent two ways: to the exact path, and with a trailing slash (which
 * Express's router matches to the same route). Both must answer alike:
 * status, headers a browser acts on, Location and body, with the values made
 * anew each time (a code, an interaction id, a browser cookie) blanked.
 */
const sqlite = (await databaseTargets()).find((t) => t.name === "sqlite")!;
const clientId = "authorize-get-client";
const redirectUri = "https://authorize.example/cb";

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

describe("the authorization endpoint's GET answers each case as it says, at its path and with a trailing slash", () => {
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
      client_secret: "authorize-get-secret-0123456789",
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

  async function get(query: string, headers: Record<string, string>, trailingSlash: boolean): Promise<Answer> {
    const reply = await fetch(`${server.url}${authorizePath}${trailingSlash ? "/" : ""}?${query}`, { redirect: "manual", headers });
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
    ["a signed-in browser with a grant, HTML preferred: the code", () => request(), () => signedInHeaders("text/html"), 303, /^https:\/\/authorize\.example\/cb\?code=…&state=s-1&iss=/],
    ["the same without an Accept header: a text note", () => request(), () => signedInHeaders(), 303, /^https:\/\/authorize\.example\/cb\?code=…/],
    ["the same accepting only JSON: no note", () => request(), () => signedInHeaders("application/json"), 303, /^https:\/\/authorize\.example\/cb\?code=…/],
    ["a browser never seen: the login page, and a browser cookie", () => request(), () => ({ accept: "text/html" }), 303, /^\/auth\/login\?interaction=…$/],
    ["an unknown client: the error page", () => request({ client_id: "nobody" }), () => ({ accept: "text/html" }), 400, null],
    ["a redirect_uri not registered: the error page", () => request({ redirect_uri: "https://elsewhere.example/cb" }), () => ({ accept: "text/html" }), 400, null],
    ["the error page in the language ui_locales names", () => request({ client_id: "nobody", ui_locales: "ja" }), () => ({ accept: "text/html" }), 400, null],
    ["an unsupported response_type: an error sent back to the client", () => request({ response_type: "token" }), () => signedInHeaders("text/html"), 303, /^https:\/\/authorize\.example\/cb\?error=unsupported_response_type/],
    ["prompt=none in a browser never seen: login_required back to the client", () => request({ prompt: "none" }), () => ({ accept: "text/html" }), 303, /^https:\/\/authorize\.example\/cb\?error=login_required/],
    ["a parameter twice: the error page", () => `${request()}&scope=openid`, () => signedInHeaders("text/html"), 400, null],
    ["no parameters at all", () => "", () => ({ accept: "text/html" }), 400, null],
  ];

  for (const [name, query, headers, status, location] of cases) {
    it(`${name}: ${status}, the same both ways`, async () => {
      const [exact, slashed] = await bothWays(query(), headers());
      expect(exact.status, exact.body).toBe(status);
      if (location) expect(exact.location).toMatch(location);
      else expect(exact.location).toBeNull();
      expect(exact).toEqual(slashed);
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

  it("requests are logged under their route, errors included", async () => {
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
});
