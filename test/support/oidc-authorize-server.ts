import { afterAll, beforeAll } from "vitest";
import { totpCode } from "../../src/domain/credentials/totp.ts";
import { databaseTargets, type ScratchDatabase } from "./databases.ts";
import { authorizeUrl, Browser, expectCodeRedirect, expectErrorRedirect, pkce, registerClient, signIn, submitPage, type Reply, type TestUser } from "./oidc.ts";
import { startTestServer, type TestServer } from "./server.ts";

/*
 * The authorization endpoint's tests on SQLite (test/service/oidc-authorize-*.test.ts)
 * share one server with a web client, another client and a client that must
 * use PAR, and the calls and expectations below.
 */

export const sqlite = (await databaseTargets()).find((t) => t.name === "sqlite")!;

export const redirectUri = "https://rp.example/cb";
export const longRedirectUri = "https://rp.example/callback/long";
export const queryRedirectUri = "https://rp.example/with-query?tenant=a";
export const parOnlyRedirectUri = "https://par-only.example/cb";
/** A state that survives only if it is echoed byte for byte: spaces, &, =, %, +, #, non-ASCII. */
export const oddState = "st 1 & x=y/ü 日本 🔑 ?#%41+";
export const { challenge } = pkce();

let database: ScratchDatabase | undefined;
let server: TestServer | undefined;
let issuer: string;

export function live(): TestServer {
  if (!server) throw new Error("server not started");
  return server;
}

/** A valid request of the web client, with state and PKCE; overrides replace (undefined removes) parameters. */
export function params(overrides: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    client_id: "web-app",
    redirect_uri: redirectUri,
    response_type: "code",
    scope: "openid",
    state: oddState,
    code_challenge: challenge,
    code_challenge_method: "S256",
    ...overrides,
  };
}

export function browser(): Browser {
  return new Browser(live().url);
}

/** Where a redirect goes and the state it must carry; by default the web client's first URI and `oddState`. */
export interface Expected {
  /** Present and undefined: the redirect must carry no state. */
  state?: string | undefined;
  uri?: string;
}

export function expectedState(expected: Expected): string | undefined {
  return "state" in expected ? expected.state : oddState;
}

export function expectError(reply: Reply, error: string, expected: Expected = {}): URLSearchParams {
  return expectErrorRedirect(reply, { redirectUri: expected.uri ?? redirectUri, error, issuer, state: expectedState(expected) });
}

export function expectCode(reply: Reply, expected: Expected = {}): string {
  return expectCodeRedirect(reply, { redirectUri: expected.uri ?? redirectUri, issuer, state: expectedState(expected) });
}

/** A user signed in in `b` who has consented to `scope` for the web client; returns the code of that first flow. */
export async function signedInWithGrant(b: Browser, user: TestUser, scope = "openid"): Promise<string> {
  const afterLogin = await signIn(b, await b.get(authorizeUrl(params({ scope }))), user.login, user.password);
  return expectCode(await submitPage(b, afterLogin, "consent", { decision: "allow" }));
}

/** Six digits that are not the code of the current, previous or next time step (all of which would be accepted). */
export function wrongOtp(secret: string): string {
  const now = Date.now();
  const valid = new Set([-60_000, -30_000, 0, 30_000, 60_000].map((d) => totpCode(secret, now + d)));
  return ["000000", "111111", "222222", "333333", "444444", "555555"].find((c) => !valid.has(c))!;
}

/** Starts the shared server, with its three clients, before the tests of the file that calls it, and stops it after them. */
export function authorizeServer(): void {
  beforeAll(async () => {
    database = await sqlite.create();
    server = await startTestServer(database.url);
    issuer = server.domain.oidc.issuer;
    await registerClient(server, {
      client_id: "web-app",
      client_name: "Web App",
      token_endpoint_auth_method: "client_secret_basic",
      client_secret: "web-app-secret-0123456789",
      redirect_uris: [redirectUri, longRedirectUri, queryRedirectUri],
      scope: "openid profile email offline_access",
      authorization_details_types: ["payment_initiation", "account_information"],
    });
    await registerClient(server, {
      client_id: "other-app",
      token_endpoint_auth_method: "client_secret_post",
      client_secret: "other-app-secret-0123456789",
      redirect_uris: ["https://other.example/cb"],
      scope: "openid",
    });
    await registerClient(server, {
      client_id: "par-only-app",
      token_endpoint_auth_method: "client_secret_basic",
      client_secret: "par-only-secret-0123456789",
      redirect_uris: [parOnlyRedirectUri],
      scope: "openid",
      require_pushed_authorization_requests: true,
    });
  });

  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });
}
