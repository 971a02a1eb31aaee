import * as z from "zod";

/**
 * Every setting shomei reads, with its environment variable and its key in the
 * optional JSON config file. The environment wins over the file so that one file
 * can be shared by several instances that differ only in, say, PORT.
 */
export const settings = {
  mode: { env: "SHOMEI_MODE" },
  host: { env: "HOST" },
  port: { env: "PORT" },
  baseUrl: { env: "BASE_URL" },
  databaseUrl: { env: "DATABASE_URL" },
  migrateOnStart: { env: "SHOMEI_MIGRATE_ON_START" },
  dataDir: { env: "SHOMEI_DATA_DIR" },
  logLevel: { env: "LOG_LEVEL" },
  accessLog: { env: "SHOMEI_ACCESS_LOG" },
  maxBodyBytes: { env: "SHOMEI_MAX_BODY_BYTES" },
  shutdownTimeoutMs: { env: "SHOMEI_SHUTDOWN_TIMEOUT_MS" },
  tlsCertFile: { env: "SHOMEI_TLS_CERT_FILE" },
  tlsKeyFile: { env: "SHOMEI_TLS_KEY_FILE" },
  secretKeyFile: { env: "SHOMEI_SECRET_KEY_FILE" },
  parLifetimeSeconds: { env: "SHOMEI_PAR_LIFETIME_SECONDS" },
  clientJwksCacheSeconds: { env: "SHOMEI_CLIENT_JWKS_CACHE_SECONDS" },
  advertiseAuthorizationResponseIss: { env: "SHOMEI_ADVERTISE_AUTHORIZATION_RESPONSE_ISS" },
  acrPolicyFile: { env: "SHOMEI_ACR_POLICY_FILE" },
  sessionLifetimeSeconds: { env: "SHOMEI_SESSION_LIFETIME_SECONDS" },
  jpkiSignRequestLifetimeSeconds: { env: "SHOMEI_JPKI_SIGN_REQUEST_LIFETIME_SECONDS" },
  clientsFile: { env: "SHOMEI_CLIENTS_FILE" },
  sweepIntervalSeconds: { env: "SHOMEI_SWEEP_INTERVAL_SECONDS" },
  loginMaxFailuresPerAccountAtAddress: { env: "SHOMEI_LOGIN_MAX_FAILURES_PER_ACCOUNT_AT_ADDRESS" },
  loginMaxFailuresPerAccount: { env: "SHOMEI_LOGIN_MAX_FAILURES_PER_ACCOUNT" },
  loginMaxFailuresPerAddress: { env: "SHOMEI_LOGIN_MAX_FAILURES_PER_ADDRESS" },
  loginThrottleWindowSeconds: { env: "SHOMEI_LOGIN_THROTTLE_WINDOW_SECONDS" },
  dpopRequireNonce: { env: "SHOMEI_DPOP_REQUIRE_NONCE" },
  fapi2DpopRequireNonce: { env: "SHOMEI_FAPI2_DPOP_REQUIRE_NONCE" },
  publicParMaxPerClient: { env: "SHOMEI_PUBLIC_PAR_MAX_PER_CLIENT" },
  publicParMaxPerAddress: { env: "SHOMEI_PUBLIC_PAR_MAX_PER_ADDRESS" },
  clientRegistration: { env: "SHOMEI_CLIENT_REGISTRATION" },
  clientRegistrationTokenSha256: { env: "SHOMEI_CLIENT_REGISTRATION_TOKEN_SHA256" },
  clientRegistrationMaxPerAddress: { env: "SHOMEI_CLIENT_REGISTRATION_MAX_PER_ADDRESS" },
  clientRegistrationMaxPerMinute: { env: "SHOMEI_CLIENT_REGISTRATION_MAX_PER_MINUTE" },
  headersTimeoutMs: { env: "SHOMEI_HEADERS_TIMEOUT_MS" },
  requestTimeoutMs: { env: "SHOMEI_REQUEST_TIMEOUT_MS" },
  keepAliveTimeoutMs: { env: "SHOMEI_KEEP_ALIVE_TIMEOUT_MS" },
  maxConnections: { env: "SHOMEI_MAX_CONNECTIONS" },
  maxConnectionsPerAddress: { env: "SHOMEI_MAX_CONNECTIONS_PER_ADDRESS" },
  trustAnchorsFile: { env: "SHOMEI_TRUST_ANCHORS_FILE" },
  storeCertificateContent: { env: "SHOMEI_STORE_CERTIFICATE_CONTENT" },
  crlFetchTimeoutMs: { env: "SHOMEI_CRL_FETCH_TIMEOUT_MS" },
  crlMaxBytes: { env: "SHOMEI_CRL_MAX_BYTES" },
  crlRefreshIntervalSeconds: { env: "SHOMEI_CRL_REFRESH_INTERVAL_SECONDS" },
  eventsHeartbeatSeconds: { env: "SHOMEI_EVENTS_HEARTBEAT_SECONDS" },
  eventsRetentionDays: { env: "SHOMEI_EVENTS_RETENTION_DAYS" },
  webhookAttemptsRetentionDays: { env: "SHOMEI_WEBHOOK_ATTEMPTS_RETENTION_DAYS" },
  webhookTimeoutMs: { env: "SHOMEI_WEBHOOK_TIMEOUT_MS" },
  webhookRetrySchedule: { env: "SHOMEI_WEBHOOK_RETRY_SCHEDULE" },
  webhookAllowPrivate: { env: "SHOMEI_WEBHOOK_ALLOW_PRIVATE" },
  webhookConcurrencyPerEndpoint: { env: "SHOMEI_WEBHOOK_CONCURRENCY_PER_ENDPOINT" },
  webhookMaxInFlight: { env: "SHOMEI_WEBHOOK_MAX_IN_FLIGHT" },
  webhookPollMs: { env: "SHOMEI_WEBHOOK_POLL_MS" },
  webhookDisableAfterFailingHours: { env: "SHOMEI_WEBHOOK_DISABLE_AFTER_FAILING_HOURS" },
  backchannelLogoutRetrySchedule: { env: "SHOMEI_BACKCHANNEL_LOGOUT_RETRY_SCHEDULE" },
  ocspTimeoutMs: { env: "SHOMEI_OCSP_TIMEOUT_MS" },
  ocspNonceBytes: { env: "SHOMEI_OCSP_NONCE_BYTES" },
  ocspNoNextUpdateSeconds: { env: "SHOMEI_OCSP_NO_NEXT_UPDATE_SECONDS" },
  ocspSweep: { env: "SHOMEI_OCSP_SWEEP" },
  ocspSweepPerSecond: { env: "SHOMEI_OCSP_SWEEP_PER_SECOND" },
  ocspSweepIntervalHours: { env: "SHOMEI_OCSP_SWEEP_INTERVAL_HOURS" },
  checkMethodOrder: { env: "SHOMEI_CHECK_METHOD_ORDER" },
  defaultLocale: { env: "SHOMEI_DEFAULT_LOCALE" },
  oneOffAuthorizationDetailsTypes: { env: "SHOMEI_ONE_OFF_AUTHORIZATION_DETAILS_TYPES" },
  timeZone: { env: "SHOMEI_TIME_ZONE" },
  webauthnRpId: { env: "SHOMEI_WEBAUTHN_RP_ID" },
  webauthnOrigins: { env: "SHOMEI_WEBAUTHN_ORIGINS" },
} as const;

