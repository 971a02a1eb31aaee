import * as z from "zod";
import { OAuthError } from "./oauth-error.ts";
import type { OidcClient } from "./client.ts";
import { authorizationDetailSchema, parseAuthorizationDetails } from "./authorization-details.ts";
import { parseLocaleList } from "./locales.ts";
import { parseDpopJkt } from "./dpop/jkt.ts";

export type Prompt = "none" | "login" | "consent";
export type GrantManagementAction = "create" | "replace" | "merge";

/**
 * A validated authorization request (spec 2.1, rules 4.1). A pushed one is
 * kept as a one-time record until it is used (see one-time-kinds.ts); the
 * type is read from the schema, so the two cannot drift apart.
 */
export const authorizationRequestSchema = z.strictObject({
  clientId: z.string(),
  redirectUri: z.string(),
  responseType: z.literal("code"),
  scopes: z.array(z.string()),
  state: z.string().optional(),
  codeChallenge: z.string().optional(),
  codeChallengeMethod: z.literal("S256").optional(),
  nonce: z.string().optional(),
  prompt: z.array(z.enum(["none", "login", "consent"] satisfies Prompt[])),
  maxAge: z.number().optional(),
  acrValues: z.array(z.string()),
  authorizationDetails: z.array(authorizationDetailSchema),
  grantManagementAction: z.enum(["create", "replace", "merge"] satisfies GrantManagementAction[]).optional(),
  grantId: z.string().optional(),
  /** OIDC Core 3.1.2.1: the languages the pages should speak, in order of preference (well-formed tags only). */
  uiLocales: z.array(z.string()).optional(),
  /** OIDC Core 5.2: the languages the user's claims should be returned in, in order of preference. */
  claimsLocales: z.array(z.string()).optional(),
  /** RFC 9449 section 10: the thumbprint of the DPoP key the code is bound to (dpop_jkt, or the key of the PAR request's proof). */
  dpopJkt: z.string().optional(),
});

export type AuthorizationRequest = z.infer<typeof authorizationRequestSchema>;

/** Every parameter of spec 2.1; anything else in a request is ignored. */
export const authorizationParameters = [
  "client_id", "redirect_uri", "response_type", "scope", "state", "code_challenge", "code_challenge_method", "nonce",
  "prompt", "max_age", "acr_values", "authorization_details", "grant_management_action", "grant_id", "request_uri",
  "ui_locales", "claims_locales",
  "dpop_jkt",
  "request",
] as const;

const prompts: readonly Prompt[] = ["none", "login", "consent"];
const codeChallengePattern = /^[A-Za-z0-9._~-]{43,128}$/;
const scopeTokenPattern = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
export const maxParameterLength = 2048;

/**
 * Validates the parameters of an authorization request for a client whose
 * redirect_uri has already been matched. Every failure is redirectable. The
 * order follows spec 4.1 so that the first rule broken is the one reported.
 */
