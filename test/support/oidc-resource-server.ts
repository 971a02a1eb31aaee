import { randomBytes } from "node:crypto";
import type { JSONWebKeySet } from "jose";
import { afterAll, beforeAll, expect } from "vitest";
import type { DatabaseTarget, ScratchDatabase } from "./databases.ts";
import {
  authorizeUrl,
  basicAuthorization,
  Browser,
  createUser,
  expectCodeRedirect,
  jsonOrUndefined,
  pkce,
  registerClient,
  signIn,
  submitPage,
  type Reply,
  type TestUser,
} from "./oidc.ts";
import { startTestServer, type TestServer } from "./server.ts";

/*
 * One server per database target with three registered clients, and the
 * calls the tests of what surrounds the tokens make through real HTTP:
 * discovery, the JWKS, userinfo, revocation, introspection and the grant
 * management API (test/service/oidc-discovery-jwks.test.ts,
 * oidc-token-resources.test.ts, oidc-grant-management.test.ts). Tokens come
 * from the real flow: authorize, login, consent, code, token endpoint.
 */

export const paths = {
  token: "/api/oidc/v1/token",
  userinfo: "/api/oidc/v1/userinfo",
  jwks: "/api/oidc/v1/jwks",
  revoke: "/api/oidc/v1/revoke",
  introspect: "/api/oidc/v1/introspect",
  grants: "/api/oidc/v1/grants",
};

export type ClientKey = "app" | "other" | "pub";

export interface ClientSetup {
  id: string;
  secret?: string;
  redirectUri: string;
}

export const clients: Record<ClientKey, ClientSetup> = {
  app: { id: "rs-app", secret: "rs-app-secret-0123456789abcdef", redirectUri: "https://app.example/cb" },
  other: { id: "rs-other", secret: "rs-other-secret-0123456789abcdef", redirectUri: "https://other.example/cb" },
  pub: { id: "rs-public", redirectUri: "https://public.example/cb" },
};

export const paymentDetails = [
  {
    type: "payment_initiation",
    actions: ["initiate", "status"],
    locations: ["https://bank.example/payments"],
    instructedAmount: { currency: "EUR", amount: "123.50" },
    creditorName: "Merchant A",
    creditorAccount: { iban: "DE02100100109307118603" },
  },
];

/** A standing permission (not one-off): an approval of it is remembered. */
export const accountDetails = [{ type: "account_information", actions: ["list_accounts", "read_balances"], locations: ["https://bank.example/accounts"] }];

/** One answer of a JSON endpoint: status, headers, raw text and the parsed body when it is JSON. */
export interface JsonReply {
  status: number;
  headers: Headers;
  text: string;
  json: Record<string, unknown> | undefined;
}

/** What the token endpoint answered for a code. */
export interface Issued {
  access: string;
  refresh: string | undefined;
  idToken: string | undefined;
  grantId: string;
  body: Record<string, unknown>;
}

/**
 * Starts the server before the tests of the describe block it is called in
 * (and stops it after them), with the clients registered; returns the calls.
 */