export type SettingName = keyof typeof settings;

// Only numbers and numeric text count: z.coerce would turn "", " " and null into 0 (PORT=" " would listen on a random port).
const integer = (min: number, max: number) =>
  z.preprocess(
    (v) => (typeof v === "string" && v.trim() !== "" ? Number(v) : v),
    z
      .number({ error: "must be a number" })
      .int({ error: "must be a whole number" })
      .min(min, { error: `must be at least ${min}` })
      .max(max, { error: `must be at most ${max}` }),
  );

const flag = z.union(
  [z.boolean(), z.enum(["true", "false", "1", "0", "yes", "no"]).transform((v) => ["true", "1", "yes"].includes(v))],
  { error: "must be true or false" },
);

const absoluteHttpUrl = z
  .string()
  .refine((v) => URL.canParse(v) && ["http:", "https:"].includes(new URL(v).protocol), {
    error: "must be an absolute http:// or https:// URL",
    abort: true, // the checks below parse the URL
  })
  .refine((v) => !new URL(v).search && !new URL(v).hash, { error: "must not carry a query or a fragment" })
  .transform((v) => v.replace(/\/+$/, ""));

/** A comma-separated list of delays before each attempt of a delivery (webhooks, logout tokens). */
const retrySchedule = z.preprocess(
  (v) => (typeof v === "string" ? v.split(",").map((d) => d.trim()) : v),
  z.array(z.string().regex(/^\d+(ms|s|m|h)?$/, { error: "must be durations such as 0,5s,5m,30m,2h" }).transform(durationMs), {
    error: "must be a comma-separated list of durations",
  }).min(1, { error: "must list at least one attempt" }).max(50, { error: "must list at most 50 attempts" }),
);

