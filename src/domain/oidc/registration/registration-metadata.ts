import { DomainError } from "../../errors.ts";
import { jsonNestingWithin, maxJsonDepth } from "../../json-nesting.ts";
import { clientMetadataSchema, registrationFromMetadata } from "../client-registration.ts";
import { defaultClientAuthMethod, usesClientSecret, type OidcClient } from "../client.ts";
import { OAuthError } from "../oauth-error.ts";

/*
 * RFC 7591 client metadata as a client sends it, turned into the metadata
 * `shomei client add` takes, so that both go through the one validation of
 * registrationFromMetadata; and a registration as RFC 7591 section 3.2.1
 * answers it.
 */

/** The members the registration endpoint understands: those of `shomei client add`, which the server assigns left aside. */
const understood = new Set(Object.keys(clientMetadataSchema.shape).filter((name) => !serverAssigned(name)));

function serverAssigned(name: string): boolean {
  return name === "client_id" || name === "client_secret" || name === "client_secret_sha256";
}

/** A JWS in compact form: three base64url parts. */
const compactJws = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** What a registration or update request asks for, checked as far as it can be without the stored client. */
export interface RequestedMetadata {
  /** Metadata in the form registrationFromMetadata takes, without client_id and secrets. */
  metadata: Record<string, unknown>;
  /** client_id as the request gave it (required on update, refused on registration). */
  clientId: unknown;
  /** client_secret as the request gave it (RFC 7592: on update it must be the current one). */
  clientSecret: unknown;
}

/**
 * The JSON of a registration or update request's body, its nesting checked
 * before the parser spends the event loop on it (json-nesting.ts).
 */
export function parsedMetadataJson(text: string): unknown {
  if (!jsonNestingWithin(text)) throw new OAuthError("invalid_client_metadata", `the client metadata nests arrays and objects more than ${maxJsonDepth} levels deep`);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new OAuthError("invalid_client_metadata", `the body is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * Reads a registration request's JSON object. Members the provider does not
 * know are ignored (RFC 7591 section 2) and are not in the answer, which
 * lists what was registered; `response_types` is understood and must be
 * `["code"]`; a software statement is refused, as none is trusted.
 */
export function requestedMetadata(body: unknown, purpose: "register" | "update"): RequestedMetadata {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new OAuthError("invalid_client_metadata", "the client metadata must be a JSON object");
  }
  const fields = body as Record<string, unknown>;
  if (fields.software_statement !== undefined) {
    if (typeof fields.software_statement !== "string" || !compactJws.test(fields.software_statement)) {
      throw new OAuthError("invalid_software_statement", "software_statement must be a signed JWT");
    }
    throw new OAuthError("unapproved_software_statement", "this server trusts no software statement issuer: register without software_statement");
  }
  if (fields.response_types !== undefined && !(Array.isArray(fields.response_types) && fields.response_types.length === 1 && fields.response_types[0] === "code")) {
    throw new OAuthError("invalid_client_metadata", 'response_types: must be ["code"], the only response type this server issues');
  }
  if (fields.client_secret_sha256 !== undefined) throw new OAuthError("invalid_client_metadata", "client_secret_sha256: is not registration metadata");
  if (purpose === "register") {
    if (fields.client_id !== undefined) throw new OAuthError("invalid_client_metadata", "client_id: is assigned by the server");
    if (fields.client_secret !== undefined) throw new OAuthError("invalid_client_metadata", "client_secret: is issued by the server");
  }
  const metadata: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) {
    // What the server issued (client_id_issued_at, registration_access_token…), sent back on update, is left out too.
    if (understood.has(name)) metadata[name] = value;
  }
  return { metadata, clientId: fields.client_id, clientSecret: fields.client_secret };
}

/**
 * The client that metadata describes, validated as `shomei client add`
 * validates it; its refusals become RFC 7591 errors, invalid_redirect_uri
 * for the redirect URIs, invalid_client_metadata for anything else.
 */
export function validatedClient(metadata: Record<string, unknown>, clientId: string, secretHash: string | null, now: number): { client: OidcClient; generatedSecret?: string } {
  const method = metadata.token_endpoint_auth_method;
  const keepsSecret = secretHash !== null && usesClientSecret(method === undefined ? defaultClientAuthMethod : method);
  try {
    return registrationFromMetadata({ ...metadata, client_id: clientId, ...(keepsSecret ? { client_secret_sha256: secretHash } : {}) }, now);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    const redirect = error.field === "redirect_uris" || error.field?.startsWith("redirect_uris.");
    throw new OAuthError(redirect ? "invalid_redirect_uri" : "invalid_client_metadata", error.message);
  }
}

/** What the answers of registration, read and update carry beside the metadata. */
export interface IssuedCredentials {
  /** Only when a secret was generated by this request: shown once. */
  clientSecret?: string | undefined;
  registrationAccessToken: string;
  registrationClientUri: string;
}

/** RFC 7591 section 3.2.1 (and RFC 7592 section 3): the client's registered metadata with what the server issued. */
export function registrationAnswer(client: OidcClient, issued: IssuedCredentials): Record<string, unknown> {
  return {
    client_id: client.clientId,
    client_id_issued_at: Math.floor(client.createdAt / 1000),
    ...(issued.clientSecret !== undefined ? { client_secret: issued.clientSecret } : {}),
    // Secrets of this server do not expire (RFC 7591: 0).
    ...(client.secretHash !== null ? { client_secret_expires_at: 0 } : {}),
    registration_access_token: issued.registrationAccessToken,
    registration_client_uri: issued.registrationClientUri,
    client_name: client.name,
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    ...(client.jwks ? { jwks: client.jwks } : {}),
    ...(client.jwksUri !== undefined ? { jwks_uri: client.jwksUri } : {}),
    redirect_uris: client.redirectUris,
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    response_types: ["code"],
    grant_types: client.grantTypes,
    scope: client.allowedScopes.join(" "),
    authorization_details_types: client.allowedAuthorizationDetailsTypes,
    require_pushed_authorization_requests: client.requirePushedAuthorizationRequests,
    id_token_signed_response_alg: client.idTokenSignedResponseAlg,
    dpop_bound_access_tokens: client.dpopBoundAccessTokens,
    ...(client.backchannelLogoutUri !== undefined
      ? { backchannel_logout_uri: client.backchannelLogoutUri, backchannel_logout_session_required: client.backchannelLogoutSessionRequired ?? false }
      : {}),
    // Only when set, as registered: clients that never asked for them see the answer they always did.
    ...(client.profile ? { profile: client.profile } : {}),
    ...(client.requireSignedRequestObject ? { require_signed_request_object: true } : {}),
  };
}