export function validateAuthorizationRequest(params: Map<string, string>, client: OidcClient, redirectUri: string): AuthorizationRequest {
  for (const [name, value] of params) {
    if (name !== "authorization_details" && value.length > maxParameterLength) {
      throw new OAuthError("invalid_request", `parameter ${name} is longer than ${maxParameterLength} characters`);
    }
  }
  const responseType = params.get("response_type");
  if (!responseType) throw new OAuthError("invalid_request", "response_type is required");
  if (responseType !== "code") throw new OAuthError("unsupported_response_type", "response_type must be code");

  const prompt = parsePrompt(params.get("prompt"));
  const maxAge = parseMaxAge(params.get("max_age"));

  const codeChallenge = params.get("code_challenge");
  const method = params.get("code_challenge_method");
  if (method !== undefined && codeChallenge === undefined) {
    throw new OAuthError("invalid_request", "code_challenge_method given without code_challenge");
  }
  if (codeChallenge !== undefined) {
    // RFC 7636 makes "plain" the default; shomei accepts S256 only, so the method must be explicit.
    if (method !== "S256") throw new OAuthError("invalid_request", "code_challenge_method must be S256");
    if (!codeChallengePattern.test(codeChallenge)) {
      throw new OAuthError("invalid_request", "code_challenge must be 43–128 characters of A-Z a-z 0-9 - . _ ~");
    }
  }
  // A public client has no credentials to tie the code to it: PKCE does (RFC 9700 section 2.1.1, RFC 9126 section 2).
  if (client.type === "public" && codeChallenge === undefined) {
    throw new OAuthError("invalid_request", "public clients must use PKCE (code_challenge with code_challenge_method S256)");
  }
  const state = params.get("state");
  if (state === undefined && codeChallenge === undefined) {
    throw new OAuthError("invalid_request", "either state or PKCE (code_challenge) is required");
  }

  const scopes = parseScopes(params.get("scope"), client);
  const authorizationDetails = parseAuthorizationDetails(params.get("authorization_details"), client.allowedAuthorizationDetailsTypes);
  const { action, grantId } = parseGrantManagement(params.get("grant_management_action"), params.get("grant_id"));
  const dpopJkt = parseDpopJkt(params.get("dpop_jkt"));

  return {
    clientId: client.clientId,
    redirectUri,
    responseType: "code",
    scopes,
    state,
    codeChallenge,
    codeChallengeMethod: codeChallenge ? "S256" : undefined,
    nonce: params.get("nonce"),
    prompt,
    maxAge,
    acrValues: (params.get("acr_values") ?? "").split(" ").filter(Boolean),
    authorizationDetails,
    grantManagementAction: action,
    grantId,
    uiLocales: parseLocaleList(params.get("ui_locales")),
    claimsLocales: parseLocaleList(params.get("claims_locales")),
    ...(dpopJkt !== undefined ? { dpopJkt } : {}),
  };
}

function parsePrompt(value: string | undefined): Prompt[] {
  if (value === undefined) return [];
  const values = value.split(" ").filter(Boolean);
  for (const v of values) {
    if (!prompts.includes(v as Prompt)) throw new OAuthError("invalid_request", `prompt value ${v} is not supported (none, login, consent)`);
  }
  const unique = [...new Set(values)] as Prompt[];
  if (unique.includes("none") && unique.length > 1) {
    throw new OAuthError("invalid_request", "prompt=none must not be combined with another prompt value");
  }
  return unique;
}

function parseMaxAge(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,10}$/.test(value)) throw new OAuthError("invalid_request", "max_age must be a non-negative integer number of seconds");
  return Number(value);
}

function parseScopes(value: string | undefined, client: OidcClient): string[] {
  if (value === undefined) throw new OAuthError("invalid_request", "scope is required");
  const scopes = [...new Set(value.split(" ").filter(Boolean))];
  if (scopes.length === 0) throw new OAuthError("invalid_request", "scope is required");
  for (const scope of scopes) {
    if (!scopeTokenPattern.test(scope)) throw new OAuthError("invalid_scope", `scope ${JSON.stringify(scope)} is malformed`);
    if (!client.allowedScopes.includes(scope)) throw new OAuthError("invalid_scope", `scope ${scope} is not allowed for this client`);
  }
  return scopes;
}

/**
 * OpenID Grant Management: `create` starts a new grant (a grant_id with it is
 * an error); `replace` and `merge` act on the grant named by grant_id (an
 * existing grant of this user and client, checked once the user is known) or,
 * without one, on the user's current grant for this client. A grant_id
 * without an action is an error, so that a client never updates a grant by
 * accident.
 */
function parseGrantManagement(action: string | undefined, grantId: string | undefined): { action?: GrantManagementAction; grantId?: string } {
  if (action === undefined) {
    if (grantId !== undefined) throw new OAuthError("invalid_request", "grant_id requires grant_management_action replace or merge");
    return {};
  }
  if (action !== "create" && action !== "replace" && action !== "merge") {
    throw new OAuthError("invalid_request", "grant_management_action must be create, replace or merge");
  }
  if (action === "create" && grantId !== undefined) {
    throw new OAuthError("invalid_request", "grant_management_action=create must not carry a grant_id");
  }
  return { action, ...(grantId !== undefined ? { grantId } : {}) };
}
