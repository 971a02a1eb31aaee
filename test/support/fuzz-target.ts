import { expect } from "vitest";
import { seedDemo } from "../../src/app/mock/demo-seed.ts";
import { seedOidcDemo } from "../../src/app/mock/oidc-demo-seed.ts";
import { statusRecords } from "./certificate-rpc.ts";
import { authorizeUrl, basicAuthorization, Browser, csrfOf, expectPage, obtainCode, postToken } from "./oidc.ts";
import type { Procedure } from "./rpc-procedures.ts";
import type { TestServer } from "./server.ts";

/** An interaction page left open in a browser: what a form post to it needs to get past the first checks. */
export interface OpenInteraction {
  page: "login" | "reauth" | "consent";
  /** "/auth/<page>?interaction=<id>" */
  path: string;
  id: string;
  cookie: string;
  csrf: string;
}

/**
 * What the fuzz cases may use to get past the first checks of each endpoint:
 * the mock seed's API token and ids, the demo client's credentials, tokens of
 * a real sign-in, and open interaction pages.
 */
export interface FuzzTarget {
  procedures: Procedure[];
  apiToken: string;
  /** The server's body limit: "oversize" bodies exceed it. */
  maxBodyBytes: number;
  /** Real ids of the demo account (certificates, user, statuses), for RPC fields. */
  ids: string[];
  issuer: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  postLogoutRedirectUri: string;
  accessToken: string;
  refreshToken: string;
  idToken: string;
  grantId: string;
  /** Tokens of a second code exchange, for the cases that may revoke or rotate what they send. */
  spareAccessToken: string;
  spareRefreshToken: string;
  /** The Cookie header of the signed-in browser. */
  signedInCookie: string;
  /** The Cookie header of another signed-in browser, for end-session cases (which may end its session). */
  leavingCookie: string;
  interactions: OpenInteraction[];
}

async function openInteraction(browser: Browser, query: Record<string, string>, page: OpenInteraction["page"]): Promise<OpenInteraction> {
  const path = expectPage(await browser.get(authorizeUrl(query)), page);
  const shown = await browser.get(path);
  expect(shown.status, shown.body).toBe(200);
  return { page, path, id: new URL(path, browser.base).searchParams.get("interaction")!, cookie: browser.jar.header()!, csrf: csrfOf(shown.body) };
}

/** Seeds the mock demo data (as `npm start` does), signs the demo user in once and opens interaction pages. */
export async function prepareFuzzTarget(server: TestServer, dataDir: string, procedures: Procedure[]): Promise<FuzzTarget> {
  const demo = await seedDemo(server.domain, dataDir);
  const oidcDemo = await seedOidcDemo(server.domain.oidc, dataDir, Date.now());
  const account = await server.domain.accounts.get(demo.accountName);
  const statusIds = (await Promise.all(demo.certificates.map((c) => statusRecords(server, account.id, c.id)))).flat().map((s) => s.id);

  const base = { client_id: oidcDemo.clientId, redirect_uri: oidcDemo.redirectUri, response_type: "code" };
  const signedIn = new Browser(server.url);
  const row = (await server.domain.oidc.users.findByLogin(oidcDemo.userLogin))!;
  const user = { row, login: oidcDemo.userLogin, password: oidcDemo.userPassword };
  const exchange = async (browser = signedIn) => {
    const code = await obtainCode(server, browser, user, { clientId: oidcDemo.clientId, redirectUri: oidcDemo.redirectUri, scope: "openid profile offline_access" });
    const tokens = await postToken(server, { grant_type: "authorization_code", code, redirect_uri: oidcDemo.redirectUri }, {
      authorization: basicAuthorization(oidcDemo.clientId, oidcDemo.clientSecret),
    });
    expect(tokens.status, tokens.text).toBe(200);
    return tokens.json as Record<string, string>;
  };
  const json = await exchange();
  const spare = await exchange();
  const leaving = new Browser(server.url);
  await exchange(leaving);

  const interactions: OpenInteraction[] = [];
  for (let i = 0; i < 4; i++) interactions.push(await openInteraction(new Browser(server.url), { ...base, scope: "openid", state: `s${i}` }, "login"));
  for (let i = 0; i < 3; i++) interactions.push(await openInteraction(signedIn, { ...base, scope: "openid email", state: `c${i}` }, "consent"));
  for (let i = 0; i < 3; i++) interactions.push(await openInteraction(signedIn, { ...base, scope: "openid", acr_values: "high", state: `r${i}` }, "reauth"));

  return {
    procedures,
    apiToken: demo.token,
    maxBodyBytes: server.config.maxBodyBytes,
    ids: [...demo.certificates.map((c) => c.id), demo.userId, ...statusIds],
    issuer: server.domain.oidc.issuer,
    clientId: oidcDemo.clientId,
    clientSecret: oidcDemo.clientSecret,
    redirectUri: oidcDemo.redirectUri,
    postLogoutRedirectUri: `${server.domain.oidc.issuer}/`,
    accessToken: json.access_token!,
    refreshToken: json.refresh_token!,
    idToken: json.id_token!,
    grantId: json.grant_id!,
    spareAccessToken: spare.access_token!,
    spareRefreshToken: spare.refresh_token!,
    signedInCookie: signedIn.jar.header()!,
    leavingCookie: leaving.jar.header()!,
    interactions,
  };
}
