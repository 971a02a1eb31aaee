import { randomBytes } from "node:crypto";
import * as z from "zod";
import type { Clock } from "../clock.ts";
import { DomainError } from "../errors.ts";
import { sha256Hex } from "../oidc/flow/secrets.ts";
import type { OidcClient } from "../oidc/client.ts";
import { defaultSigningAlg } from "../oidc/keys/signing-algorithms.ts";
import { hasPrivateMembers } from "../oidc/public-jwk.ts";
import { apiScopes, isApiScope } from "./api-scopes.ts";

/** How an account's client authenticates at the token endpoint: never "none", since its tokens act for the account. */
export type ApiClientAuthMethod = "client_secret_basic" | "client_secret_post" | "private_key_jwt";

export interface NewApiOAuthClient {
  name?: string;
  authMethod: ApiClientAuthMethod;
  /** Public keys, for private_key_jwt. */
  jwks?: unknown;
  /** What its tokens may call; every API scope when left out. */
  scopes?: readonly string[];
  /** RFC 9449 section 5.2: every token request must carry a DPoP proof. */
  dpopBoundAccessTokens?: boolean;
}

/** What ApiOAuthClients needs from the client registry (src/storage/clients-repository.ts). */
export interface ApiOAuthClientStore {
  find(clientId: string): Promise<OidcClient | undefined>;
  listForAccount(accountId: string): Promise<OidcClient[]>;
  save(client: OidcClient, now: number): Promise<void>;
  /** Removes the client and ends every token it holds. */
  delete(clientId: string, now: number): Promise<boolean>;
}

const jwksSchema = z.object({ keys: z.array(z.record(z.string(), z.unknown())).min(1).max(10) }).refine((jwks) => jwks.keys.every((k) => !hasPrivateMembers(k)));

/**
 * The OAuth clients an API account registers for itself: confidential
 * clients with the client_credentials grant alone, whose access tokens act
 * for that account (see ApiAccessTokens). They live in the one client
 * registry, so the token endpoint authenticates them like any client; their
 * ids are made here, so an account can never take over another's client.
 * Another account's client answers like an unknown one.
 */
export class ApiOAuthClients {
  constructor(
    private readonly store: ApiOAuthClientStore,
    private readonly clock: Clock,
  ) {}

  /** Registers a client; the returned secret (client_secret_* only) is the only time it exists outside the caller. */
  async add(accountId: string, input: NewApiOAuthClient): Promise<{ client: OidcClient; secret?: string }> {
    const name = input.name?.trim() || "API client";
    // Control characters (NUL above all, which PostgreSQL refuses in text) have no place in a label.
    if (name.length > 200 || /\p{Cc}/u.test(name)) throw new DomainError("invalid_field", "a client name is at most 200 characters, without control characters", "name");
    const scopes = [...new Set(input.scopes && input.scopes.length > 0 ? input.scopes : apiScopes)];
    const unknown = scopes.find((s) => !isApiScope(s));
    if (unknown !== undefined) throw new DomainError("invalid_field", `unknown scope "${unknown}": use ${apiScopes.join(", ")}`, "scopes");
    const usesKeys = input.authMethod === "private_key_jwt";
    let jwks: OidcClient["jwks"] = null;
    if (usesKeys) {
      const parsed = jwksSchema.safeParse(input.jwks);
      if (!parsed.success) throw new DomainError("invalid_field", "private_key_jwt needs jwks: {\"keys\": [1 to 10 public JWKs]}", "jwks");
      jwks = parsed.data as unknown as OidcClient["jwks"];
    } else if (input.jwks !== undefined) {
      throw new DomainError("invalid_field", "jwks is only used with private_key_jwt", "jwks");
    }
    const secret = usesKeys ? undefined : randomBytes(32).toString("base64url");
    const now = this.clock();
    const client: OidcClient = {
      clientId: `api_${randomBytes(12).toString("hex")}`,
      name,
      type: "confidential",
      tokenEndpointAuthMethod: input.authMethod,
      secretHash: secret === undefined ? null : sha256Hex(secret),
      jwks,
      redirectUris: [],
      allowedScopes: scopes,
      allowedAuthorizationDetailsTypes: [],
      requirePushedAuthorizationRequests: false,
      grantTypes: ["client_credentials"],
      postLogoutRedirectUris: [],
      idTokenSignedResponseAlg: defaultSigningAlg,
      dpopBoundAccessTokens: input.dpopBoundAccessTokens ?? false,
      accountId,
      createdAt: now,
    };
    await this.store.save(client, now);
    return secret === undefined ? { client } : { client, secret };
  }

  list(accountId: string): Promise<OidcClient[]> {
    return this.store.listForAccount(accountId);
  }

  /** Removes one of the account's clients; its tokens stop at once. */
  async remove(accountId: string, clientId: string): Promise<void> {
    if (clientId === "") throw new DomainError("invalid_field", "client_id is required", "client_id");
    const client = await this.store.find(clientId);
    if (!client || client.accountId !== accountId || !(await this.store.delete(clientId, this.clock()))) {
      throw new DomainError("oauth_client_not_found", `no OAuth client ${clientId} for this account`, "client_id");
    }
  }
}
