import { randomBytes } from "node:crypto";
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from "jose";
import { expect } from "vitest";
import type { Browser} from "./oidc.ts";
import { basicAuthorization, obtainCode, postToken, registerClient, type TestUser } from "./oidc.ts";
import type { TestServer } from "./server.ts";
import type { Received, WebhookReceiver } from "./webhook-receiver.ts";

export const backchannelLogoutEvent = "http://schemas.openid.net/event/backchannel-logout";

/** A relying party registered with a backchannel_logout_uri on the receiver, at a path of its own. */
export interface LogoutRp {
  clientId: string;
  secret: string;
  redirectUri: string;
  /** The receiver's path its logout tokens arrive at. */
  path: string;
}

export async function registerLogoutRp(server: TestServer, receiver: WebhookReceiver, options: { sessionRequired?: boolean; listens?: boolean } = {}): Promise<LogoutRp> {
  const clientId = `bcl-${randomBytes(5).toString("hex")}`;
  const secret = `secret-${randomBytes(12).toString("hex")}`;
  const redirectUri = `https://${clientId}.example/cb`;
  const path = `/${clientId}/backchannel-logout`;
  await registerClient(server, {
    client_id: clientId,
    client_secret: secret,
    redirect_uris: [redirectUri],
    post_logout_redirect_uris: [`https://${clientId}.example/bye`],
    scope: "openid profile",
    ...(options.listens === false ? {} : { backchannel_logout_uri: receiver.url(path) }),
    ...(options.sessionRequired ? { backchannel_logout_session_required: true } : {}),
  });
  return { clientId, secret, redirectUri, path };
}

/** Signs `user` in to `rp` in `browser` (a session of its own unless the browser has one) and redeems the code: the ID token's claims. */
export async function signInTo(server: TestServer, browser: Browser, user: TestUser, rp: LogoutRp): Promise<{ idToken: string; sid: string; sub: string }> {
  const code = await obtainCode(server, browser, user, { clientId: rp.clientId, redirectUri: rp.redirectUri, scope: "openid profile" });
  const reply = await postToken(server, { grant_type: "authorization_code", code, redirect_uri: rp.redirectUri }, { authorization: basicAuthorization(rp.clientId, rp.secret) });
  expect(reply.status, reply.text).toBe(200);
  const idToken = reply.json!.id_token as string;
  const claims = JSON.parse(Buffer.from(idToken.split(".")[1]!, "base64url").toString("utf8")) as { sid: string; sub: string };
  expect(claims.sid).toMatch(/^[\w-]{43}$/);
  return { idToken, sid: claims.sid, sub: claims.sub };
}

/**
 * What a relying party does with a back-channel logout request (Back-Channel
 * Logout 1.0 section 2.6): a form POST with one logout_token, verified with
 * jose against the provider's published JWKS: signature, iss, aud, typ
 * `logout+jwt`, iat not older than the token's own short life.
 */
export async function verifiedLogoutToken(server: TestServer, request: Received, clientId: string): Promise<{ payload: JWTPayload; header: Record<string, unknown> }> {
  expect(request.headers["content-type"]).toBe("application/x-www-form-urlencoded");
  const form = new URLSearchParams(request.body);
  expect([...form.keys()]).toEqual(["logout_token"]);
  const token = form.get("logout_token")!;
  const issuer = server.domain.oidc.issuer;
  const jwks = createRemoteJWKSet(new URL(`${issuer}/api/oidc/v1/jwks`));
  const { payload } = await jwtVerify(token, jwks, { issuer, audience: clientId, typ: "logout+jwt", maxTokenAge: "5 minutes" });
  return { payload, header: decodeProtectedHeader(token) as Record<string, unknown> };
}
