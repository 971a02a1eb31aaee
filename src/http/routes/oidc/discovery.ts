import type { Response, Router } from "express";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { clientAssertionAlgorithms } from "../../../domain/oidc/client-authentication.ts";
import { acrValuesSupported } from "../../../domain/oidc/acr.ts";
import { signingAlgs } from "../../../domain/oidc/keys/signing-algorithms.ts";
import { claimsLocalesSupported } from "../../../domain/oidc/name-claims.ts";
import { locales } from "../../i18n/locale.ts";
import { dpopSigningAlgorithms } from "../../../domain/oidc/dpop/algorithms.ts";

/** OpenID Connect Discovery 1.0 and RFC 8414 metadata (the same document), and the JWKS. */
export function registerDiscoveryRoutes(router: Router, oidc: Oidc): void {
  const e = oidc.endpoints;
  const metadata = (authorizationDetailsTypes: string[]) => ({
    issuer: oidc.issuer,
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
    end_session_endpoint: `${oidc.issuer}/auth/logout`,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: [...signingAlgs],
    code_challenge_methods_supported: ["S256"],
    dpop_signing_alg_values_supported: dpopSigningAlgorithms,
    token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"],
    token_endpoint_auth_signing_alg_values_supported: clientAssertionAlgorithms,
    revocation_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "private_key_jwt"],
    introspection_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "private_key_jwt"],
    revocation_endpoint_auth_signing_alg_values_supported: clientAssertionAlgorithms,
    introspection_endpoint_auth_signing_alg_values_supported: clientAssertionAlgorithms,
    scopes_supported: ["openid", "profile", "email", "offline_access"],
    claims_supported: ["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "acr", "amr", "sid", "azp", "at_hash", "jpki_verified", "name", "preferred_username", "email", "email_verified"],
    acr_values_supported: acrValuesSupported(oidc.policy),
    prompt_values_supported: ["none", "login", "consent"],
    authorization_response_iss_parameter_supported: oidc.advertiseAuthorizationResponseIss,
    authorization_details_types_supported: authorizationDetailsTypes,
    ui_locales_supported: locales,
    claims_locales_supported: claimsLocalesSupported,
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  });
  const send = async (res: Response) => {
    res.set("Cache-Control", "public, max-age=300").json(metadata(await oidc.authorizationDetailsTypes()));
  };
  router.get("/.well-known/openid-configuration", (_req, res) => send(res));
  router.get("/.well-known/oauth-authorization-server", (_req, res) => send(res));
  router.get("/api/oidc/v1/jwks", async (_req, res) => {
    res.set("Cache-Control", "public, max-age=300").type("application/jwk-set+json").json(await oidc.signingKeys.jwks());
  });
}
