import { createHash, randomBytes } from "node:crypto";
import { defaultAcrPolicy, type AuthMethod } from "../../src/domain/oidc/acr.ts";
import type { AuthorizationRequest } from "../../src/domain/oidc/authorization-request.ts";
import { validateAuthorizationRequest } from "../../src/domain/oidc/authorization-request.ts";
import { registrationFromMetadata, type ClientMetadata } from "../../src/domain/oidc/client-registration.ts";
import type { OidcClient } from "../../src/domain/oidc/client.ts";
import { AuthorizationFlow, type Step } from "../../src/domain/oidc/flow/authorization-flow.ts";
import { newId } from "../../src/domain/ids.ts";
import { SigningKeys } from "../../src/domain/oidc/keys/signing-keys.ts";
import type { OidcUserRow } from "../../src/domain/oidc/model.ts";
import { TokenService } from "../../src/domain/oidc/tokens/token-service.ts";
import { OidcUsers } from "../../src/domain/oidc/users.ts";
import { inMemoryOidcStores, InMemorySigningKeys, ManualClock } from "./in-memory/index.ts";

/*
 * The OIDC domain's authorization flow and token service, built as
 * src/app/compose-oidc.ts builds them but over the in-memory ports and a
 * clock the test moves: for unit tests that read as the rules.
 */

export const issuer = "https://op.example.test";
export const redirectUri = "https://rp.example.test/callback";
export const lifetimes = { interactionMs: 30 * 60_000, sessionMs: 8 * 3_600_000, codeMs: 60_000 };
export const tokenLifetimes = { accessTokenLifetimeSeconds: 300, refreshTokenLifetimeSeconds: 86_400, idTokenLifetimeSeconds: 600 };

const secretKey = randomBytes(32);

/** One line of signing keys for a whole test file: making an RSA key takes longer than the rules under test. */
const signingKeys = new SigningKeys(new InMemorySigningKeys(), secretKey, () => Date.UTC(2030, 0, 1));

/** A client registered with the metadata given over a confidential client allowed openid, profile, email and offline_access. */
export function client(metadata: Partial<ClientMetadata> = {}): OidcClient {
  return registrationFromMetadata(
    { client_id: "rp", client_secret: "a client secret of 32 characters", redirect_uris: [redirectUri], scope: "openid profile email offline_access", ...metadata },
    0,
  ).client;
}

/** A public client (PKCE, no secret) with the same scopes. */
export function publicClient(metadata: Partial<ClientMetadata> = {}): OidcClient {
  return client({ client_id: "spa", token_endpoint_auth_method: "none", client_secret: undefined, ...metadata });
}

/** A PKCE verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** The query of a redirect Step, which must be one. */
export function redirectParams(step: Step): URLSearchParams {
  if (step.kind !== "redirect") throw new Error(`expected a redirect, got the ${step.page} page`);
  const url = new URL(step.url);
  if (`${url.origin}${url.pathname}` !== redirectUri) throw new Error(`redirect to ${step.url}, not to the client`);
  return url.searchParams;
}

/** The code of a redirect Step, which must carry one. */
export function codeOf(step: Step): string {
  const params = redirectParams(step);
  const code = params.get("code");
  if (!code) throw new Error(`expected a code, got ${params.toString()}`);
  return code;
}

export class OidcDomain {
  readonly time = new ManualClock();
  readonly stores = inMemoryOidcStores();
  readonly users = new OidcUsers(this.stores.oidc, secretKey, this.time.clock);
  readonly keys = signingKeys;
  /** The methods each user's linked certificates perform (JPKI sign-in), as the test sets them. */
  readonly certificateMethods = new Map<string, AuthMethod[]>();
  readonly flow = new AuthorizationFlow(
    this.stores.oidc,
    this.users,
    this.stores.clients,
    this.stores.oneTime,
    {
      issuer,
      policy: defaultAcrPolicy,
      interactionLifetimeMs: lifetimes.interactionMs,
      sessionLifetimeMs: lifetimes.sessionMs,
      codeLifetimeMs: lifetimes.codeMs,
      secretKey,
      oneOffAuthorizationDetailsTypes: new Set(),
    },
    this.time.clock,
    async (userId) => this.certificateMethods.get(userId) ?? [],
  );
  /** The users whose linked JPKI certificate is current and good (the ID token's jpki_verified), as the test sets them. */
  readonly jpkiVerified = new Set<string>();
  readonly tokens = new TokenService(this.stores.oneTime, this.stores.tokens, this.stores.oidc, this.keys, { issuer, ...tokenLifetimes }, this.time.clock, async (userId) =>
    this.jpkiVerified.has(userId),
  );

  /** Registers the client (see `client`) and returns it. */
  async register(registration: OidcClient = client()): Promise<OidcClient> {
    await this.stores.clients.save(registration, this.time.now);
    return registration;
  }

  /**
   * A user, stored directly: the flow never checks a password, so none is
   * hashed. `totp` gives the user a (sealed) TOTP secret, which is all the
   * flow reads of it: the user can then reach `high`.
   */
  async user(options: { totp?: boolean; name?: string } = {}): Promise<OidcUserRow> {
    const id = newId();
    const row: OidcUserRow = {
      id,
      login: `user-${id}`,
      passwordHash: "not checked here",
      totpSecretSealed: options.totp ? "sealed TOTP secret" : null,
      totpLastStep: null,
      name: options.name ?? null,
      localizedNames: [],
      email: null,
      createdAt: this.time.now,
    };
    await this.stores.oidc.insertUser(row);
    return row;
  }

  /** A validated authorization request of the client; `state` and `scope=openid` unless the parameters say otherwise. */
  request(registration: OidcClient, params: Record<string, string> = {}): AuthorizationRequest {
    const all = new Map(Object.entries({ response_type: "code", scope: "openid", state: "st-1", ...params }));
    return validateAuthorizationRequest(all, registration, redirectUri);
  }

  /** The first step of a request from `browser`, signed in with `sessionId` or not. */
  start(registration: OidcClient, params: Record<string, string> = {}, sessionId?: string, browser = "browser-1"): Promise<Step> {
    return this.flow.start(registration, this.request(registration, params), browser, sessionId);
  }

  /**
   * A code as a person gets it: signed in with `amr`, through the consent
   * page when one is shown. Returns the code and the session.
   */
  async code(registration: OidcClient, user: OidcUserRow, params: Record<string, string> = {}, amr: string[] = ["pwd"]): Promise<{ code: string; sessionId: string }> {
    const sessionId = await this.flow.startSession(user, amr);
    let step = await this.start(registration, params, sessionId);
    if (step.kind === "page" && step.page === "consent") {
      const interaction = await this.flow.load(step.interactionId, "browser-1");
      step = await this.flow.consent(interaction, "allow", "browser-1", sessionId);
    }
    return { code: codeOf(step), sessionId };
  }
}
