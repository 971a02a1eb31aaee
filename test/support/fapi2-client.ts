import { randomBytes } from "node:crypto";
import * as oauth from "oauth4webapi";
import { expect } from "vitest";
import { Browser, clientRedirect, registerClient, signIn, submitPage, type TestUser } from "./oidc.ts";
import type { TestServer } from "./server.ts";

/*
 * A FAPI 2.0 relying party made with oauth4webapi (a certified FAPI client
 * library): private_key_jwt, PAR, PKCE S256, DPoP with the server's nonce,
 * and the user's part of the flow in a browser without JavaScript. Every
 * request is the library's own; a test changes one thing to break one rule.
 */

export const insecure = { [oauth.allowInsecureRequests]: true } as const;
export const fapiScope = "openid profile offline_access";

/** A registered client, its signing key, and the metadata it was registered with. */
export interface FapiClient {
  client: oauth.Client;
  redirectUri: string;
  key: oauth.CryptoKey;
  auth: oauth.ClientAuth;
}

/** Registers a private_key_jwt client with an ES256 key (and `extraKeys`' public halves), with or without the fapi2 profile. */
export async function registerFapiClient(
  server: TestServer,
  options: { profile?: "fapi2"; extraKeys?: oauth.CryptoKeyPair[]; metadata?: Record<string, unknown> } = {},
): Promise<FapiClient> {
  const clientId = `${options.profile ?? "plain"}-${randomBytes(4).toString("hex")}`;
  const redirectUri = `https://${clientId}.example/cb`;
  const pair = await oauth.generateKeyPair("ES256", { extractable: true });
  const publicJwks = [];
  for (const p of [pair, ...(options.extraKeys ?? [])]) {
    const jwk = await crypto.subtle.exportKey("jwk", p.publicKey);
    delete jwk.key_ops;
    delete jwk.ext;
    publicJwks.push(jwk);
  }
  await registerClient(server, {
    client_id: clientId,
    token_endpoint_auth_method: "private_key_jwt",
    jwks: { keys: publicJwks },
    redirect_uris: [redirectUri],
    scope: fapiScope,
    ...(options.profile ? { profile: options.profile } : {}),
    ...options.metadata,
  });
  return { client: { client_id: clientId }, redirectUri, key: pair.privateKey, auth: oauth.PrivateKeyJwt(pair.privateKey) };
}

export async function discover(server: TestServer): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(server.domain.oidc.issuer);
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oidc", ...insecure }));
}

/** Runs `call` and, when the server asks for a DPoP nonce (which the handle has now cached), once more: the library's documented pattern. */
export async function withNonceRetry<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!oauth.isDPoPNonceError(error)) throw error;
    return call();
  }
}

/** The parameters of a FAPI 2.0 pushed authorization request, PKCE included. */
export async function fapiParameters(fc: FapiClient): Promise<{ params: URLSearchParams; verifier: string; state: string; nonce: string }> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const params = new URLSearchParams({
    redirect_uri: fc.redirectUri,
    response_type: "code",
    scope: fapiScope,
    state,
    nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
  });
  return { params, verifier, state, nonce };
}

/** PAR (retrying for a nonce), as the library sends it with these options. */
export function push(
  as: oauth.AuthorizationServer,
  fc: FapiClient,
  params: URLSearchParams,
  options: { DPoP?: oauth.DPoPHandle; auth?: oauth.ClientAuth } = {},
): Promise<oauth.PushedAuthorizationResponse> {
  return withNonceRetry(async () => {
    const response = await oauth.pushedAuthorizationRequest(as, fc.client, options.auth ?? fc.auth, params, { ...(options.DPoP ? { DPoP: options.DPoP } : {}), ...insecure });
    return oauth.processPushedAuthorizationResponse(as, fc.client, response);
  });
}

/** The user's part: the authorization endpoint with client_id and request_uri, sign-in, consent; returns the callback's parameters. */
export async function authorizeInBrowser(server: TestServer, as: oauth.AuthorizationServer, fc: FapiClient, requestUri: string, user: TestUser): Promise<URLSearchParams> {
  const browser = new Browser(server.url);
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set("client_id", fc.client.client_id);
  url.searchParams.set("request_uri", requestUri);
  let reply = await browser.get(url.toString());
  if (reply.location?.startsWith("/auth/login?")) reply = await signIn(browser, reply, user.login, user.password);
  if (reply.location?.startsWith("/auth/consent?")) reply = await submitPage(browser, reply, "consent", { decision: "allow" });
  return clientRedirect(reply, fc.redirectUri);
}

/** PAR, then the browser, then the callback checked by the library (state, iss); returns what the token request needs. */
export async function authorize(
  server: TestServer,
  as: oauth.AuthorizationServer,
  fc: FapiClient,
  user: TestUser,
  DPoP?: oauth.DPoPHandle,
): Promise<{ callback: URLSearchParams; verifier: string; nonce: string; raw: URLSearchParams; expiresIn: number }> {
  const { params, verifier, state, nonce } = await fapiParameters(fc);
  const pushed = await push(as, fc, params, DPoP ? { DPoP } : {});
  const raw = await authorizeInBrowser(server, as, fc, pushed.request_uri, user);
  const callback = oauth.validateAuthResponse(as, fc.client, raw, state);
  return { callback, verifier, nonce, raw, expiresIn: pushed.expires_in };
}

/** The code exchanged (retrying for a nonce). */
export function redeem(
  as: oauth.AuthorizationServer,
  fc: FapiClient,
  a: { callback: URLSearchParams; verifier: string; nonce: string },
  DPoP?: oauth.DPoPHandle,
): Promise<oauth.TokenEndpointResponse> {
  return withNonceRetry(async () => {
    const response = await oauth.authorizationCodeGrantRequest(as, fc.client, fc.auth, a.callback, fc.redirectUri, a.verifier, { ...(DPoP ? { DPoP } : {}), ...insecure });
    return oauth.processAuthorizationCodeResponse(as, fc.client, response, { expectedNonce: a.nonce, requireIdToken: true });
  });
}

/** A refresh (retrying for a nonce). */
export function refresh(as: oauth.AuthorizationServer, fc: FapiClient, refreshToken: string, DPoP?: oauth.DPoPHandle): Promise<oauth.TokenEndpointResponse> {
  return withNonceRetry(async () => {
    const response = await oauth.refreshTokenGrantRequest(as, fc.client, fc.auth, refreshToken, { ...(DPoP ? { DPoP } : {}), ...insecure });
    return oauth.processRefreshTokenResponse(as, fc.client, response);
  });
}

/** What a failed call threw. */
export async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (e: unknown) => e,
  );
}

/**
 * Asserts the call failed with this OAuth error code in the body, and returns
 * its description. invalid_client comes with a Basic challenge, which the
 * library reports as a challenge carrying the response.
 */
export async function expectOAuthError(promise: Promise<unknown>, code: string): Promise<string> {
  const error = await failure(promise);
  if (error instanceof oauth.WWWAuthenticateChallengeError) {
    const body = (await error.response.json()) as { error: string; error_description: string };
    expect(body.error, body.error_description).toBe(code);
    return body.error_description;
  }
  expect(error, `expected ${code}`).toBeInstanceOf(oauth.ResponseBodyError);
  expect((error as oauth.ResponseBodyError).error, (error as oauth.ResponseBodyError).error_description).toBe(code);
  return (error as oauth.ResponseBodyError).error_description ?? "";
}
