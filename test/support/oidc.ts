import { request as httpRequest } from "node:http";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { SignJWT, type CryptoKey } from "jose";
import { expect } from "vitest";
import { registrationFromMetadata } from "../../src/domain/oidc/client-registration.ts";
import type { OidcClient } from "../../src/domain/oidc/client.ts";
import { storedKeyOf } from "../../src/domain/oidc/flow/secrets.ts";
import type { OidcUserRow } from "../../src/domain/oidc/model.ts";
import type { OneTimeKind, OneTimeRecord } from "../../src/domain/single-use.ts";
import { OneTimeRecords } from "../../src/storage/one-time-records.ts";
import { CookieJar } from "./cookie-jar.ts";
import type { TestServer } from "./server.ts";

export const authorizePath = "/api/oidc/v1/authorize";
export const parPath = "/api/oidc/v1/par";
export const requestUriPrefix = "urn:ietf:params:oauth:request_uri:";
export const jwtBearer = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/** Cookie names over plain http (the test servers' base URL). */
export const sessionCookie = "shomei_session";
export const browserCookie = "shomei_browser";

/** One HTTP answer, read completely; redirects are never followed. */
export interface Reply {
  status: number;
  headers: Headers;
  /** The Location header, when there is one. */
  location: string | undefined;
  body: string;
}

/**
 * A browser without JavaScript: fetch with `redirect: "manual"`, carrying its
 * own cookies. Relative targets are resolved against the server's URL.
 */
export class Browser {
  readonly jar = new CookieJar();

  /** `from`: a loopback address of its own (127.0.0.2, …), to be another client address to the server's limits. */
  constructor(
    readonly base: string,
    readonly from?: string,
  ) {}

  get(target: string, headers: Record<string, string> = {}): Promise<Reply> {
    return this.send("GET", target, undefined, headers);
  }

  /** A form submission, application/x-www-form-urlencoded. */
  post(target: string, form: Record<string, string> | URLSearchParams, headers: Record<string, string> = {}): Promise<Reply> {
    const body = form instanceof URLSearchParams ? form : new URLSearchParams(form);
    return this.send("POST", target, body.toString(), { "content-type": "application/x-www-form-urlencoded", ...headers });
  }

  private async send(method: string, target: string, body: string | undefined, headers: Record<string, string>): Promise<Reply> {
    const cookie = this.jar.header();
    const url = new URL(target, this.base);
    const allHeaders = { accept: "text/html", ...(cookie ? { cookie } : {}), ...headers };
    const response = this.from
      ? await requestFrom(this.from, method, url, allHeaders, body)
      : await fetch(url, { method, redirect: "manual", headers: allHeaders, ...(body !== undefined ? { body } : {}) });
    this.jar.store(response);
    return { status: response.status, headers: response.headers, location: response.headers.get("location") ?? undefined, body: await response.text() };
  }
}

/** One request over node:http from a chosen local address (fetch cannot bind one), as a fetch Response. */
function requestFrom(localAddress: string, method: string, url: URL, headers: Record<string, string>, body: string | undefined): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, localAddress }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const answer = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) answer.append(name, one);
        }
        resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 0, headers: answer }));
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** The authorization endpoint with these query parameters (undefined values left out). */
export function authorizeUrl(params: Record<string, string | undefined> | URLSearchParams): string {
  const query = params instanceof URLSearchParams ? params : definedParams(params);
  return `${authorizePath}?${query.toString()}`;
}

export function definedParams(params: Record<string, string | undefined>): URLSearchParams {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.append(name, value);
  return query;
}

/** The CSRF token of a page's form. */
export function csrfOf(html: string): string {
  const match = /name="csrf" value="([^"]*)"/.exec(html);
  expect(match, "the page has a CSRF field").not.toBeNull();
  return match![1]!;
}

/** Asserts a 303 to one of shomei's interaction pages and returns its path (with the interaction id). */
export function expectPage(reply: Reply, page: "login" | "reauth" | "consent" | "unreachable"): string {
  expect(reply.status, reply.body).toBe(303);
  expect(reply.location).toMatch(new RegExp(`^/auth/${page}\\?interaction=[A-Za-z0-9_-]{43}$`));
  return reply.location!;
}

/** Splits a redirect to the client into the URL it goes to (without query) and its query parameters. */
export function clientRedirect(reply: Reply, redirectUri: string): URLSearchParams {
  expect(reply.status, reply.body).toBe(303);
  expect(reply.location).toBeDefined();
  const target = new URL(reply.location!);
  const registered = new URL(redirectUri);
  expect(`${target.origin}${target.pathname}`).toBe(`${registered.origin}${registered.pathname}`);
  // The registered URI's own query is kept, the response parameters follow it.
  for (const [name, value] of registered.searchParams) expect(target.searchParams.getAll(name)).toEqual([value]);
  return target.searchParams;
}

