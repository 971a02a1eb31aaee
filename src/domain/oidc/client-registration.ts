import { randomBytes } from "node:crypto";
import * as z from "zod";
import { DomainError } from "../errors.ts";
import { clientProfiles, defaultClientAuthMethod, relyingPartyGrantTypes, usesClientSecret, type ClientAuthMethod, type OidcClient } from "./client.ts";
import { brokenBy, withImpliedSettings } from "./fapi2-profile.ts";
import { sha256Hex } from "./flow/secrets.ts";
import { defaultSigningAlg, signingAlgs } from "./keys/signing-algorithms.ts";
import { hasPrivateMembers } from "./public-jwk.ts";
import { parsedRedirectUri } from "./redirect-uri.ts";

const loopbackHosts = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Upper bounds on what one client's metadata may list. Open registration
 * (docs/client-registration.md) lets anyone store a client, so each list and
 * URI is bounded, as the API's OAuth clients' keys are: far above what a
 * relying party needs, far below what would let one request store megabytes.
 */
const maxRedirectUris = 100;
const maxKeys = 10;
const maxUriLength = 2048;

const redirectUri = z.string().max(maxUriLength, { error: `must be at most ${maxUriLength} characters` }).refine(
  (value) => {
    const url = parsedRedirectUri(value);
    if (!url) return false;
    if (url.hash || value.includes("#")) return false;
    return url.protocol === "https:" || (url.protocol === "http:" && loopbackHosts.has(url.hostname));
  },
  { error: "must be an absolute https:// URL (http:// only on localhost) without a fragment" },
);

/** Client metadata with the names of RFC 7591 (dynamic registration), as in the clients file and the CLI. */
export const clientMetadataSchema = z
  .object({
    client_id: z.string().regex(/^[A-Za-z0-9._~-]{1,255}$/, { error: "must be 1–255 characters of A-Z a-z 0-9 . _ ~ -" }),
    client_name: z.string().min(1).max(200).optional(),
    token_endpoint_auth_method: z.enum(["client_secret_basic", "client_secret_post", "private_key_jwt", "none"]).default(defaultClientAuthMethod),
    client_secret: z.string().min(16, { error: "must be at least 16 characters" }).max(512).optional(),
    client_secret_sha256: z.string().regex(/^[0-9a-f]{64}$/, { error: "must be 64 lowercase hex digits" }).optional(),
    jwks: z
      .object({
        keys: z
          .array(z.record(z.string(), z.unknown()))
          .min(1, { error: "must hold at least one key" })
          .max(maxKeys, { error: `must hold at most ${maxKeys} keys` }),
      })
      .refine((jwks) => jwks.keys.every((k) => !hasPrivateMembers(k)), {
        error: "must hold public keys only (no private or symmetric key members)",
      })
      .optional(),
    /** Where the client's public keys are fetched (never with jwks); the network rule of production mode is checkServerCalledUris. */
    jwks_uri: z
      .string()
      .max(maxUriLength)
      .refine((value) => URL.canParse(value) && ["https:", "http:"].includes(new URL(value).protocol) && !value.includes("#"), {
        error: "must be an absolute https:// URL without a fragment",
      })
      .optional(),
    redirect_uris: z
      .array(redirectUri)
      .min(1, { error: "must list at least one redirect URI" })
      .max(maxRedirectUris, { error: `must list at most ${maxRedirectUris} redirect URIs` }),
    post_logout_redirect_uris: z.array(redirectUri).max(maxRedirectUris, { error: `must list at most ${maxRedirectUris} URIs` }).default([]),
    scope: z.string().max(maxUriLength, { error: `must be at most ${maxUriLength} characters` }).default("openid"),
    authorization_details_types: z
      .array(z.string().min(1).max(200))
      .max(maxRedirectUris, { error: `must list at most ${maxRedirectUris} types` })
      .default([]),
    require_pushed_authorization_requests: z.boolean().default(false),
    grant_types: z
      .array(z.enum(relyingPartyGrantTypes))
      .min(1, { error: "must list at least one grant type" })
      .max(relyingPartyGrantTypes.length, { error: `must list at most ${relyingPartyGrantTypes.length} grant types` })
      .refine((types) => types.includes("authorization_code"), { error: "must include authorization_code (refresh tokens come from codes)" })
      .default(["authorization_code", "refresh_token"]),
    // ES256 when left out, not Dynamic Registration's RS256: see docs/oidc-decisions.md.
    id_token_signed_response_alg: z
      .enum(signingAlgs, { error: `must be one of ${signingAlgs.join(", ")} (the algorithms this provider signs ID tokens with)` })
      .default(defaultSigningAlg),
    /** RFC 9449 section 5.2: every token request of the client must carry a DPoP proof. */
    dpop_bound_access_tokens: z.boolean().default(false),
    /** Back-Channel Logout 1.0 section 2.2: the same rule as a redirect URI; production mode refuses loopback at `client add` (backchannelLogoutUriReachable). */
    backchannel_logout_uri: redirectUri.optional(),
    backchannel_logout_session_required: z.boolean().default(false),
    /** A profile whose rules the client is held to: "fapi2", the FAPI 2.0 Security Profile (docs/fapi2.md). */
    profile: z.enum(clientProfiles, { error: `must be ${clientProfiles.join(" or ")}` }).optional(),
    /** RFC 9101 section 10.5: authorization requests must come as a signed request object. */
    require_signed_request_object: z.boolean().default(false),
  })
  .strict();

