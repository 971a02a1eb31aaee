import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { OneTimeStore } from "../single-use.ts";
import {
  inspectClientAssertion,
  jwtBearerAssertionType,
  useClientAssertionOnce,
  verifyClientAssertion,
  type ClientAssertionPolicy,
} from "./client-assertion.ts";
import { invalidClient, invalidRequest } from "./client-auth-error.ts";
import type { ClientAuthMethod, OidcClient } from "./client.ts";
import { ClientKeysUnavailable, type ClientKeys } from "./client-keys.ts";
import { brokenBy } from "./fapi2-profile.ts";
import type { ClientLookup } from "./stores.ts";

export { ClientAuthError, clientAuthFailedDescription, type ClientAuthErrorCode, type ClientAuthFailureReason } from "./client-auth-error.ts";
export type { ClientLookup } from "./stores.ts";
export { clientAssertionAlgorithms, clientAssertionJtiKind, jwtBearerAssertionType } from "./client-assertion.ts";

/** What the HTTP layer hands over: the raw Authorization header and the parsed form body. */
export interface ClientCredentialsInput {
  authorization?: string | undefined;
  /** Form parameters; a repeated parameter may arrive as an array and is rejected. */
  form: Readonly<Record<string, unknown>>;
}

export interface ClientAuthenticatorOptions {
  /** Clock skew allowed on assertion times, in seconds. Default 30. */
  clockToleranceSeconds?: number;
  /** Longest accepted client assertion lifetime, in seconds. Default 300. */
  maxAssertionLifetimeSeconds?: number;
}

export interface AuthenticateOptions {
  /**
   * Accept public clients (registered method "none") identified by client_id
   * alone. Off by default: PAR and the token endpoint turn it on (they
   * require PKCE of such clients); revocation and introspection leave it off.
   */
  allowPublicClients?: boolean;
}

type PresentedCredentials =
  | { method: "client_secret_basic" | "client_secret_post"; clientId: string; secret: string }
  | { method: "private_key_jwt"; clientId: string; assertion: string }
  | { method: "none"; clientId: string };

/**
 * Authenticates a client at the PAR and token endpoints by exactly one of
 * client_secret_basic, client_secret_post or private_key_jwt, and only by the
 * method registered for it. Every failure is a ClientAuthError.
 */
export class ClientAuthenticator {
  private readonly policy: ClientAssertionPolicy;

  constructor(
    private readonly clients: ClientLookup,
    private readonly oneTimeRecords: OneTimeStore,
    private readonly keys: ClientKeys,
    private readonly clock: () => number,
    options: ClientAuthenticatorOptions = {},
  ) {
    this.policy = {
      clockToleranceSeconds: options.clockToleranceSeconds ?? 30,
      maxLifetimeSeconds: options.maxAssertionLifetimeSeconds ?? 300,
    };
    if (!(this.policy.clockToleranceSeconds >= 0)) throw new RangeError("clockToleranceSeconds must be >= 0");
    if (!(this.policy.maxLifetimeSeconds > 0)) throw new RangeError("maxAssertionLifetimeSeconds must be > 0");
  }

  /**
   * @param audiences values accepted in a client assertion's `aud`: the issuer
   *   identifier first, then any other value accepted (none, today: see identifyCaller).
   */
  async authenticate(input: ClientCredentialsInput, audiences: readonly string[], options: AuthenticateOptions = {}): Promise<OidcClient> {
    if (audiences.length === 0) throw new RangeError("at least one audience is required");
    const presented = readCredentials(input);
    const client = await this.clients.find(presented.clientId);
    switch (presented.method) {
      case "client_secret_basic":
      case "client_secret_post":
        return authenticateBySecret(client, presented.method, presented.secret);
      case "private_key_jwt":
        return this.authenticateByAssertion(client, presented.clientId, presented.assertion, audiences);
      case "none":
        return authenticatePublic(client, options.allowPublicClients ?? false);
    }
  }

  private async authenticateByAssertion(
    client: OidcClient | undefined,
    clientId: string,
    assertion: string,
    audiences: readonly string[],
  ): Promise<OidcClient> {
    checkRegistration(client, "private_key_jwt", false);
    const inlineKeys = Array.isArray(client.jwks?.keys) && client.jwks.keys.length > 0;
    if (!inlineKeys && client.jwksUri === undefined) throw invalidClient("client_not_configured");
    let keys;
    try {
      keys = await this.keys.keysFor(client, assertion);
    } catch (error) {
      if (!(error instanceof ClientKeysUnavailable)) throw error;
      // The client's own registration is at fault (its jwks_uri, or keys its profile refuses): saying what helps it.
      throw invalidClient("client_keys_unavailable", { description: error.message });
    }
    const now = this.clock();
    const verified = await verifyClientAssertion(assertion, clientId, keys, audiences, now, this.policy);
    // The first audience is the issuer identifier (see authenticate). The client is known to have signed this, so the
    // rule it broke can be named.
    const broken = brokenBy(client, "client_assertion", { issuer: audiences[0]!, aud: verified.aud, alg: verified.alg });
    if (broken) {
      throw invalidClient(broken.id === "assertion-audience" ? "assertion_audience_invalid" : "assertion_algorithm_not_allowed", { description: broken.requirement });
    }
    await useClientAssertionOnce(this.oneTimeRecords, clientId, verified, now, this.policy);
    return client;
  }
}

// A stand-in compared against when the client is unknown or has no secret, so
// that those answers take as long as a wrong secret does.
const placeholderHash = randomBytes(32);