/** Asserts an error redirect: exact error, a description, the state exactly as sent (or none), iss, no code. */
export function expectErrorRedirect(
  reply: Reply,
  expected: { redirectUri: string; error: string; issuer: string; state: string | undefined },
): URLSearchParams {
  const params = clientRedirect(reply, expected.redirectUri);
  expect(params.get("error"), params.get("error_description") ?? "").toBe(expected.error);
  expect(params.get("error_description")).toMatch(/\S/);
  expect(params.getAll("state")).toEqual(expected.state === undefined ? [] : [expected.state]);
  expect(params.getAll("iss")).toEqual([expected.issuer]);
  expect(params.has("code")).toBe(false);
  return params;
}

/** Asserts a code redirect: one code, the state exactly as sent, iss, no error. Returns the code. */
export function expectCodeRedirect(reply: Reply, expected: { redirectUri: string; issuer: string; state: string | undefined }): string {
  const params = clientRedirect(reply, expected.redirectUri);
  expect(params.get("error"), params.get("error_description") ?? "").toBeNull();
  expect(params.getAll("code")).toHaveLength(1);
  expect(params.get("code")).toMatch(/^[A-Za-z0-9_-]{51}$/);
  expect(params.getAll("state")).toEqual(expected.state === undefined ? [] : [expected.state]);
  expect(params.getAll("iss")).toEqual([expected.issuer]);
  return params.get("code")!;
}

/** Asserts the HTML error page of the authorization endpoint: 400, no redirect, the error code shown. */
export function expectErrorPage(reply: Reply, error: string): void {
  expect(reply.status, reply.body).toBe(400);
  expect(reply.location).toBeUndefined();
  expect(reply.headers.get("content-type")).toMatch(/^text\/html/);
  expect(reply.body).toContain(`<code>${error}</code>`);
}

/** Asserts the headers every interaction page carries. */
export function expectPageHeaders(reply: Reply): void {
  expect(reply.headers.get("x-frame-options")).toBe("DENY");
  const csp = reply.headers.get("content-security-policy") ?? "";
  expect(csp.split(";").map((d) => d.trim())).toContain("frame-ancestors 'none'");
  expect(reply.headers.get("cache-control")).toBe("no-store");
}

/** Opens a login page the flow redirected to and signs in; returns the answer to the login POST. */
export async function signIn(browser: Browser, loginRedirect: Reply, login: string, password: string): Promise<Reply> {
  const path = expectPage(loginRedirect, "login");
  const page = await browser.get(path);
  expect(page.status, page.body).toBe(200);
  return browser.post(path, { csrf: csrfOf(page.body), login, password });
}

/** Opens an interaction page the flow redirected to and submits its form with `fields`; returns the answer to the POST. */
export async function submitPage(browser: Browser, redirect: Reply, page: "reauth" | "consent", fields: Record<string, string>): Promise<Reply> {
  const path = expectPage(redirect, page);
  const shown = await browser.get(path);
  expect(shown.status, shown.body).toBe(200);
  return browser.post(path, { csrf: csrfOf(shown.body), ...fields });
}

/** Registers a client through the domain, as the CLI or the clients file would. */
export async function registerClient(server: TestServer, metadata: Record<string, unknown>): Promise<OidcClient> {
  const now = Date.now();
  const { client } = registrationFromMetadata(metadata, now);
  await server.domain.oidc.clients.save(client, now);
  return client;
}

export interface TestUser {
  row: OidcUserRow;
  login: string;
  password: string;
}

/** A new user with a unique login; with `totp`, a TOTP secret is enrolled and returned. */
export async function createUser(server: TestServer, options: { totp?: boolean } = {}): Promise<TestUser & { totpSecret?: string }> {
  const login = `user-${randomBytes(6).toString("hex")}`;
  const password = `pw-${randomBytes(9).toString("base64url")}`;
  const users = server.domain.oidc.users;
  let row = await users.create({ login, password, name: "Test User", email: `${login}@example.com` });
  if (!options.totp) return { row, login, password };
  const totpSecret = await users.enrolTotp(row.id);
  row = (await users.find(row.id))!;
  return { row, login, password, totpSecret };
}

/** A PKCE pair (RFC 7636): verifier and its S256 challenge. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** An RFC 7523 client assertion for private_key_jwt. */
export function clientAssertion(privateKey: CryptoKey, clientId: string, audience: string | string[], jti = randomUUID()): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: "ES256" })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime("60s")
    .setJti(jti)
    .sign(privateKey);
}

/** The Authorization header of client_secret_basic (RFC 6749 §2.3.1). */
export function basicAuthorization(clientId: string, secret: string): string {
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, "+");
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`).toString("base64")}`;
}