export function resourceServer(target: DatabaseTarget) {
  let database: ScratchDatabase | undefined;
  let server: TestServer | undefined;
  let issuer: string;

  const live = (): TestServer => {
    if (!server) throw new Error("server not started");
    return server;
  };

  async function call(
    method: string,
    path: string,
    options: { headers?: Record<string, string>; form?: Record<string, string | undefined> } = {},
  ): Promise<JsonReply> {
    const headers: Record<string, string> = { accept: "application/json", ...options.headers };
    let body: string | undefined;
    if (options.form) {
      const form = new URLSearchParams();
      for (const [name, value] of Object.entries(options.form)) if (value !== undefined) form.append(name, value);
      body = form.toString();
      headers["content-type"] = "application/x-www-form-urlencoded";
    }
    const response = await fetch(new URL(path, live().url), { method, redirect: "manual", headers, ...(body !== undefined ? { body } : {}) });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, json: jsonOrUndefined(text) };
  }

  /** The client's credentials: an Authorization header for confidential clients, client_id in the form for the public one. */
  function credentials(client: ClientKey): { headers: Record<string, string>; form: Record<string, string> } {
    const c = clients[client];
    return c.secret ? { headers: { authorization: basicAuthorization(c.id, c.secret) }, form: {} } : { headers: {}, form: { client_id: c.id } };
  }

  /** POSTs a form to a client-authenticated endpoint as `client` (no credentials when `client` is undefined). */
  function asClient(path: string, client: ClientKey | undefined, form: Record<string, string | undefined>): Promise<JsonReply> {
    if (!client) return call("POST", path, { form });
    const auth = credentials(client);
    return call("POST", path, { headers: auth.headers, form: { ...auth.form, ...form } });
  }

  const revoke = (client: ClientKey | undefined, form: Record<string, string | undefined>) => asClient(paths.revoke, client, form);
  const introspect = (client: ClientKey | undefined, form: Record<string, string | undefined>) => asClient(paths.introspect, client, form);
  const refresh = (client: ClientKey, refreshToken: string) => asClient(paths.token, client, { grant_type: "refresh_token", refresh_token: refreshToken });

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const userinfo = (token: string, method: "GET" | "POST" = "GET") => call(method, paths.userinfo, { headers: bearer(token) });

  /**
   * Drives the authorization flow in `browser` up to the redirect with the
   * code: signs in when the login page comes and allows on the consent page
   * when it comes. Returns the code and whether consent was asked.
   */
  async function authorize(
    browser: Browser,
    user: TestUser,
    client: ClientKey,
    request: { scope: string; verifierChallenge: string; nonce?: string; authorizationDetails?: unknown[] },
  ): Promise<{ code: string; consentShown: boolean }> {
    const state = `st-${randomBytes(6).toString("hex")}`;
    let reply: Reply = await browser.get(
      authorizeUrl({
        client_id: clients[client].id,
        redirect_uri: clients[client].redirectUri,
        response_type: "code",
        scope: request.scope,
        state,
        nonce: request.nonce,
        code_challenge: request.verifierChallenge,
        code_challenge_method: "S256",
        authorization_details: request.authorizationDetails ? JSON.stringify(request.authorizationDetails) : undefined,
      }),
    );
    if (reply.location?.startsWith("/auth/login?")) reply = await signIn(browser, reply, user.login, user.password);
    const consentShown = reply.location?.startsWith("/auth/consent?") ?? false;
    if (consentShown) reply = await submitPage(browser, reply, "consent", { decision: "allow" });
    return { code: expectCodeRedirect(reply, { redirectUri: clients[client].redirectUri, issuer, state }), consentShown };
  }

  /** Exchanges a code at the token endpoint (client_secret_basic, or client_id for the public client); asserts success. */
  async function exchange(client: ClientKey, code: string, verifier: string): Promise<Issued> {
    const reply = await asClient(paths.token, client, {
      grant_type: "authorization_code",
      code,
      redirect_uri: clients[client].redirectUri,
      code_verifier: verifier,
    });
    expect(reply.status, reply.text).toBe(200);
    const body = reply.json!;
    expect(body.token_type).toBe("Bearer");
    expect(body.access_token).toEqual(expect.any(String));
    expect(body.grant_id).toEqual(expect.any(String));
    return {
      access: body.access_token as string,
      refresh: body.refresh_token as string | undefined,
      idToken: body.id_token as string | undefined,
      grantId: body.grant_id as string,
      body,
    };
  }

  /** A whole flow in a new browser (or the one given) for a user (a new one unless given): the tokens. */
  async function tokensFor(
    client: ClientKey,
    scope: string,
    options: { user?: TestUser; browser?: Browser; authorizationDetails?: unknown[] } = {},
  ): Promise<Issued & { user: TestUser; browser: Browser; consentShown: boolean }> {
    const user = options.user ?? (await createUser(live()));
    const browser = options.browser ?? new Browser(live().url);
    const { verifier, challenge } = pkce();
    const { code, consentShown } = await authorize(browser, user, client, {
      scope,
      verifierChallenge: challenge,
      nonce: `n-${randomBytes(4).toString("hex")}`,
      ...(options.authorizationDetails ? { authorizationDetails: options.authorizationDetails } : {}),
    });
    return { ...(await exchange(client, code, verifier)), user, browser, consentShown };
  }

  async function fetchJwks(): Promise<JSONWebKeySet> {
    const reply = await call("GET", paths.jwks);
    expect(reply.status, reply.text).toBe(200);
    return reply.json as unknown as JSONWebKeySet;
  }

  function expectInvalidClient(reply: JsonReply): void {
    expect(reply.status, reply.text).toBe(401);
    expect(reply.json?.error).toBe("invalid_client");
    expect(reply.headers.get("www-authenticate")).toMatch(/^Basic realm="shomei"/);
    expect(reply.headers.get("cache-control")).toBe("no-store");
  }

  function expectOAuthError(reply: JsonReply, status: number, error: string): void {
    expect(reply.status, reply.text).toBe(status);
    expect(reply.json?.error, reply.text).toBe(error);
    expect(reply.json?.error_description).toMatch(/\S/);
  }

  /** 401 with an RFC 6750 challenge naming invalid_token. */
  function expectInvalidToken(reply: JsonReply): void {
    expect(reply.status, reply.text).toBe(401);
    expect(reply.headers.get("www-authenticate")).toMatch(/^Bearer realm="shomei", error="invalid_token"/);
    expect(reply.json?.error).toBe("invalid_token");
    expect(reply.json).not.toHaveProperty("sub");
  }

  /** Exactly `{"active":false}`: nothing else about the token leaks. */
  function expectInactive(reply: JsonReply): void {
    expect(reply.status, reply.text).toBe(200);
    expect(reply.headers.get("content-type")).toMatch(/^application\/json/);
    expect(reply.text).toBe('{"active":false}');
  }

  beforeAll(async () => {
    database = await target.create();
    server = await startTestServer(database.url);
    issuer = server.domain.oidc.issuer;
    await registerClient(server, {
      client_id: clients.app.id,
      client_name: "Resource App",
      token_endpoint_auth_method: "client_secret_basic",
      client_secret: clients.app.secret,
      redirect_uris: [clients.app.redirectUri],
      scope: "openid profile email offline_access",
      authorization_details_types: ["payment_initiation", "account_information"],
    });
    await registerClient(server, {
      client_id: clients.other.id,
      client_name: "Other App",
      token_endpoint_auth_method: "client_secret_basic",
      client_secret: clients.other.secret,
      redirect_uris: [clients.other.redirectUri],
      scope: "openid profile email offline_access",
    });
    await registerClient(server, {
      client_id: clients.pub.id,
      client_name: "Public App",
      token_endpoint_auth_method: "none",
      redirect_uris: [clients.pub.redirectUri],
      scope: "openid offline_access",
    });
  });

  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  return {
    live,
    /** The provider's issuer, once the server has started. */
    issuer: () => issuer,
    call,
    asClient,
    revoke,
    introspect,
    refresh,
    bearer,
    userinfo,
    authorize,
    exchange,
    tokensFor,
    fetchJwks,
    expectInvalidClient,
    expectOAuthError,
    expectInvalidToken,
    expectInactive,
  };
}
