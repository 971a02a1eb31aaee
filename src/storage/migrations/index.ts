import type { Migration } from "kysely";
import * as m0001 from "./0001_one_time_records.ts";
import * as m0002 from "./0002_certificate_accounts.ts";
import * as m0003 from "./0003_oidc_clients.ts";
import * as m0004 from "./0004_oidc_users_sessions_grants.ts";
import * as m0005 from "./0005_signing_keys.ts";
import * as m0006 from "./0006_oidc_tokens.ts";
import * as m0007 from "./0007_client_grant_types.ts";
import * as m0008 from "./0008_mock_offered_methods.ts";
import * as m0009 from "./0009_client_post_logout_redirect_uris.ts";
import * as m0010 from "./0010_login_attempts.ts";
import * as m0011 from "./0011_verifications.ts";
import * as m0012 from "./0012_server_key_check.ts";
import * as m0013 from "./0013_crl_lists.ts";
import * as m0014 from "./0014_ocsp_responses.ts";
import * as m0015 from "./0015_mock_crl_issue.ts";
import * as m0016 from "./0016_token_sid.ts";
import * as m0017 from "./0017_dpop.ts";
import * as m0018 from "./0018_signing_alg_per_client.ts";
import * as m0019 from "./0019_oidc_jpki.ts";
import * as m0020 from "./0020_localized_names.ts";
import * as m0021 from "./0021_api_auth_version.ts";
import * as m0022 from "./0022_oidc_client_version.ts";
import * as m0023 from "./0023_certificate_serials.ts";
import * as m0024 from "./0024_status_chains.ts";
import * as m0025 from "./0025_certificate_events.ts";
import * as m0026 from "./0026_jpki_sign_requests.ts";
import * as m0027 from "./0027_crl_list_parts.ts";
import * as m0028 from "./0028_webhooks.ts";
import * as m0029 from "./0029_passkeys.ts";
import * as m0030 from "./0030_backchannel_logout.ts";
import * as m0031 from "./0031_client_registrations.ts";
import * as m0032 from "./0032_client_profile.ts";
import * as m0033 from "./0033_api_oauth_clients.ts";
import * as m0034 from "./0034_client_jwks_uri.ts";
import * as m0035 from "./0035_ocsp_sweep.ts";
import * as m0036 from "./0036_status_heads_carry_status.ts";
import * as m0037 from "./0037_revoked_token_families.ts";
import * as m0038 from "./0038_status_certificate_through_head.ts";

/**
 * Every migration, in order. Names are permanent: once released, a migration is
 * never edited; changes come as a new one. Kept as imports (not a directory
 * scan) so that the set is fixed at build time and typed.
 */
export const migrations: Record<string, Migration> = {
  "0001_one_time_records": m0001,
  "0002_certificate_accounts": m0002,
  "0003_oidc_clients": m0003,
  "0004_oidc_users_sessions_grants": m0004,
  "0005_signing_keys": m0005,
  "0006_oidc_tokens": m0006,
  "0007_client_grant_types": m0007,
  "0008_mock_offered_methods": m0008,
  "0009_client_post_logout_redirect_uris": m0009,
  "0010_login_attempts": m0010,
  "0011_verifications": m0011,
  "0012_server_key_check": m0012,
  "0013_crl_lists": m0013,
  "0014_ocsp_responses": m0014,
  "0015_mock_crl_issue": m0015,
  "0016_token_sid": m0016,
  "0017_dpop": m0017,
  "0018_signing_alg_per_client": m0018,
  "0019_oidc_jpki": m0019,
  "0020_localized_names": m0020,
  "0021_api_auth_version": m0021,
  "0022_oidc_client_version": m0022,
  "0023_certificate_serials": m0023,
  "0024_status_chains": m0024,
  "0025_certificate_events": m0025,
  "0026_jpki_sign_requests": m0026,
  "0027_crl_list_parts": m0027,
  "0028_webhooks": m0028,
  "0029_passkeys": m0029,
  "0030_backchannel_logout": m0030,
  "0031_client_registrations": m0031,
  "0032_client_profile": m0032,
  "0033_api_oauth_clients": m0033,
  "0034_client_jwks_uri": m0034,
  "0035_ocsp_sweep": m0035,
  "0036_status_heads_carry_status": m0036,
  "0037_revoked_token_families": m0037,
  "0038_status_certificate_through_head": m0038,
};
