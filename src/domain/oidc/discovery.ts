import { acrValuesSupported, type AcrPolicy } from "./acr.ts";
import { clientAssertionAlgorithms } from "./client-authentication.ts";
import { dpopSigningAlgorithms } from "./dpop/algorithms.ts";
import { requestObjectAlgorithms } from "./request-object.ts";
import { signingAlgs } from "./keys/signing-algorithms.ts";
import { claimsLocalesSupported } from "./name-claims.ts";
import type { OidcEndpoints } from "./provider.ts";

/** What the provider's metadata depends on beyond its own capabilities. */
export interface DiscoveryInputs {
  issuer: string;
  endpoints: OidcEndpoints;
  policy: AcrPolicy;
  advertiseAuthorizationResponseIss: boolean;
  /** Every authorization_details type some registered client may request. */
  authorizationDetailsTypes: string[];
  /** The languages the pages speak (the transport owns its translations). */
  uiLocales: readonly string[];
  /** Whether dynamic client registration is on: registration_endpoint is listed only then. */
  registrationEnabled?: boolean;
}

const clientAuthMethods = ["client_secret_basic", "client_secret_post", "private_key_jwt"];

/**
 * OpenID Connect Discovery 1.0 and RFC 8414 metadata (one document for both):
 * what this provider supports, stated once here so that the lists cannot drift
 * from the rules that enforce them.
 */
export function providerMetadata(inputs: DiscoveryInputs): Record<string, unknown> {
  const e = inputs.endpoints;
  return {
    issuer: inputs.issuer,
    authorization_endpoint: e.authorization,
    token_endpoint: e.token,
    userinfo_endpoint: e.userinfo,
    jwks_uri: e.jwks,
    pushed_authorization_request_endpoint: e.par,
    require_pushed_authorization_requests: false,
    revocation_endpoint: e.revocation,
    introspection_endpoint: e.introspection,
    grant_management_endpoint: e.grants,
    grant_management_actions_supported: ["create", "replace", "merge"],
    grant_management_action_required: false,
    end_session_endpoint: `${inputs.issuer}/auth/logout`,
    // Back-Channel Logout 1.0 section 2.1: every logout token carries sid (docs/backchannel-logout.md).
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token", "client_credentials"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: [...signingAlgs],
    code_challenge_methods_supported: ["S256"],
    dpop_signing_alg_values_supported: dpopSigningAlgorithms,
    token_endpoint_auth_methods_supported: [...clientAuthMethods, "none"],
    token_endpoint_auth_signing_alg_values_supported: clientAssertionAlgorithms,
    revocation_endpoint_auth_methods_supported: clientAuthMethods,
    introspection_endpoint_auth_methods_supported: clientAuthMethods,
    revocation_endpoint_auth_signing_alg_values_supported: clientAssertionAlgorithms,
    introspection_endpoint_auth_signing_alg_values_supported: clientAssertionAlgorithms,
    scopes_supported: ["openid", "profile", "email", "offline_access"],
    claims_supported: ["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "acr", "amr", "sid", "azp", "at_hash", "jpki_verified", "name", "preferred_username", "email", "email_verified"],
    acr_values_supported: acrValuesSupported(inputs.policy),
    prompt_values_supported: ["none", "login", "consent"],
    authorization_response_iss_parameter_supported: inputs.advertiseAuthorizationResponseIss,
    authorization_details_types_supported: inputs.authorizationDetailsTypes,
    ui_locales_supported: inputs.uiLocales,
    claims_locales_supported: claimsLocalesSupported,
    claims_parameter_supported: false,
    request_parameter_supported: true,
    request_object_signing_alg_values_supported: requestObjectAlgorithms,
    request_uri_parameter_supported: false,
    ...(inputs.registrationEnabled ? { registration_endpoint: e.registration } : {}),
  };
}
