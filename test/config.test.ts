import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig, type LoadOptions } from "../src/config/load.ts";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "shomei-config-"));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

let files = 0;
/** Writes `content` (JSON-encoded unless it is a string) to a fresh file and returns its path. */
function configFile(content: unknown): string {
  const file = path.join(dir, `config-${++files}.json`);
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

/** The ConfigError message loadConfig throws; fails the test when it returns or throws anything else. */
function configError(options: LoadOptions): string {
  let thrown: unknown;
  try {
    loadConfig(options);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(ConfigError);
  return (thrown as ConfigError).message;
}

const invalid = (...lines: string[]) => `invalid configuration:\n${lines.map((l) => `  - ${l}`).join("\n")}`;

describe("loadConfig defaults", () => {
  it("fills in every default from an empty environment", () => {
    expect(loadConfig({ env: {} })).toEqual({
      mode: "production",
      port: 8080,
      baseUrl: "http://localhost:8080",
      baseUrlDerived: true,
      databaseUrl: `sqlite:${path.join("./data", "shomei.db")}`,
      migrateOnStart: true,
      dataDir: "./data",
      logLevel: "info",
      accessLog: false,
      maxBodyBytes: 1024 * 1024,
      shutdownTimeoutMs: 10_000,
      parLifetimeSeconds: 60,
      clientJwksCacheSeconds: 300,
      advertiseAuthorizationResponseIss: true,
      sessionLifetimeSeconds: 8 * 3600,
      jpkiSignRequestLifetimeSeconds: 180,
      sweepIntervalSeconds: 600,
      storeCertificateContent: true,
      crlFetchTimeoutMs: 10_000,
      crlMaxBytes: 128 * 1024 * 1024,
      crlRefreshIntervalSeconds: 3600,
      eventsHeartbeatSeconds: 15,
      eventsRetentionDays: 90,
      webhookAttemptsRetentionDays: 30,
      webhookTimeoutMs: 15_000,
      webhookRetrySchedule: [0, 5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
      webhookAllowPrivate: false,
      webhookConcurrencyPerEndpoint: 4,
      webhookMaxInFlight: 256,
      webhookPollMs: 1000,
      webhookDisableAfterFailingHours: 120,
      backchannelLogoutRetrySchedule: [0, 5000, 30_000, 300_000, 1_800_000, 7_200_000],
      ocspTimeoutMs: 5000,
      ocspNonceBytes: 0,
      ocspNoNextUpdateSeconds: 300,
      ocspSweep: "off",
      ocspSweepPerSecond: 5,
      ocspSweepIntervalHours: 24,
      checkMethodOrder: "crl,ocsp",
      defaultLocale: "en",
      loginMaxFailuresPerAccountAtAddress: 5,
      loginMaxFailuresPerAccount: 20,
      loginMaxFailuresPerAddress: 20,
      loginThrottleWindowSeconds: 900,
      dpopRequireNonce: false,
      fapi2DpopRequireNonce: false,
      publicParMaxPerClient: 600,
      publicParMaxPerAddress: 30,
      clientRegistration: "off",
      clientRegistrationMaxPerAddress: 10,
      clientRegistrationMaxPerMinute: 60,
      headersTimeoutMs: 20_000,
      requestTimeoutMs: 60_000,
      keepAliveTimeoutMs: 5_000,
      maxConnections: 10_000,
      maxConnectionsPerAddress: 512,
      oneOffAuthorizationDetailsTypes: ["payment_initiation"],
      timeZone: "Asia/Tokyo",
    });
    expect(`sqlite:${path.join("./data", "shomei.db")}`).toBe("sqlite:data/shomei.db");
  });

  it("derives the base URL from the port, and uses https when TLS files are set", () => {
    expect(loadConfig({ env: { PORT: "9000" } }).baseUrl).toBe("http://localhost:9000");
    const tls = loadConfig({ env: { SHOMEI_TLS_CERT_FILE: "/etc/shomei/cert.pem", SHOMEI_TLS_KEY_FILE: "/etc/shomei/key.pem" } });
    expect(tls).toMatchObject({ baseUrl: "https://localhost:8080", tlsCertFile: "/etc/shomei/cert.pem", tlsKeyFile: "/etc/shomei/key.pem" });
  });

  it("puts the SQLite database in the data directory", () => {
    expect(loadConfig({ env: { SHOMEI_DATA_DIR: "/var/lib/shomei" } }).databaseUrl).toBe("sqlite:/var/lib/shomei/shomei.db");
  });

  it("does not read process.env when given an env object", () => {
    const saved = process.env.PORT;
    process.env.PORT = "1234";
    try {
      expect(loadConfig({ env: {} }).port).toBe(8080);
    } finally {
      if (saved === undefined) delete process.env.PORT;
      else process.env.PORT = saved;
    }
  });
});

describe("loadConfig sources", () => {
  it("reads every setting from its environment variable", () => {
    const config = loadConfig({
      env: {
        SHOMEI_MODE: "mock",
        HOST: "127.0.0.1",
        PORT: "8443",
        BASE_URL: "https://id.example.com/",
        DATABASE_URL: "postgres://shomei@db.internal:5432/shomei",
        SHOMEI_MIGRATE_ON_START: "false",
        SHOMEI_DATA_DIR: "/srv/shomei",
        LOG_LEVEL: "debug",
        SHOMEI_ACCESS_LOG: "true",
        SHOMEI_MAX_BODY_BYTES: "2048",
        SHOMEI_SHUTDOWN_TIMEOUT_MS: "0",
        SHOMEI_TLS_CERT_FILE: "cert.pem",
        SHOMEI_TLS_KEY_FILE: "key.pem",
        SHOMEI_SWEEP_INTERVAL_SECONDS: "0",
        SHOMEI_JPKI_SIGN_REQUEST_LIFETIME_SECONDS: "90",
        SHOMEI_ADVERTISE_AUTHORIZATION_RESPONSE_ISS: "false",
        SHOMEI_ACR_POLICY_FILE: "/etc/shomei/acr.json",
        SHOMEI_TRUST_ANCHORS_FILE: "/etc/shomei/trust-anchors.json",
        SHOMEI_STORE_CERTIFICATE_CONTENT: "false",
        SHOMEI_CRL_FETCH_TIMEOUT_MS: "5000",
        SHOMEI_CRL_MAX_BYTES: "67108864",
        SHOMEI_CRL_REFRESH_INTERVAL_SECONDS: "900",
        SHOMEI_EVENTS_HEARTBEAT_SECONDS: "30",
        SHOMEI_EVENTS_RETENTION_DAYS: "7",
        SHOMEI_WEBHOOK_ATTEMPTS_RETENTION_DAYS: "3",
        SHOMEI_WEBHOOK_TIMEOUT_MS: "5000",
        SHOMEI_WEBHOOK_RETRY_SCHEDULE: "0, 250ms, 5s, 1m, 2h, 1500",
        SHOMEI_WEBHOOK_ALLOW_PRIVATE: "false",
        SHOMEI_WEBHOOK_CONCURRENCY_PER_ENDPOINT: "2",
        SHOMEI_WEBHOOK_MAX_IN_FLIGHT: "32",
        SHOMEI_WEBHOOK_POLL_MS: "200",
        SHOMEI_WEBHOOK_DISABLE_AFTER_FAILING_HOURS: "24",
        SHOMEI_BACKCHANNEL_LOGOUT_RETRY_SCHEDULE: "0,1s,1m",
        SHOMEI_OCSP_TIMEOUT_MS: "2500",
        SHOMEI_OCSP_NONCE_BYTES: "16",
        SHOMEI_OCSP_NO_NEXT_UPDATE_SECONDS: "60",
        SHOMEI_OCSP_SWEEP: "on",
        SHOMEI_OCSP_SWEEP_PER_SECOND: "20",
        SHOMEI_OCSP_SWEEP_INTERVAL_HOURS: "6",
        SHOMEI_CHECK_METHOD_ORDER: "ocsp,crl",
        SHOMEI_DEFAULT_LOCALE: "ja",
        SHOMEI_ONE_OFF_AUTHORIZATION_DETAILS_TYPES: "payment_initiation, transfer",
        SHOMEI_TIME_ZONE: "Europe/Berlin",
        SHOMEI_LOGIN_MAX_FAILURES_PER_ACCOUNT_AT_ADDRESS: "2",
        SHOMEI_LOGIN_MAX_FAILURES_PER_ACCOUNT: "3",
        SHOMEI_LOGIN_MAX_FAILURES_PER_ADDRESS: "30",
        SHOMEI_LOGIN_THROTTLE_WINDOW_SECONDS: "600",
        SHOMEI_DPOP_REQUIRE_NONCE: "true",
        SHOMEI_FAPI2_DPOP_REQUIRE_NONCE: "true",
        SHOMEI_PUBLIC_PAR_MAX_PER_CLIENT: "100",
        SHOMEI_PUBLIC_PAR_MAX_PER_ADDRESS: "10",
        SHOMEI_CLIENT_REGISTRATION: "token",
        SHOMEI_CLIENT_REGISTRATION_TOKEN_SHA256: "ab".repeat(32),
        SHOMEI_CLIENT_REGISTRATION_MAX_PER_ADDRESS: "5",
        SHOMEI_CLIENT_REGISTRATION_MAX_PER_MINUTE: "50",
        SHOMEI_HEADERS_TIMEOUT_MS: "5000",
        SHOMEI_REQUEST_TIMEOUT_MS: "30000",
        SHOMEI_KEEP_ALIVE_TIMEOUT_MS: "2000",
        SHOMEI_MAX_CONNECTIONS: "100",
        SHOMEI_MAX_CONNECTIONS_PER_ADDRESS: "10",
      },
    });
    expect(config).toEqual({
      mode: "mock",
      host: "127.0.0.1",
      port: 8443,
      baseUrl: "https://id.example.com",
      baseUrlDerived: false,
      databaseUrl: "postgres://shomei@db.internal:5432/shomei",
      migrateOnStart: false,
      dataDir: "/srv/shomei",
      logLevel: "debug",
      accessLog: true,
      maxBodyBytes: 2048,
      shutdownTimeoutMs: 0,
      tlsCertFile: "cert.pem",
      tlsKeyFile: "key.pem",
      parLifetimeSeconds: 60,
      clientJwksCacheSeconds: 300,
      advertiseAuthorizationResponseIss: false,
      acrPolicyFile: "/etc/shomei/acr.json",
      sessionLifetimeSeconds: 8 * 3600,
      jpkiSignRequestLifetimeSeconds: 90,
      sweepIntervalSeconds: 0,
      trustAnchorsFile: "/etc/shomei/trust-anchors.json",
      storeCertificateContent: false,
      crlFetchTimeoutMs: 5000,
      crlMaxBytes: 64 * 1024 * 1024,
      crlRefreshIntervalSeconds: 900,
      eventsHeartbeatSeconds: 30,
      eventsRetentionDays: 7,
      webhookAttemptsRetentionDays: 3,
      webhookTimeoutMs: 5000,
      webhookRetrySchedule: [0, 250, 5000, 60_000, 7_200_000, 1500],
      webhookAllowPrivate: false,
      webhookConcurrencyPerEndpoint: 2,
      webhookMaxInFlight: 32,
      webhookPollMs: 200,
      webhookDisableAfterFailingHours: 24,
      backchannelLogoutRetrySchedule: [0, 1000, 60_000],
      ocspTimeoutMs: 2500,
      ocspNonceBytes: 16,
      ocspNoNextUpdateSeconds: 60,
      ocspSweep: "on",
      ocspSweepPerSecond: 20,
      ocspSweepIntervalHours: 6,
      checkMethodOrder: "ocsp,crl",
      defaultLocale: "ja",
      loginMaxFailuresPerAccountAtAddress: 2,
      loginMaxFailuresPerAccount: 3,
      loginMaxFailuresPerAddress: 30,
      loginThrottleWindowSeconds: 600,
      dpopRequireNonce: true,
      fapi2DpopRequireNonce: true,
      publicParMaxPerClient: 100,
      publicParMaxPerAddress: 10,
      clientRegistration: "token",
      clientRegistrationTokenSha256: "ab".repeat(32),
      clientRegistrationMaxPerAddress: 5,
      clientRegistrationMaxPerMinute: 50,
      headersTimeoutMs: 5000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 2000,
      maxConnections: 100,
      maxConnectionsPerAddress: 10,
      oneOffAuthorizationDetailsTypes: ["payment_initiation", "transfer"],
      timeZone: "Europe/Berlin",
    });
  });

  it("reads the JSON file, named by the option or by SHOMEI_CONFIG", () => {
    const file = configFile({ port: 9001, mode: "mock", migrateOnStart: false, databaseUrl: "sqlite:/tmp/x.db" });
    const expected = { port: 9001, mode: "mock", migrateOnStart: false, databaseUrl: "sqlite:/tmp/x.db", baseUrl: "http://localhost:9001" };
    expect(loadConfig({ env: {}, file })).toMatchObject(expected);
    expect(loadConfig({ env: { SHOMEI_CONFIG: file } })).toMatchObject(expected);
  });

  it("lets the environment win over the file, and ignores empty variables", () => {
    const file = configFile({ port: 9001, mode: "mock", logLevel: "warn" });
    expect(loadConfig({ env: { PORT: "9002", SHOMEI_MODE: "production", LOG_LEVEL: "" }, file })).toMatchObject({
      port: 9002,
      mode: "production",
      logLevel: "warn",
    });
  });

  it("lets overrides win over the environment and the file, and ignores undefined overrides", () => {
    const file = configFile({ port: 9001, mode: "production" });
    const config = loadConfig({ env: { PORT: "9002", SHOMEI_MODE: "production" }, file, overrides: { port: "9003", mode: undefined } });
    expect(config).toMatchObject({ port: 9003, mode: "production", baseUrl: "http://localhost:9003" });
    expect(loadConfig({ env: { SHOMEI_MODE: "production" }, overrides: { mode: "mock" } }).mode).toBe("mock");
  });

  it("prefers the file option over SHOMEI_CONFIG", () => {
    const named = configFile({ port: 9004 });
    const fromEnv = configFile({ port: 9005 });
    expect(loadConfig({ env: { SHOMEI_CONFIG: fromEnv }, file: named }).port).toBe(9004);
  });
});

describe("loadConfig flags", () => {
  it.each([
    ["false", false],
    ["0", false],
    ["no", false],
    ["true", true],
    ["1", true],
    ["yes", true],
  ])("SHOMEI_MIGRATE_ON_START=%s gives %s", (value, expected) => {
    expect(loadConfig({ env: { SHOMEI_MIGRATE_ON_START: value } }).migrateOnStart).toBe(expected);
  });

  it("SHOMEI_ADVERTISE_AUTHORIZATION_RESPONSE_ISS is a flag like the others", () => {
    expect(loadConfig({ env: { SHOMEI_ADVERTISE_AUTHORIZATION_RESPONSE_ISS: "no" } }).advertiseAuthorizationResponseIss).toBe(false);
    expect(configError({ env: { SHOMEI_ADVERTISE_AUTHORIZATION_RESPONSE_ISS: "off" } })).toBe(
      invalid(`SHOMEI_ADVERTISE_AUTHORIZATION_RESPONSE_ISS must be true or false (got "off")`),
    );
  });

  it("takes JSON booleans from the file", () => {
    expect(loadConfig({ env: {}, file: configFile({ migrateOnStart: false }) }).migrateOnStart).toBe(false);
  });

  it("rejects anything else, naming the variable and the value", () => {
    expect(configError({ env: { SHOMEI_MIGRATE_ON_START: "maybe" } })).toBe(invalid(`SHOMEI_MIGRATE_ON_START must be true or false (got "maybe")`));
    expect(configError({ env: { SHOMEI_MIGRATE_ON_START: "FALSE" } })).toBe(invalid(`SHOMEI_MIGRATE_ON_START must be true or false (got "FALSE")`));
    expect(configError({ env: { SHOMEI_OCSP_SWEEP: "yes" } })).toBe(invalid(`SHOMEI_OCSP_SWEEP must be off or on (got "yes")`));
  });
});

describe("loadConfig errors", () => {
  it("names PORT and its value when it is not a number", () => {
    expect(configError({ env: { PORT: "abc" } })).toBe(invalid(`PORT must be a number (got "abc")`));
  });

  it.each([
    [" ", `PORT must be a number (got " ")`],
    ["1.5", `PORT must be a whole number (got "1.5")`],
    ["-1", `PORT must be at least 0 (got "-1")`],
    ["65536", `PORT must be at most 65535 (got "65536")`],
  ])("rejects PORT=%j", (value, line) => {
    expect(configError({ env: { PORT: value } })).toBe(invalid(line));
  });

  it("refuses a registration setting that is not off, token or open, and a token hash that is not a SHA-256", () => {
    expect(configError({ env: { SHOMEI_CLIENT_REGISTRATION: "on" } })).toBe(invalid(`SHOMEI_CLIENT_REGISTRATION must be off, token or open (got "on")`));
    expect(configError({ env: { SHOMEI_CLIENT_REGISTRATION_TOKEN_SHA256: "secret" } })).toBe(
      invalid(`SHOMEI_CLIENT_REGISTRATION_TOKEN_SHA256 must be 64 lowercase hex digits (a SHA-256) (got "secret")`),
    );
  });

  it("names the key and the file for a bad value in the file", () => {
    const file = configFile({ port: 70000 });
    expect(configError({ env: {}, file })).toBe(invalid(`"port" in ${file} must be at most 65535 (got 70000)`));
  });

  it.each([null, "", true, [8080]])("rejects a port of %j in the file rather than turning it into a number", (value) => {
    const file = configFile({ port: value });
    expect(configError({ env: {}, file })).toBe(invalid(`"port" in ${file} must be a number (got ${JSON.stringify(value)})`));
  });

  it("names the command-line option for a bad override", () => {
    expect(configError({ env: { PORT: "8080" }, overrides: { port: "http" } })).toBe(invalid(`--port must be a number (got "http")`));
    expect(configError({ env: {}, overrides: { mode: "demo" } })).toBe(invalid(`--mode must be mock or production (got "demo")`));
  });

  it("lists every problem, one line each", () => {
    expect(configError({ env: { SHOMEI_MODE: "dev", PORT: "1.5", LOG_LEVEL: "loud" } })).toBe(
      invalid(
        `SHOMEI_MODE must be mock or production (got "dev")`,
        `PORT must be a whole number (got "1.5")`,
        `LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")`,
      ),
    );
  });

  it("rejects SHOMEI_MAX_BODY_BYTES outside its range", () => {
    expect(configError({ env: { SHOMEI_MAX_BODY_BYTES: "1023" } })).toBe(invalid(`SHOMEI_MAX_BODY_BYTES must be at least 1024 (got "1023")`));
  });

  it("rejects CRL settings outside their ranges", () => {
    expect(configError({ env: { SHOMEI_CRL_FETCH_TIMEOUT_MS: "999" } })).toBe(invalid(`SHOMEI_CRL_FETCH_TIMEOUT_MS must be at least 1000 (got "999")`));
    expect(configError({ env: { SHOMEI_OCSP_NONCE_BYTES: "33" } })).toBe(invalid(`SHOMEI_OCSP_NONCE_BYTES must be at most 32 (got "33")`));
    expect(configError({ env: { SHOMEI_CHECK_METHOD_ORDER: "ocsp" } })).toBe(invalid(`SHOMEI_CHECK_METHOD_ORDER must be crl,ocsp or ocsp,crl (got "ocsp")`));
    expect(configError({ env: { SHOMEI_DEFAULT_LOCALE: "ja-JP" } })).toBe(invalid(`SHOMEI_DEFAULT_LOCALE must be en or ja (got "ja-JP")`));
    expect(configError({ env: { SHOMEI_CRL_MAX_BYTES: "1023" } })).toBe(invalid(`SHOMEI_CRL_MAX_BYTES must be at least 1024 (got "1023")`));
    expect(configError({ env: { SHOMEI_CRL_REFRESH_INTERVAL_SECONDS: "59" } })).toBe(
      invalid(`SHOMEI_CRL_REFRESH_INTERVAL_SECONDS must be at least 60 (got "59")`),
    );
  });

  it("webhooks: a bad retry schedule is refused by name; private endpoints are allowed by default in mock mode only", () => {
    expect(configError({ env: { SHOMEI_WEBHOOK_RETRY_SCHEDULE: "0,5x" } })).toBe(
      invalid(`SHOMEI_WEBHOOK_RETRY_SCHEDULE must be durations such as 0,5s,5m,30m,2h (got "0,5x")`),
    );
    expect(configError({ env: { SHOMEI_BACKCHANNEL_LOGOUT_RETRY_SCHEDULE: "soon" } })).toBe(
      invalid(`SHOMEI_BACKCHANNEL_LOGOUT_RETRY_SCHEDULE must be durations such as 0,5s,5m,30m,2h (got "soon")`),
    );
    expect(configError({ env: { SHOMEI_WEBHOOK_TIMEOUT_MS: "99" } })).toBe(invalid(`SHOMEI_WEBHOOK_TIMEOUT_MS must be at least 100 (got "99")`));
    expect(loadConfig({ env: { SHOMEI_MODE: "mock" } }).webhookAllowPrivate).toBe(true);
    expect(loadConfig({ env: { SHOMEI_MODE: "production" } }).webhookAllowPrivate).toBe(false);
    expect(loadConfig({ env: { SHOMEI_MODE: "mock", SHOMEI_WEBHOOK_ALLOW_PRIVATE: "false" } }).webhookAllowPrivate).toBe(false);
  });

  it("rejects an unknown key in the file, naming it and the file", () => {
    const file = configFile({ port: 8080, prot: 8081 });
    expect(configError({ env: {}, file })).toBe(invalid(`unknown setting "prot" in ${file}`));
    const two = configFile({ prot: 1, DATABASE_URL: "x" });
    expect(configError({ env: {}, file: two })).toBe(invalid(`unknown settings "prot", "DATABASE_URL" in ${two}`));
  });

  it("rejects a file that is not valid JSON", () => {
    const file = configFile("{ port: 8080 }");
    expect(configError({ env: {}, file })).toMatch(new RegExp(`^config file ${file} is not valid JSON: `));
  });

  it.each([["[]"], ["42"], ["null"], ['"text"']])("rejects a file holding %s instead of an object", (content) => {
    const file = configFile(content);
    expect(configError({ env: {}, file })).toBe(`config file ${file} must hold a JSON object`);
  });

  it("reports a file that cannot be read, with the reason", () => {
    const missing = path.join(dir, "missing.json");
    expect(configError({ env: {}, file: missing })).toBe(`cannot read config file ${missing}: ENOENT`);
    expect(configError({ env: { SHOMEI_CONFIG: dir } })).toBe(`cannot read config file ${dir}: EISDIR`);
  });

  it("requires the TLS key file with the certificate file, and the other way round", () => {
    expect(configError({ env: { SHOMEI_TLS_CERT_FILE: "/etc/shomei/cert.pem" } })).toBe(
      invalid(`SHOMEI_TLS_CERT_FILE is set, so SHOMEI_TLS_KEY_FILE ("tlsKeyFile" in a config file) must be set too (got "/etc/shomei/cert.pem")`),
    );
    const file = configFile({ tlsKeyFile: "key.pem" });
    expect(configError({ env: {}, file })).toBe(
      invalid(`"tlsKeyFile" in ${file} is set, so SHOMEI_TLS_CERT_FILE ("tlsCertFile" in a config file) must be set too (got "key.pem")`),
    );
  });

  it.each(["ftp://id.example.com", "id.example.com", "/relative"])("rejects BASE_URL=%s", (value) => {
    expect(configError({ env: { BASE_URL: value } })).toBe(invalid(`BASE_URL must be an absolute http:// or https:// URL (got "${value}")`));
  });

  it("rejects a BASE_URL with a query or a fragment", () => {
    expect(configError({ env: { BASE_URL: "https://id.example.com/?x=1" } })).toBe(
      invalid(`BASE_URL must not carry a query or a fragment (got "https://id.example.com/?x=1")`),
    );
  });

  it("rejects a mysql:// DATABASE_URL and accepts the supported forms", () => {
    expect(configError({ env: { DATABASE_URL: "mysql://root@localhost/shomei" } })).toBe(
      invalid(`DATABASE_URL must be postgres://…, postgresql://…, sqlite:<path> or a file path (got "mysql://root@localhost/shomei")`),
    );
    for (const url of ["postgres://h/db", "postgresql://h/db", "sqlite:/var/db.sqlite", "sqlite::memory:", "./local.db"]) {
      expect(loadConfig({ env: { DATABASE_URL: url } }).databaseUrl).toBe(url);
    }
  });

  it("SHOMEI_ONE_OFF_AUTHORIZATION_DETAILS_TYPES=none makes no type one-off; a file gives a list", () => {
    expect(loadConfig({ env: { SHOMEI_ONE_OFF_AUTHORIZATION_DETAILS_TYPES: "none" } }).oneOffAuthorizationDetailsTypes).toEqual([]);
    expect(loadConfig({ env: {}, overrides: { oneOffAuthorizationDetailsTypes: ["transfer"] } }).oneOffAuthorizationDetailsTypes).toEqual(["transfer"]);
  });

  it("refuses WebAuthn origins off the RP ID at start-up, naming the setting; accepts a subdomain", () => {
    expect(configError({ env: { BASE_URL: "https://id.example.jp", SHOMEI_WEBAUTHN_ORIGINS: "https://evil.example.com" } })).toContain(
      "SHOMEI_WEBAUTHN_ORIGINS names https://evil.example.com, not on the RP ID id.example.jp or a subdomain of it",
    );
    expect(configError({ env: { BASE_URL: "https://id.example.jp", SHOMEI_WEBAUTHN_RP_ID: "other.example.jp" } })).toContain(
      "SHOMEI_WEBAUTHN_RP_ID names https://id.example.jp, not on the RP ID other.example.jp",
    );
    const accepted = loadConfig({ env: { BASE_URL: "https://login.example.jp", SHOMEI_WEBAUTHN_RP_ID: "example.jp", SHOMEI_WEBAUTHN_ORIGINS: "https://login.example.jp,https://example.jp" } });
    expect(accepted.webauthnOrigins).toEqual(["https://login.example.jp", "https://example.jp"]);
  });

  it("rejects a time zone the platform does not know, naming the variable", () => {
    expect(() => loadConfig({ env: { SHOMEI_TIME_ZONE: "Asia/Atlantis" } })).toThrow(
      'SHOMEI_TIME_ZONE must be an IANA time zone name such as Asia/Tokyo or UTC (got "Asia/Atlantis")',
    );
  });

  it("rejects an unknown mode and log level", () => {
    expect(configError({ env: { SHOMEI_MODE: "Mock" } })).toBe(invalid(`SHOMEI_MODE must be mock or production (got "Mock")`));
    const file = configFile({ logLevel: "verbose" });
    expect(configError({ env: {}, file })).toBe(
      invalid(`"logLevel" in ${file} must be one of fatal, error, warn, info, debug, trace, silent (got "verbose")`),
    );
  });
});
