import { randomBytes } from "node:crypto";
import type { Clock } from "../../clock.ts";
import type { LoginThrottle } from "../../credentials/login-throttle.ts";
import { DomainError } from "../../errors.ts";
import type { OidcClient } from "../client.ts";
import { randomToken, sha256Hex } from "../flow/secrets.ts";
import { OAuthError } from "../oauth-error.ts";
import { checkServerCalledUris } from "../server-called-uris.ts";
import type { ClientStore } from "../stores.ts";
import { bearerValue, invalidRegistrationToken, tokenMatches } from "./bearer-credential.ts";
import type { InitialAccessTokens } from "./initial-access-tokens.ts";
import { parsedMetadataJson, registrationAnswer, requestedMetadata, validatedClient } from "./registration-metadata.ts";
import type { ClientRegistrationStore } from "./stores.ts";

/** Who may register: nobody (the default), holders of an initial access token, or anyone. */
export type RegistrationPolicy = "off" | "token" | "open";

export interface ClientRegistrationOptions {
  policy: RegistrationPolicy;
  /** The registration endpoint's URL; a client's configuration endpoint is below it. */
  endpoint: string;
  /** Whether a backchannel_logout_uri or jwks_uri may be http:// or a loopback or private address (SHOMEI_WEBHOOK_ALLOW_PRIVATE); not given: no. */
  allowPrivateUris?: boolean;
}

/** Where a registration request comes from. */
export interface RegistrationCaller {
  authorization: string | undefined;
  remoteAddress: string;
}

/** The shape of the client_ids this service issues: 128 random bits, base64url. */
function newClientId(): string {
  return randomBytes(16).toString("base64url");
}

/**
 * Dynamic client registration (RFC 7591) and its management (RFC 7592).
 * A registration goes through the same validation as `shomei client add`
 * (registration-metadata.ts). Each client that registers itself gets a
 * registration access token, the only credential of its configuration
 * endpoint: kept as its SHA-256, compared in constant time, and replaced by
 * a new one in the answer of every read and update (RFC 7592 section 3
 * allows it; only its hash can be kept, so it can only be shown when made),
 * so a token is good for one call. It manages only its own client: a
 * foreign or unknown client_id is answered as a wrong token is.
 */
export class ClientRegistration {
  constructor(
    private readonly clients: Pick<ClientStore, "find" | "delete">,
    private readonly registrations: ClientRegistrationStore,
    private readonly initialTokens: InitialAccessTokens,
    private readonly limit: Pick<LoginThrottle, "admit">,
    private readonly clock: Clock,
    private readonly options: ClientRegistrationOptions,
  ) {}

  /** A backchannel_logout_uri and a jwks_uri are called by this server: the network rule of `shomei client add` holds here too. */
  private checkCalledUris(client: OidcClient): void {
    try {
      checkServerCalledUris(client, this.options.allowPrivateUris ?? false);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      throw new OAuthError("invalid_client_metadata", error.message);
    }
  }

  get enabled(): boolean {
    return this.options.policy !== "off";
  }

  get endpoint(): string {
    return this.options.endpoint;
  }

  /**
   * RFC 7591 section 3.1: registers the client the body's JSON describes;
   * the answer is the only time its secret and first token are shown. The
   * caller is checked (token, rate limit) before the body is parsed.
   */
  async register(body: string, caller: RegistrationCaller): Promise<Record<string, unknown>> {
    if (!this.enabled) throw new OAuthError("invalid_request", "dynamic client registration is off");
    if (this.options.policy === "token") {
      const token = bearerValue(caller.authorization);
      if (token === undefined || !(await this.initialTokens.accepts(token))) {
        throw invalidRegistrationToken("registration needs a valid initial access token (Authorization: Bearer)");
      }
    }
    await this.admit(caller);
    const requested = requestedMetadata(parsedMetadataJson(body), "register");
    const now = this.clock();
    const { client, generatedSecret } = validatedClient(requested.metadata, newClientId(), null, now);
    this.checkCalledUris(client);
    const accessToken = randomToken();
    if (!(await this.registrations.insert(client, sha256Hex(accessToken), now))) {
      // 128 random bits do not collide; if they ever did, nothing was stored and the client may try again.
      throw new OAuthError("temporarily_unavailable", "the registration could not be stored; try again", { status: 503 });
    }
    return registrationAnswer(client, { clientSecret: generatedSecret, registrationAccessToken: accessToken, registrationClientUri: this.clientUri(client.clientId) });
  }

