import type { Generated } from "kysely";

/**
 * Table shapes shared by SQLite and PostgreSQL. Timestamps are epoch
 * milliseconds (INTEGER / BIGINT): both databases compare them the same way
 * and no time zone handling can differ between them. Structured values are
 * JSON text. Identifiers are UUID text.
 */
export interface Tables {
  one_time_records: OneTimeRecordTable;
  accounts: AccountTable;
  api_tokens: ApiTokenTable;
  api_auth_version: ApiAuthVersionTable;
  api_access_tokens: ApiAccessTokenTable;
  certificate_users: CertificateUserTable;
  certificates: CertificateTable;
  certificate_statuses: CertificateStatusTable;
  certificate_status_heads: CertificateStatusHeadTable;
  certificate_events: CertificateEventTable;
  webhook_endpoints: WebhookEndpointTable;
  webhook_deliveries: WebhookDeliveryTable;
  webhook_attempts: WebhookAttemptTable;
  verifications: VerificationTable;
  mock_authorities: MockAuthorityTable;
  mock_certificate_states: MockCertificateStateTable;
  oidc_clients: OidcClientTable;
  oidc_client_version: OidcClientVersionTable;
  oidc_client_registrations: OidcClientRegistrationTable;
  oidc_registration_tokens: OidcRegistrationTokenTable;
  oidc_users: OidcUserTable;
  oidc_sessions: OidcSessionTable;
  oidc_session_clients: OidcSessionClientTable;
  oidc_logout_deliveries: OidcLogoutDeliveryTable;
  oidc_interactions: OidcInteractionTable;
  oidc_grants: OidcGrantTable;
  oidc_signing_keys: OidcSigningKeyTable;
  oidc_tokens: OidcTokenTable;
  oidc_revoked_families: OidcRevokedFamilyTable;
  oidc_dpop_proof_jtis: OidcDpopProofJtiTable;
  login_attempts: LoginAttemptTable;
  server_key_check: ServerKeyCheckTable;
  crl_lists: CrlListTable;
  crl_list_parts: CrlListPartTable;
  ocsp_responses: OcspResponseTable;
  ocsp_sweep_queue: OcspSweepQueueTable;
  ocsp_sweep_turn: OcspSweepTurnTable;
  oidc_jpki_links: OidcJpkiLinkTable;
  oidc_mock_cards: OidcMockCardTable;
  oidc_jpki_sign_requests: OidcJpkiSignRequestTable;
  oidc_passkeys: OidcPasskeyTable;
}

/** A passkey of an end user (migration 0029); flags are 0 or 1, transports JSON. */
export interface OidcPasskeyTable {
  credential_id: string;
  user_id: string;
  user_handle: string;
  public_key: string;
  sign_count: number;
  transports: string;
  backup_eligible: number;
  backed_up: number;
  name: string;
  created_at: number;
  last_used_at: number | null;
}

/** A certificate linked to an end user (migration 0019); status is what the last check found. */
export interface OidcJpkiLinkTable {
  certificate_id: string;
  user_id: string;
  fingerprint_sha256: string;
  certificate_type: string;
  not_after: number;
  status: string;
  linked_at: number;
  checked_at: number;
}

/** A signing request for a JPKI app (migration 0026); the binding code and the answer are sealed. */
export interface OidcJpkiSignRequestTable {
  id_hash: string;
  browser_hash: string;
  purpose: string;
  challenge: string;
  certificate_kind: string;
  client_name: string;
  binding_code_sealed: string;
  state: string;
  refusal: string | null;
  answer_sealed: string | null;
  pin_attempts_remaining: number | null;
  basic_info_consent_at: number | null;
  created_at: number;
  expires_at: number;
}

/** Mock mode: a user's mock card (certificate and key), sealed with the server key. */
export interface OidcMockCardTable {
  user_id: string;
  card_sealed: string;
  created_at: number;
}

/** See migration 0010: keys are HMACs, account_key is cleared by a successful sign-in. */
export interface LoginAttemptTable {
  id: string;
  account_key: string | null;
  address_key: string;
  attempted_at: number;
}