function authenticateBySecret(client: OidcClient | undefined, method: "client_secret_basic" | "client_secret_post", secret: string): OidcClient {
  const challenge = method === "client_secret_basic";
  const stored = client?.tokenEndpointAuthMethod === method ? decodeSecretHash(client.secretHash) : undefined;
  const presented = createHash("sha256").update(secret, "utf8").digest();
  const equal = timingSafeEqual(presented, stored ?? placeholderHash);
  checkRegistration(client, method, challenge);
  if (!stored) throw invalidClient("client_not_configured", { challenge });
  if (!equal) throw invalidClient("secret_mismatch", { challenge });
  return client;
}

function authenticatePublic(client: OidcClient | undefined, allowPublicClients: boolean): OidcClient {
  if (!client) throw invalidClient("unknown_client", { challenge: true });
  if (client.tokenEndpointAuthMethod !== "none") throw invalidClient("credentials_missing", { challenge: true });
  if (!allowPublicClients) throw invalidClient("public_client_not_allowed", { challenge: true });
  return client;
}

function checkRegistration(client: OidcClient | undefined, method: ClientAuthMethod, challenge: boolean): asserts client is OidcClient {
  if (!client) throw invalidClient("unknown_client", { challenge });
  if (client.tokenEndpointAuthMethod !== method) throw invalidClient("method_mismatch", { challenge });
}

function decodeSecretHash(secretHash: string | null): Buffer | undefined {
  return secretHash !== null && /^[0-9a-fA-F]{64}$/.test(secretHash) ? Buffer.from(secretHash, "hex") : undefined;
}

/**
 * Works out which method the request uses and for which client, from the
 * request alone. Problems with the shape of the request are invalid_request;
 * credentials that cannot be read are invalid_client.
 */
function readCredentials(input: ClientCredentialsInput): PresentedCredentials {
  const bodyClientId = formParameter(input.form, "client_id");
  const secret = formParameter(input.form, "client_secret");
  const assertion = formParameter(input.form, "client_assertion");
  const assertionType = formParameter(input.form, "client_assertion_type");
  const header = input.authorization?.trim() || undefined;

  const methods = [header !== undefined, secret !== undefined, assertion !== undefined || assertionType !== undefined];
  if (methods.filter(Boolean).length > 1) {
    throw invalidRequest("multiple_methods", "client authentication must use exactly one method");
  }

  if (header !== undefined) {
    const basic = parseBasicAuthorization(header);
    if (bodyClientId !== undefined && bodyClientId !== basic.clientId) {
      throw invalidRequest("client_id_mismatch", "client_id in the body does not match the authenticated client");
    }
    return { method: "client_secret_basic", ...basic };
  }
  if (secret !== undefined) {
    if (bodyClientId === undefined) throw invalidRequest("client_id_missing", "client_id is required with client_secret");
    return { method: "client_secret_post", clientId: bodyClientId, secret };
  }
  if (assertion !== undefined || assertionType !== undefined) {
    if (assertion === undefined || assertionType === undefined) {
      throw invalidRequest("assertion_incomplete", "client_assertion and client_assertion_type must be sent together");
    }
    if (assertionType !== jwtBearerAssertionType) {
      throw invalidClient("unsupported_assertion_type", { description: "unsupported client_assertion_type" });
    }
    const { subject } = inspectClientAssertion(assertion);
    if (bodyClientId !== undefined && subject !== undefined && subject !== bodyClientId) {
      throw invalidRequest("client_id_mismatch", "client_id in the body does not match the authenticated client");
    }
    const clientId = bodyClientId ?? subject;
    if (clientId === undefined) throw invalidClient("assertion_claim_missing", { description: "client_assertion has no sub" });
    return { method: "private_key_jwt", clientId, assertion };
  }
  if (bodyClientId === undefined) {
    throw invalidClient("credentials_missing", { description: "client authentication required", challenge: true });
  }
  return { method: "none", clientId: bodyClientId };
}

/** A form parameter; sent without a value means omitted (RFC 6749 §3.1). */
function formParameter(form: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const value = Object.hasOwn(form, name) ? form[name] : undefined;
  if (value === undefined || value === "") return undefined;
  if (typeof value === "string") return value;
  if (Array.isArray(value)) throw invalidRequest("parameter_repeated", `${name} must not be repeated`);
  throw invalidRequest("parameter_repeated", `${name} must be a single string`);
}

const basicPattern = /^basic +([A-Za-z0-9+/]+={0,2})$/i;
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * RFC 6749 §2.3.1: the client_id and secret are each form-urlencoded, joined
 * by ":" and base64-encoded. The colon that separates them is the first one,
 * since an encoded client_id cannot hold a raw ":".
 */
export function parseBasicAuthorization(header: string): { clientId: string; secret: string } {
  if (!/^basic(?: |$)/i.test(header)) {
    throw invalidClient("unsupported_authorization_scheme", { description: "the Authorization header must use the Basic scheme", challenge: true });
  }
  const malformed = () => invalidClient("malformed_basic_credentials", { description: "malformed Basic credentials", challenge: true });
  const token = basicPattern.exec(header)?.[1];
  if (token === undefined || token.length % 4 !== 0) throw malformed();
  let text: string;
  try {
    text = strictUtf8.decode(Buffer.from(token, "base64"));
  } catch {
    throw malformed();
  }
  const colon = text.indexOf(":");
  if (colon < 0) throw malformed();
  let clientId: string;
  let secret: string;
  try {
    clientId = formUrlDecode(text.slice(0, colon));
    secret = formUrlDecode(text.slice(colon + 1));
  } catch {
    throw malformed();
  }
  if (clientId === "") throw malformed();
  return { clientId, secret };
}

/** application/x-www-form-urlencoded decoding of one value; throws on a bad %-escape or invalid UTF-8. */
function formUrlDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, " "));
}