  /** RFC 7592 section 2.1: the client's registration, with a new registration access token. */
  async read(clientId: string, authorization: string | undefined): Promise<Record<string, unknown>> {
    const storedHash = await this.authorize(clientId, authorization);
    const client = await this.clients.find(clientId);
    const accessToken = randomToken();
    if (!client || !(await this.registrations.rotate(clientId, storedHash, sha256Hex(accessToken), this.clock()))) throw this.refusal();
    return registrationAnswer(client, { registrationAccessToken: accessToken, registrationClientUri: this.clientUri(clientId) });
  }

  /**
   * RFC 7592 section 2.2: replaces the client's metadata with the request's
   * (what it leaves out returns to its default), validated as a
   * registration is. Its secret stays, unless its method no longer uses one,
   * or a new secret is made when it starts to.
   */
  async update(clientId: string, authorization: string | undefined, body: string): Promise<Record<string, unknown>> {
    const storedHash = await this.authorize(clientId, authorization);
    const current = await this.clients.find(clientId);
    if (!current) throw this.refusal();
    const requested = requestedMetadata(parsedMetadataJson(body), "update");
    if (requested.clientId !== clientId) throw new OAuthError("invalid_client_metadata", "client_id: must be the client's own client_id");
    if (requested.clientSecret !== undefined) {
      // RFC 7592 section 2.2: a client_secret sent back must be the current one; a client never chooses its own.
      if (typeof requested.clientSecret !== "string" || !tokenMatches(requested.clientSecret, current.secretHash ?? undefined)) {
        throw new OAuthError("invalid_client_metadata", "client_secret: is not the client's current secret");
      }
    }
    const { client, generatedSecret } = validatedClient(requested.metadata, clientId, current.secretHash, current.createdAt);
    this.checkCalledUris(client);
    const accessToken = randomToken();
    if (!(await this.registrations.replace(client, storedHash, sha256Hex(accessToken), this.clock()))) throw this.refusal();
    return registrationAnswer(client, { clientSecret: generatedSecret, registrationAccessToken: accessToken, registrationClientUri: this.clientUri(clientId) });
  }

  /** RFC 7592 section 2.3: removes the client; its grants and tokens stop working at once (ClientStore.delete). */
  async remove(clientId: string, authorization: string | undefined): Promise<void> {
    await this.authorize(clientId, authorization);
    if (!(await this.clients.delete(clientId, this.clock()))) throw this.refusal();
  }

  /** The client's configuration endpoint (RFC 7592 registration_client_uri). */
  clientUri(clientId: string): string {
    return `${this.options.endpoint}/${encodeURIComponent(clientId)}`;
  }

  /** The stored hash of the client's registration access token, once the presented token matches it. */
  private async authorize(clientId: string, authorization: string | undefined): Promise<string> {
    if (!this.enabled) throw new OAuthError("invalid_request", "dynamic client registration is off");
    const token = bearerValue(authorization);
    const storedHash = token === undefined ? undefined : await this.registrations.accessTokenHash(clientId);
    if (!tokenMatches(token, storedHash)) throw this.refusal();
    return storedHash!;
  }

  private refusal(): OAuthError {
    return invalidRegistrationToken("the registration access token is invalid, or not this client's");
  }

  /** The registration rate limit, per address and in all, counted once the caller may register. */
  private async admit(caller: RegistrationCaller): Promise<void> {
    const refused = await this.limit.admit("registrations", caller.remoteAddress);
    if (refused?.outcome === "refused") {
      throw new OAuthError("temporarily_unavailable", `too many registrations; retry in ${refused.retryAfterSeconds} seconds`, {
        status: 429,
        reason: `registration rate limit (${refused.scope})`,
        headers: { "Retry-After": String(refused.retryAfterSeconds) },
      });
    }
  }
}