export interface OidcUserTable {
  id: string;
  login: string;
  password_hash: string;
  totp_secret_sealed: string | null;
  /** The last TOTP time step accepted, so a code cannot be used twice. */
  totp_last_step: number | null;
  name: string | null;
  /** JSON array of {tag, value}: the name in other languages and scripts (migration 0020). */
  localized_names: string | null;
  email: string | null;
  created_at: number;
}

/** The cookie holds the session id; only its SHA-256 is stored. amr is a JSON array. */
export interface OidcSessionTable {
  id_hash: string;
  user_id: string;
  auth_time: number;
  acr: string;
  amr: string;
  created_at: number;
  expires_at: number;
  /** When the holder agreed to the signature certificate's 基本4情報 being read (migration 0026); null when never asked. */
  basic_info_consent_at: Generated<number | null>;
}

/** A client issued a code in a session (migration 0030), for Back-Channel Logout. */
export interface OidcSessionClientTable {
  session_id_hash: string;
  client_id: string;
  sid: string;
  user_id: string;
  created_at: number;
}

/** A logout token to send (migration 0030); state: "pending" | "delivered" | "exhausted". */
export interface OidcLogoutDeliveryTable {
  id: string;
  client_id: string;
  user_id: string;
  sid: string;
  state: string;
  attempts: number;
  next_attempt_at: number;
  lease_token: string | null;
  lease_until: number | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

/** An authorization request being worked through the pages; state is JSON. */
export interface OidcInteractionTable {
  id_hash: string;
  /** SHA-256 of the browser-binding cookie: the interaction only continues in the browser that started it. */
  browser_hash: string;
  state: string;
  created_at: number;
  expires_at: number;
}

/** scopes and authorization_details are JSON arrays. */
export interface OidcGrantTable {
  id: string;
  user_id: string;
  client_id: string;
  scopes: string;
  authorization_details: string;
  created_at: number;
  updated_at: number;
  revoked_at: number | null;
}

/** A client that registered itself (migration 0031): the SHA-256 of its registration access token. */
export interface OidcClientRegistrationTable {
  client_id: string;
  access_token_hash: string;
  created_at: number;
  updated_at: number;
}

/** An initial access token for dynamic registration (migration 0031), kept as its SHA-256. */
export interface OidcRegistrationTokenTable {
  id: string;
  token_hash: string;
  name: string;
  created_at: number;
}

export interface OidcClientTable {
  client_id: string;
  name: string;
  type: string;
  auth_method: string;
  secret_hash: string | null;
  jwks: string | null;
  /** Where the client's keys are fetched instead of jwks (migration 0034); null: none. */
  jwks_uri: Generated<string | null>;
  redirect_uris: string;
  allowed_scopes: string;
  allowed_authorization_details_types: string;
  /** JSON array; see migration 0007. */
  grant_types: string;
  /** JSON array; see migration 0009. */
  post_logout_redirect_uris: string;
  /** "ES256" or "RS256"; see migration 0018. */
  id_token_signed_response_alg: string;
  /** 0 or 1: booleans are integers in both databases. */
  require_par: number;
  /** 0 or 1; see migration 0017. */
  dpop_bound_access_tokens: number;
  /** Where logout tokens are POSTed (migration 0030); null: none. */
  backchannel_logout_uri: Generated<string | null>;
  /** 0 or 1 (migration 0030). */
  backchannel_logout_session_required: Generated<number>;
  /** The API account of a client registered for the certificate API (migration 0033); null for relying parties. */
  account_id: Generated<string | null>;
  /** "fapi2" or null; see migration 0032. */
  profile: string | null;
  /** 0 or 1; see migration 0032. */
  require_signed_request_object: number;
  created_at: number;
  updated_at: number;
}

/** An API customer (tenant). api_status: "not_started" | "active" | "suspended". */
export interface AccountTable {
  id: string;
  name: string;
  api_status: string;
  created_at: number;
  updated_at: number;
}

/** An API token: the prefix finds it, the SHA-256 of the whole token proves it. */
export interface ApiTokenTable {
  id: string;
  account_id: string;
  prefix: string;
  secret_hash: string;
  name: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

/** One row: changes whenever a token is revoked or an account's API status changes (kept by triggers). */
export interface ApiAuthVersionTable {
  id: number;
  version: number;
}

/** One row: changes whenever a client registration is added, changed or removed (kept by triggers, migration 0022). */
export interface OidcClientVersionTable {
  id: number;
  version: number;
}

export interface CertificateUserTable {
  id: string;
  account_id: string;
  created_at: number;
}

/** origin: "mock" (issued by the mock CA) | "verified" (seen in a signature verification). */
export interface CertificateTable {
  id: string;
  account_id: string;
  user_id: string;
  type: string;
  origin: string;
  serial_number: string;
  issuer: string;
  /** Empty since migration 0011: not kept. */
  subject: string;
  not_before: number;
  not_after: number;
  fingerprint_sha256: string;
  /** JSON array of URLs. */
  crl_distribution_points: string;
  /** Empty since migration 0011: a signature certificate carries personal facts. */
  certificate_pem: string;
  created_at: number;
  /** "mock" or "sha256:<anchor fingerprint>"; null for rows stored before migration 0011. */
  trust_anchor: string | null;
  /** JSON array of URLs; null for rows stored before migration 0011. */
  ocsp_urls: string | null;
}

/** See migration 0011. result: "ok" | "signature_mismatch" | "certificate_expired" | "certificate_revoked". */
export interface VerificationTable {
  id: string;
  account_id: string;
  certificate_id: string;
  user_id: string | null;
  /** 0 or 1. */
  is_new_user: number;
  result: string;
  hash_algorithm: string;
  certificate_status_id: string | null;
  content_sealed: string | null;
  created_at: number;
}

/** revoked_reason is the RFC 5280 CRLReason code. */
export interface CertificateStatusTable {
  id: string;
  account_id: string;
  certificate_id: string;
  status: string;
  check_method: string;
  check_purpose: string;
  source_updated_at: number;
  revoked_at: number | null;
  revoked_reason: number | null;
  created_at: number;
  /** The same certificate's record before this one; set by a trigger on insert (migration 0024). */
  previous_id: Generated<string | null>;
}

/** A certificate's newest status record, where its history chain starts; kept by the insert trigger (migration 0024). */
export interface CertificateStatusHeadTable {
  certificate_id: string;
  status_id: string;
  previous_id: string | null;
  /** Copies of the newest record's and the previous record's status and reason, written by the trigger (migration 0036). */
  status: string | null;
  revoked_reason: number | null;
  previous_status: string | null;
  previous_revoked_reason: number | null;
}

/** Written only by the status history's trigger (migration 0025). */
export interface CertificateEventTable {
  seq: Generated<number>;
  id: string;
  account_id: string;
  certificate_id: string;
  type: string;
  status: string;
  previous_status: string;
  check_method: string;
  source_updated_at: number;
  revoked_at: number | null;
  revoked_reason: number | null;
  created_at: number;
  /** The data of an event about webhooks (JSON); null for a certificate event. */
  data: Generated<string | null>;
}

export interface WebhookEndpointTable {
  id: string;
  account_id: string;
  url: string;
  description: string;
  event_types: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_until: number | null;
  disabled_at: number | null;
  disabled_reason: string | null;
  failing_since: number | null;
  created_at: number;
  updated_at: number;
}

export interface WebhookDeliveryTable {
  event_id: string;
  endpoint_id: string;
  account_id: string;
  event_type: string;
  payload: string | null;
  state: string;
  attempts: number;
  next_attempt_at: number;
  lease_token: string | null;
  lease_until: number | null;
  created_at: number;
  updated_at: number;
}

export interface WebhookAttemptTable {
  id: string;
  event_id: string;
  endpoint_id: string;
  account_id: string;
  attempt: number;
  outcome: string;
  status_code: number | null;
  error: string | null;
  response_excerpt: string | null;
  started_at: number;
  duration_ms: number;
}

export interface MockAuthorityTable {
  id: string;
  certificate_pem: string;
  private_key_pem: string;
  created_at: number;
  crl_number: Generated<number>;
  crl_this_update: number | null;
}

export interface MockCertificateStateTable {
  certificate_id: string;
  status: string;
  revoked_at: number | null;
  revoked_reason: number | null;
  source_updated_at: number | null;
  updated_at: number;
  /** JSON array of check methods, or null for both (migration 0008). */
  offered_methods: string | null;
}

/**
 * Short-lived values that may be used exactly once: pushed request_uris,
 * authorization codes, rotated refresh tokens. The key is a hash of the secret
 * the client holds, never the secret itself.
 */
export interface OneTimeRecordTable {
  kind: string;
  key_hash: string;
  /** Who may consume it (client_id, account id); checked by the caller. */
  owner: string;
  payload: string;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
}

/**
 * ID token signing keys. public_jwk is JSON; private_jwk_sealed is the private
 * JWK sealed with the server key (associated data = kid). generation is unique
 * and increasing: the key of the highest generation signs, unless retired.
 */
export interface OidcSigningKeyTable {
  kid: string;
  /** Unique per alg since migration 0018. */
  generation: number;
  alg: string;
  public_jwk: string;
  private_jwk_sealed: string;
  created_at: number;
  activated_at: number;
  /** When the key stopped signing; it stays published for a grace period after. */
  retired_at: number | null;
}

/** Access and refresh tokens by the SHA-256 of their value (see migration 0006). JSON in scopes, authorization_details, amr. */
export interface OidcTokenTable {
  token_hash: string;
  kind: string;
  family: string;
  client_id: string;
  user_id: string;
  grant_id: string;
  scopes: string;
  authorization_details: string;
  auth_time: number;
  acr: string;
  amr: string;
  /** See migration 0015; null for tokens issued before it. */
  sid: string | null;
  /** JSON array of the claims_locales the token was issued for (migration 0020). */
  claims_locales: string | null;
  /** See migration 0017: the DPoP key thumbprint the token is bound to, or null. */
  dpop_jkt: string | null;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
  revoked_at: number | null;
}

/** See migration 0037: a token family revoked whole, until none of its tokens can be live. */
export interface OidcRevokedFamilyTable {
  family: string;
  revoked_at: number;
  expires_at: number;
}

/** See migration 0017: a used DPoP proof, by SHA-256 of its key thumbprint and jti, until its iat window passed. */
export interface OidcDpopProofJtiTable {
  jti_hash: string;
  expires_at: number;
}

/** See migration 0012: an HMAC of a fixed text under the server key. */
export interface ServerKeyCheckTable {
  id: string;
  key_check: string;
  created_at: number;
}

/** See migration 0013: the CRLs fetched, shared by the instances on one database. */
/** A stored list's DER, a megabyte a part (migration 0027). */
export interface CrlListPartTable {
  issuer_anchor: string;
  url: string;
  part: number;
  sha256: string;
  bytes: Uint8Array;
}

export interface CrlListTable {
  issuer_anchor: string;
  url: string;
  der: Uint8Array | null;
  sha256: string | null;
  etag: string | null;
  last_modified: string | null;
  this_update: number | null;
  next_update: number | null;
  /** 49 decimal digits, zero-padded, so text order is numeric order. */
  crl_number: string | null;
  entries: number | null;
  bytes: number | null;
  fetched_at: number | null;
  checked_at: number | null;
  last_error: string | null;
  last_error_at: number | null;
}

/** See migration 0014. */
/** The OCSP sweep's queue (migration 0035): one row per certificate of a trust anchor, filled by a trigger. */
export interface OcspSweepQueueTable {
  issuer_anchor: string;
  serial_number: string;
  due_at: number;
  lease_token: string | null;
  leased_until: number | null;
}

/** When the next claim from the OCSP sweep's queue may be made, by any instance (migration 0035): one row. */
export interface OcspSweepTurnTable {
  id: number;
  next_claim_at: number;
  /** The lease token of the claim holding the turn. */
  holder: string | null;
}

export interface OcspResponseTable {
  issuer_anchor: string;
  serial_number: string;
  url: string;
  der: Uint8Array;
  sha256: string;
  produced_at: number;
  this_update: number;
  next_update: number | null;
  usable_until: number;
  fetched_at: number;
}

/** An access token of an API account's OAuth client (migration 0033); scopes space-separated. */
export interface ApiAccessTokenTable {
  token_hash: string;
  client_id: string;
  account_id: string;
  scopes: string;
  dpop_jkt: string | null;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}
