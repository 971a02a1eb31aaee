import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { expect } from "vitest";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { CreateOAuthClientRequestSchema} from "../../gen/service/verify/v2/oauth_client_service_pb.ts";
import { OAuthClientService } from "../../gen/service/verify/v2/oauth_client_service_pb.ts";
import { bearer } from "./certificate-rpc.ts";
import { dpopProof, type DpopKey } from "./dpop.ts";
import { basicAuthorization } from "./oidc.ts";
import type { TestServer } from "./server.ts";

/** The OAuthClientService of an account, called with its API token. */
export function oauthClientService(server: TestServer, apiToken: string): Client<typeof OAuthClientService> {
  return createClient(OAuthClientService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", useBinaryFormat: true, interceptors: [bearer(apiToken)] }));
}

export interface RegisteredApiClient {
  clientId: string;
  secret: string;
}

/** Registers a client_secret_basic client for the account of the API token, through the RPC. */
export async function registerApiClient(server: TestServer, apiToken: string, request: MessageInitShape<typeof CreateOAuthClientRequestSchema> = {}): Promise<RegisteredApiClient> {
  const created = await oauthClientService(server, apiToken).createOAuthClient({ tokenEndpointAuthMethod: "client_secret_basic", ...request });
  return { clientId: created.oauthClient!.clientId, secret: created.clientSecret };
}

export interface TokenAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** POSTs a form to one of the provider's client endpoints (token, revoke, introspect) with client_secret_basic. */
export async function postClientForm(server: TestServer, endpoint: "token" | "revoke" | "introspect", client: RegisteredApiClient, form: Record<string, string>, headers: Record<string, string> = {}): Promise<TokenAnswer> {
  const { status, body } = await sendClientForm(server, endpoint, client, form, headers);
  return { status, body };
}

/** As postClientForm, with the answer's headers. */
async function sendClientForm(server: TestServer, endpoint: "token" | "revoke" | "introspect", client: RegisteredApiClient, form: Record<string, string>, headers: Record<string, string>): Promise<TokenAnswer & { headers: Headers }> {
  const response = await fetch(`${server.url}/api/oidc/v1/${endpoint}`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Authorization: basicAuthorization(client.clientId, client.secret), ...headers },
    body: new URLSearchParams(form),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, headers: response.headers };
}

/**
 * A client_credentials access token (DPoP-bound when a key is given); fails
 * the test when none is issued. When the server asks for a DPoP nonce, the
 * request is sent again once with it, as a client does.
 */
export async function clientCredentialsToken(server: TestServer, client: RegisteredApiClient, options: { scope?: string; dpop?: DpopKey } = {}): Promise<string> {
  const form = { grant_type: "client_credentials", ...(options.scope !== undefined ? { scope: options.scope } : {}) };
  const request = async (nonce?: string) => {
    const headers: Record<string, string> = options.dpop ? { DPoP: await dpopProof(options.dpop, { htu: `${server.config.baseUrl}/api/oidc/v1/token`, ...(nonce ? { nonce } : {}) }) } : {};
    return sendClientForm(server, "token", client, form, headers);
  };
  let answer = await request();
  if (answer.status === 400 && answer.body.error === "use_dpop_nonce") answer = await request(answer.headers.get("dpop-nonce") ?? undefined);
  expect(answer).toMatchObject({ status: 200, body: { token_type: options.dpop ? "DPoP" : "Bearer" } });
  return answer.body.access_token as string;
}

/**
 * "Authorization: DPoP <token>" and a fresh proof on every call, whose htu is
 * the call's URL under the server's base URL (RFC 9449 section 7).
 */
export function dpopAuthorization(server: TestServer, key: DpopKey, accessToken: string, options: { nonce?: string } = {}): Interceptor {
  return (next) => async (req) => {
    const path = new URL(req.url).pathname;
    req.header.set("Authorization", `DPoP ${accessToken}`);
    req.header.set("DPoP", await dpopProof(key, { htu: `${server.config.baseUrl}${path}`, accessToken, ...(options.nonce !== undefined ? { nonce: options.nonce } : {}) }));
    return next(req);
  };
}