export type ClientMetadata = z.input<typeof clientMetadataSchema>;

/**
 * Turns client metadata into a registration. For the client_secret methods a
 * secret is generated when none is given; it is returned once and only its
 * hash is kept.
 */
export function registrationFromMetadata(input: unknown, now: number): { client: OidcClient; generatedSecret?: string } {
  const parsed = clientMetadataSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.join(".") || "client";
    throw new DomainError("invalid_field", `${field}: ${issue.message}`, field);
  }
  const m = parsed.data;
  const method: ClientAuthMethod = m.token_endpoint_auth_method;
  const usesSecret = usesClientSecret(method);
  if (!usesSecret && (m.client_secret || m.client_secret_sha256)) {
    throw new DomainError("invalid_field", `client_secret is not used with ${method}`, "client_secret");
  }
  // One source of keys (OIDC Dynamic Registration section 2): which of two sets would count is not a question to leave open.
  if (m.jwks && m.jwks_uri !== undefined) throw new DomainError("invalid_field", "jwks_uri: must not be sent with jwks (register one or the other)", "jwks_uri");
  const hasKeys = m.jwks !== undefined || m.jwks_uri !== undefined;
  if (method === "private_key_jwt" && !hasKeys) throw new DomainError("invalid_field", "private_key_jwt needs jwks or jwks_uri", "jwks");
  if (m.require_signed_request_object && !hasKeys) {
    throw new DomainError("invalid_field", "require_signed_request_object needs jwks or jwks_uri, the keys request objects are signed with", "jwks");
  }
  const generatedSecret = usesSecret && !m.client_secret && !m.client_secret_sha256 ? randomBytes(32).toString("base64url") : undefined;
  const secret = m.client_secret ?? generatedSecret;
  const scopes = [...new Set(m.scope.split(" ").filter(Boolean))];
  const client: OidcClient = {
    clientId: m.client_id,
    name: m.client_name ?? m.client_id,
    type: method === "none" ? "public" : "confidential",
    tokenEndpointAuthMethod: method,
    secretHash: usesSecret ? (m.client_secret_sha256 ?? sha256Hex(secret!)) : null,
    jwks: (m.jwks as OidcClient["jwks"]) ?? null,
    ...(m.jwks_uri !== undefined ? { jwksUri: m.jwks_uri } : {}),
    redirectUris: m.redirect_uris,
    allowedScopes: scopes,
    allowedAuthorizationDetailsTypes: m.authorization_details_types,
    requirePushedAuthorizationRequests: m.require_pushed_authorization_requests,
    grantTypes: [...new Set(m.grant_types)],
    postLogoutRedirectUris: m.post_logout_redirect_uris,
    idTokenSignedResponseAlg: m.id_token_signed_response_alg,
    dpopBoundAccessTokens: m.dpop_bound_access_tokens,
    ...(m.backchannel_logout_uri !== undefined ? { backchannelLogoutUri: m.backchannel_logout_uri } : {}),
    ...(m.backchannel_logout_session_required ? { backchannelLogoutSessionRequired: true } : {}),
    profile: m.profile ?? null,
    requireSignedRequestObject: m.require_signed_request_object,
    createdAt: now,
  };
  const broken = brokenBy(client, "registration", {
    tokenEndpointAuthMethod: method,
    redirectUris: client.redirectUris,
    idTokenSignedResponseAlg: client.idTokenSignedResponseAlg,
  }) ?? brokenBy(client, "client_keys", { keys: m.jwks?.keys ?? [] });
  if (broken) throw new DomainError("invalid_field", `${broken.field}: ${broken.requirement}`, broken.field);
  const registered = withImpliedSettings(client);
  return generatedSecret ? { client: registered, generatedSecret } : { client: registered };
}