export interface ParReply {
  status: number;
  headers: Headers;
  location: string | undefined;
  text: string;
  json: Record<string, unknown> | undefined;
}

/** POSTs to the PAR endpoint; `body` is form-encoded unless a string with its own content type is given. */
export function postPar(
  server: TestServer,
  body: Record<string, string | undefined> | URLSearchParams | string,
  headers: Record<string, string> = {},
): Promise<ParReply> {
  return postForm(server, parPath, body, headers);
}

/**
 * POSTs a form to a client endpoint (PAR, token, revocation, introspection);
 * `body` is form-encoded (undefined values left out) unless a string is given,
 * whose content type then belongs in `headers`.
 */
export async function postForm(
  server: TestServer,
  path: string,
  body: Record<string, string | undefined> | URLSearchParams | string,
  headers: Record<string, string> = {},
): Promise<ParReply> {
  const form = typeof body === "string" ? body : (body instanceof URLSearchParams ? body : definedParams(body)).toString();
  const response = await fetch(new URL(path, server.url), {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json", ...headers },
    body: form,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, location: response.headers.get("location") ?? undefined, text, json: jsonOrUndefined(text) };
}

/** The body parsed as a JSON object, or undefined when it is not JSON. */
export function jsonOrUndefined(text: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** The stored one-time record behind a bearer value (authorization code, request_uri secret). */
export function findRecord<K extends OneTimeKind>(server: TestServer, kind: K, value: string): Promise<OneTimeRecord<K> | undefined> {
  return new OneTimeRecords(server.database).find(kind, storedKeyOf(value));
}

/** The stored authorization code, with its payload typed. */
export function findCode(server: TestServer, code: string): Promise<OneTimeRecord<"authorization_code"> | undefined> {
  return findRecord(server, "authorization_code", code);
}

/** The stored record of a request_uri (keyed by the hash of its random part). */
export function findRequestUri(server: TestServer, requestUri: string): Promise<OneTimeRecord<"request_uri"> | undefined> {
  expect(requestUri.startsWith(requestUriPrefix)).toBe(true);
  return findRecord(server, "request_uri", requestUri.slice(requestUriPrefix.length));
}

export const tokenPath = "/api/oidc/v1/token";
export const userinfoPath = "/api/oidc/v1/userinfo";

/** One answer of a JSON endpoint: the raw text, and the body parsed when it is JSON. */
export type TokenReply = ParReply;

/** POSTs to the token endpoint (see postForm). */
export function postToken(
  server: TestServer,
  body: Record<string, string | undefined> | URLSearchParams | string,
  headers: Record<string, string> = {},
): Promise<TokenReply> {
  return postForm(server, tokenPath, body, headers);
}

/** GET userinfo with `Authorization: Bearer <accessToken>`. */
export async function getUserinfo(server: TestServer, accessToken: string): Promise<{ status: number; headers: Headers; json: Record<string, unknown> }> {
  const response = await fetch(new URL(userinfoPath, server.url), { headers: { authorization: `Bearer ${accessToken}`, accept: "application/json" } });
  return { status: response.status, headers: response.headers, json: (await response.json()) as Record<string, unknown> };
}

/** What a client asks for at the authorization endpoint when a test needs a code. */
export interface CodeRequest {
  clientId: string;
  redirectUri: string;
  scope: string;
  /** Sent as is; a random state is sent when left out. */
  state?: string;
  nonce?: string;
  /** Sent with code_challenge_method=S256. */
  codeChallenge?: string;
  authorizationDetails?: unknown[];
}

/**
 * Drives the authorization flow over HTTP in `browser` up to the code: signs
 * the user in when the login page comes, allows on the consent page when it
 * comes (a browser already signed in, with a grant covering the scopes, gets
 * the code at once). Returns the code.
 */
export async function obtainCode(server: TestServer, browser: Browser, user: TestUser, request: CodeRequest): Promise<string> {
  const state = request.state ?? `state-${randomBytes(6).toString("hex")}`;
  let reply = await browser.get(
    authorizeUrl({
      client_id: request.clientId,
      redirect_uri: request.redirectUri,
      response_type: "code",
      scope: request.scope,
      state,
      nonce: request.nonce,
      code_challenge: request.codeChallenge,
      code_challenge_method: request.codeChallenge === undefined ? undefined : "S256",
      authorization_details: request.authorizationDetails === undefined ? undefined : JSON.stringify(request.authorizationDetails),
    }),
  );
  if (reply.location?.startsWith("/auth/login?")) reply = await signIn(browser, reply, user.login, user.password);
  if (reply.location?.startsWith("/auth/consent?")) reply = await submitPage(browser, reply, "consent", { decision: "allow" });
  return expectCodeRedirect(reply, { redirectUri: request.redirectUri, issuer: server.domain.oidc.issuer, state });
}