const databaseUrl = z
  .string()
  .min(1, { error: "must not be empty" })
  .refine((v) => /^(postgres|postgresql):\/\//.test(v) || /^sqlite:/.test(v) || !/^[a-z][a-z0-9+.-]*:\/\//i.test(v), {
    error: "must be postgres://…, postgresql://…, sqlite:<path> or a file path",
  });

export const configSchema = z
  .object({
    mode: z.enum(["mock", "production"], { error: "must be mock or production" }).default("production"),
    host: z.string().min(1, { error: "must not be empty" }).optional(),
    port: integer(0, 65535).default(8080),
    baseUrl: absoluteHttpUrl.optional(),
    databaseUrl: databaseUrl.optional(),
    migrateOnStart: flag.default(true),
    dataDir: z.string().min(1, { error: "must not be empty" }).default("./data"),
    logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"], {
      error: "must be one of fatal, error, warn, info, debug, trace, silent",
    }).default("info"),
    /** A log line per request (at info): off by default, as access logs are in the field (a proxy in front usually keeps them). */
    accessLog: flag.default(false),
    maxBodyBytes: integer(1024, 64 * 1024 * 1024).default(1024 * 1024),
    shutdownTimeoutMs: integer(0, 600_000).default(10_000),
    tlsCertFile: z.string().min(1, { error: "must not be empty" }).optional(),
    tlsKeyFile: z.string().min(1, { error: "must not be empty" }).optional(),
    secretKeyFile: z.string().min(1, { error: "must not be empty" }).optional(),
    parLifetimeSeconds: integer(5, 600).default(60),
    /** How long the key set at a client's jwks_uri is used before it is fetched again (an unknown kid fetches sooner). */
    clientJwksCacheSeconds: integer(1, 86_400).default(300),
    /**
     * Whether discovery says authorization responses carry `iss` (RFC 9207). They always do; false only stops
     * saying so, for clients that rebuild the callback URL from code and state and then miss the promised `iss`.
     */
    advertiseAuthorizationResponseIss: flag.default(true),
    /** JSON file of the ACR levels (names, aliases, the methods that earn each); the built-in policy without it. */
    acrPolicyFile: z.string().min(1, { error: "must not be empty" }).optional(),
    sessionLifetimeSeconds: integer(60, 30 * 24 * 3600).default(8 * 3600),
    /**
     * How long a JPKI app may answer a signing request (scan, PIN, card on the phone): short, as cross-device
     * flows should be; at most the five minutes a challenge lives.
     */
    jpkiSignRequestLifetimeSeconds: integer(30, 300).default(180),
    clientsFile: z.string().min(1, { error: "must not be empty" }).optional(),
    /** How often expired codes, tokens, interactions and sessions are deleted; 0 turns it off. */
    sweepIntervalSeconds: integer(0, 24 * 3600).default(600),
    /**
     * Failed sign-in attempts within the window, each factor (password, one-time code) apart: per account from one
     * address (the usual lock, felt only there), per account from all addresses, per address whatever the accounts.
     */
    loginMaxFailuresPerAccountAtAddress: integer(1, 1000).default(5),
    loginMaxFailuresPerAccount: integer(1, 10_000).default(20),
    loginMaxFailuresPerAddress: integer(1, 100_000).default(20),
    loginThrottleWindowSeconds: integer(1, 24 * 3600).default(900),
    /** Whether every DPoP proof must carry a nonce from the server's DPoP-Nonce header (RFC 9449 section 8). */
    dpopRequireNonce: flag.default(false),
    /** Whether the DPoP proofs of clients with the fapi2 profile must carry the server's nonce (FAPI 2.0 5.3.2.1-10). */
    fapi2DpopRequireNonce: flag.default(false),
    /** Pushed authorization requests of one public client, and of public clients from one address, per minute. */
    publicParMaxPerClient: integer(1, 100_000).default(600),
    publicParMaxPerAddress: integer(1, 100_000).default(30),
    /**
     * Dynamic client registration (RFC 7591, /api/oidc/v1/register): off; by an initial access token (the one
     * whose SHA-256 clientRegistrationTokenSha256 holds, or one made by `shomei client registration-token create`);
     * or open to anyone.
     */
    clientRegistration: z.enum(["off", "token", "open"], { error: "must be off, token or open" }).default("off"),
    /** SHA-256 (64 lowercase hex digits) of an initial access token the operator chose. */
    clientRegistrationTokenSha256: z.string().regex(/^[0-9a-f]{64}$/, { error: "must be 64 lowercase hex digits (a SHA-256)" }).optional(),
    /** Registrations per minute from one address, and from all addresses together. */
    clientRegistrationMaxPerAddress: integer(1, 100_000).default(10),
    clientRegistrationMaxPerMinute: integer(1, 100_000).default(60),
    /** How long a client may take to send a request's headers (HTTP/1.1), or its first bytes (any protocol). */
    headersTimeoutMs: integer(1000, 600_000).default(20_000),
    /** How long a client may take to send a whole HTTP/1.1 request, body included. */
    requestTimeoutMs: integer(1000, 3_600_000).default(60_000),
    /** How long an idle keep-alive connection (HTTP/1.1) or HTTP/2 session is kept open. */
    keepAliveTimeoutMs: integer(1000, 600_000).default(5_000),
    /** Open connections in all; past it, new ones are closed at once. */
    maxConnections: integer(1, 1_000_000).default(10_000),
    /** Open connections from one client address (IPv6 per /64). */
    maxConnectionsPerAddress: integer(1, 1_000_000).default(512),
    /** JSON file naming the CA certificates signatures may chain to and the certificate types each issues. */
    trustAnchorsFile: z.string().min(1, { error: "must not be empty" }).optional(),
    /** Keep the personal facts read from certificates (sealed) with verifications; false keeps none. */
    storeCertificateContent: flag.default(true),
    /** How long fetching one CRL may take, body included. */
    crlFetchTimeoutMs: integer(1000, 600_000).default(10_000),
    /** The largest CRL fetched (a 1,000,000-entry list is about 38 MB). */
    crlMaxBytes: integer(1024, 2 * 1024 * 1024 * 1024).default(128 * 1024 * 1024),
    /** How often a CRL is asked for again (conditional request) at most; sooner as its nextUpdate nears. */
    crlRefreshIntervalSeconds: integer(60, 7 * 24 * 3600).default(3600),
    eventsHeartbeatSeconds: integer(1, 3600).default(15),
    /** Events older than this are deleted (unless a delivery of theirs is still pending). */
    eventsRetentionDays: integer(1, 3650).default(90),
    /** Webhook attempts and finished deliveries older than this are deleted. */
    webhookAttemptsRetentionDays: integer(1, 3650).default(30),
    /** A webhook attempt is delivered when a 2xx comes within this. */
    webhookTimeoutMs: integer(100, 120_000).default(15_000),
    /** The delays before each attempt of a delivery (ms, s, m, h); past the last, it is exhausted. */
    webhookRetrySchedule: retrySchedule.default([0, 5e3, 5 * 60e3, 30 * 60e3, 2 * 3600e3, 5 * 3600e3, 10 * 3600e3, 10 * 3600e3]),
    /** Whether webhook endpoints may be http:// or loopback, private or link-local addresses; unset: only in mock mode. */
    webhookAllowPrivate: flag.optional(),
    /** Attempts in flight to one endpoint from one instance at most. */
    webhookConcurrencyPerEndpoint: integer(1, 1000).default(4),
    /** Attempts in flight from one instance at most. */
    webhookMaxInFlight: integer(1, 10_000).default(256),
    /** How often an idle delivery loop looks for due deliveries (those queued by other instances, retries). */
    webhookPollMs: integer(10, 60_000).default(1000),
    /** An endpoint every attempt to which failed for this long is disabled. */
    webhookDisableAfterFailingHours: integer(1, 24 * 365).default(120),
    /** The delays before each attempt to send a logout token (Back-Channel Logout); a session ended hours ago is news to nobody. */
    backchannelLogoutRetrySchedule: retrySchedule.default([0, 5e3, 30e3, 5 * 60e3, 30 * 60e3, 2 * 3600e3]),
    /** How long one OCSP exchange may take, body included; past it the check answers unavailable. */
    ocspTimeoutMs: integer(100, 60_000).default(5000),
    /** Length of the nonce sent with OCSP requests (RFC 8954, 1 to 32); 0 sends none (RFC 5019 responders often ignore it). */
    ocspNonceBytes: integer(0, 32).default(0),
    /** How long an OCSP response without nextUpdate is used (and cached) after its thisUpdate. */
    ocspNoNextUpdateSeconds: integer(1, 3600).default(300),
    /** Whether registered certificates of issuers with OCSP and no CRL are asked for again by a periodic sweep (docs/events.md). */
    ocspSweep: z.enum(["off", "on"], { error: "must be off or on" }).default("off"),
    /** Requests the sweep sends to responders per second, for all instances sharing the database together. */
    ocspSweepPerSecond: integer(1, 1000).default(5),
    /** How old a certificate's last OCSP answer may be before the sweep asks again (never before its nextUpdate). */
    ocspSweepIntervalHours: integer(1, 24 * 365).default(24),
    /** Which method answers a check that names none, and which it falls back to when the first cannot answer. */
    checkMethodOrder: z.enum(["crl,ocsp", "ocsp,crl"], { error: "must be crl,ocsp or ocsp,crl" }).default("crl,ocsp"),
    /** The pages' language when neither ui_locales nor the browser's Accept-Language names a supported one. */
    // The languages the pages have catalogues for (src/http/i18n/locale.ts; the HTTP layer takes this value as its Locale type).
    defaultLocale: z.enum(["en", "ja"], { error: "must be en or ja" }).default("en"),
    /**
     * authorization_details types that are one act each (a payment): every request with one shows the consent
     * page, even when an equal one was approved before. Comma-separated in the environment, `none` for none.
     */
    oneOffAuthorizationDetailsTypes: z
      .preprocess(
        (v) => (typeof v === "string" ? (v.trim() === "none" ? [] : v.split(",").map((t) => t.trim()).filter(Boolean)) : v),
        z.array(z.string().min(1, { error: "must not be empty" }), { error: "must be a list of authorization_details types" }),
      )
      .default(["payment_initiation"]),
    /** The IANA time zone the pages show times in (always named beside them). */
    timeZone: z
      .string()
      .refine((zone) => isTimeZone(zone), { error: "must be an IANA time zone name such as Asia/Tokyo or UTC" })
      .default("Asia/Tokyo"),
    /**
     * Passkeys: the WebAuthn RP ID (a domain: the issuer's host or a registrable suffix of it) and the origins
     * whose pages may use passkeys (comma-separated); by default the issuer's host and origin. Never taken from a
     * request's Host.
     */
    webauthnRpId: z
      .string()
      .regex(/^(?=.{1,253}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/, { error: "must be a lower-case domain name such as id.example.jp" })
      .optional(),
    webauthnOrigins: z
      .preprocess(
        (v) => (typeof v === "string" ? v.split(",").map((t) => t.trim()).filter(Boolean) : v),
        z.array(
          z.string().refine((v) => URL.canParse(v) && ["http:", "https:"].includes(new URL(v).protocol) && new URL(v).origin === v, {
            error: "must be origins such as https://id.example.jp (scheme, host and port only)",
          }),
          { error: "must be a list of origins" },
        ),
      )
      .optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (Boolean(c.tlsCertFile) !== Boolean(c.tlsKeyFile)) {
      // Reported on the setting that is present, so the message names where it came from.
      const [present, missing] = c.tlsCertFile ? (["tlsCertFile", "tlsKeyFile"] as const) : (["tlsKeyFile", "tlsCertFile"] as const);
      ctx.addIssue({
        code: "custom",
        path: [present],
        message: `is set, so ${settings[missing].env} ("${missing}" in a config file) must be set too`,
      });
    }
    // Browsers refuse every passkey ceremony of a page whose origin is not on the RP ID: a start-up error, not a silent failure.
    if (c.webauthnRpId !== undefined || c.webauthnOrigins !== undefined) {
      const issuerHost = c.baseUrl === undefined ? "localhost" : new URL(c.baseUrl).hostname;
      const rpId = c.webauthnRpId ?? issuerHost;
      const origins = c.webauthnOrigins?.length ? c.webauthnOrigins : [c.baseUrl ?? "http://localhost"];
      const outside = origins.filter((origin) => {
        const host = new URL(origin).hostname;
        return host !== rpId && !host.endsWith(`.${rpId}`);
      });
      if (outside.length > 0) {
        ctx.addIssue({
          code: "custom",
          path: [c.webauthnOrigins?.length ? "webauthnOrigins" : "webauthnRpId"],
          message: `names ${outside.join(", ")}, not on the RP ID ${rpId} or a subdomain of it (browsers would refuse every passkey)`,
        });
      }
    }
  });

/** "5s", "5m", "2h", "250ms" or a bare number of milliseconds. */
function durationMs(text: string): number {
  const [, value, unit] = /^(\d+)(ms|s|m|h)?$/.exec(text)!;
  return Number(value) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit ?? "ms"]!;
}

/** Whether the platform knows the time zone (Intl throws a RangeError for an unknown one). */
function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

type Parsed = z.output<typeof configSchema>;

/** The validated configuration with every derived default filled in. */
export interface Config extends Omit<Parsed, "baseUrl" | "databaseUrl" | "webhookAllowPrivate"> {
  /** Derived from the mode when not set: allowed in mock mode only. */
  webhookAllowPrivate: boolean;
  baseUrl: string;
  /** True when baseUrl was derived from the port rather than configured: the server fixes it once the port is bound. */
  baseUrlDerived: boolean;
  databaseUrl: string;
}
