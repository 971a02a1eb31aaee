/**
 * The peer for the OpenID Connect paths: node-oidc-provider configured for
 * the job shomei does for its demo client: PAR with client_secret_basic, PKCE
 * S256 (required), the code flow, refresh tokens for offline_access rotated
 * at every use, ES256 ID tokens. Its store is an unbounded in-memory map: the
 * package's own in-memory adapter is an LRU of 1,000 entries, under load it
 * would drop sessions and grants and the benchmark would measure login
 * redirects. Interactions complete on their own for one account (`demo`):
 * login, then consent to what was asked, as a user who clicks through would.
 * Reads the client secret from BENCH_CLIENT_SECRET; prints `ready <port>`.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair } from "jose";
import Provider, { type Adapter, type AdapterPayload } from "oidc-provider";

const accountId = "demo";
const records = new Map<string, AdapterPayload>();
const byGrant = new Map<string, Set<string>>();
const byUid = new Map<string, string>();

/** Every record kept until the process ends: a few minutes of benchmark fit in memory. */
class MemoryStore implements Adapter {
  constructor(private readonly model: string) {}
  private key(id: string): string {
    return `${this.model}:${id}`;
  }
  async upsert(id: string, payload: AdapterPayload): Promise<void> {
    const key = this.key(id);
    records.set(key, payload);
    if (payload.grantId) {
      let keys = byGrant.get(payload.grantId);
      if (!keys) byGrant.set(payload.grantId, (keys = new Set()));
      keys.add(key);
    }
    if (payload.uid) byUid.set(payload.uid, id);
  }
  async find(id: string): Promise<AdapterPayload | undefined> {
    return records.get(this.key(id));
  }
  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const id = byUid.get(uid);
    return id === undefined ? undefined : this.find(id);
  }
  async findByUserCode(): Promise<undefined> {
    return undefined;
  }
  async consume(id: string): Promise<void> {
    const record = records.get(this.key(id));
    if (record) record.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id: string): Promise<void> {
    records.delete(this.key(id));
  }
  async revokeByGrantId(grantId: string): Promise<void> {
    for (const key of byGrant.get(grantId) ?? []) records.delete(key);
    byGrant.delete(grantId);
  }
}

const server = http.createServer();
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const { privateKey } = await generateKeyPair("ES256", { extractable: true });

const provider = new Provider(issuer, {
  adapter: MemoryStore,
  clients: [
    {
      client_id: "demo-client",
      client_secret: process.env.BENCH_CLIENT_SECRET ?? "bench-client-secret",
      client_name: "demo app",
      token_endpoint_auth_method: "client_secret_basic",
      redirect_uris: [`${issuer}/demo/callback`],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      scope: "openid profile email offline_access",
      id_token_signed_response_alg: "ES256",
    },
  ],
  jwks: { keys: [{ ...(await exportJWK(privateKey)), alg: "ES256", use: "sig", kid: "bench" }] },
  cookies: { keys: ["bench cookie signing key, not a secret"] },
  pkce: { required: () => true },
  features: { pushedAuthorizationRequests: { enabled: true }, devInteractions: { enabled: false } },
  scopes: ["openid", "offline_access", "profile", "email"],
  claims: { openid: ["sub"], profile: ["name", "preferred_username"], email: ["email"] },
  rotateRefreshToken: true,
  findAccount: (_ctx, sub) => ({
    accountId: sub,
    claims: () => ({ sub, name: "Demo User", preferred_username: "demo", email: "demo@example.com" }),
  }),
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
});

/** The user signs in as `demo` and agrees to every scope asked for. */
async function completeInteraction(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === "login") {
    await provider.interactionFinished(req, res, { login: { accountId } }, { mergeWithLastSubmission: false });
    return;
  }
  const clientId = String(details.params.client_id);
  const grant = details.grantId ? await provider.Grant.find(details.grantId) : new provider.Grant({ accountId, clientId });
  if (!grant) throw new Error(`grant ${details.grantId} is gone`);
  grant.addOIDCScope(String(details.params.scope));
  await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
}

const callback = provider.callback();
server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
  if (req.url?.startsWith("/interaction/")) {
    completeInteraction(req, res).catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  } else if (req.url?.startsWith("/demo/callback")) {
    res.end("ok");
  } else {
    void callback(req, res);
  }
});
console.log(`ready ${issuer}`);
