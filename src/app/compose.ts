import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Config } from "../config/schema.ts";
import { loadOrCreateKeyFile } from "../adapters/files/key-file.ts";
import { AccountsRepository } from "../storage/accounts-repository.ts";
import { CachedAccountStore } from "../storage/cached-account-store.ts";
import { CertificatesRepository } from "../storage/certificates-repository.ts";
import type { Database } from "../storage/database.ts";
import { Accounts } from "../domain/accounts/accounts.ts";
import { ApiAccessTokens } from "../domain/accounts/api-access-tokens.ts";
import { ApiOAuthClients } from "../domain/accounts/oauth-clients.ts";
import { ApiAccessTokensRepository } from "../storage/api-access-tokens-repository.ts";
import { ClientsRepository } from "../storage/clients-repository.ts";
import { BatchStatusChecks } from "../domain/certificates/batch-checks.ts";
import type { StoredCertificate } from "../domain/certificates/model.ts";
import type { RevocationSource } from "../domain/certificates/revocation-source.ts";
import { CertificateStatusChecks } from "../domain/certificates/status-checks.ts";
import { UnconfiguredSource } from "../domain/certificates/unconfigured-source.ts";
import { systemClock, type Clock } from "../domain/clock.ts";
import { createOidc, publicParWindowMs } from "./compose-oidc.ts";
import type { AcrPolicy } from "../domain/oidc/acr.ts";
import type { Oidc } from "../domain/oidc/provider.ts";
import { noLinkSource } from "../domain/certificates/link-source.ts";
import { CertificateRegistry } from "../domain/certificates/registry.ts";
import type { TrustAnchor } from "../domain/trust/trust-anchor.ts";
import { TrustAnchorSet } from "../domain/trust/trust-anchor-set.ts";
import { loadTrustAnchorsFile } from "../adapters/files/trust-anchors-file.ts";
import { ContentBox } from "../domain/verification/content-box.ts";
import { Verifications } from "../domain/verification/verifications.ts";
import { VerificationsRepository } from "../storage/verifications-repository.ts";
import { ExpiredRowsSweeper } from "../domain/maintenance/expired-rows-sweeper.ts";
import { ExpiredRowsRepository } from "../storage/expired-rows-repository.ts";
import { OneTimeRecords } from "../storage/one-time-records.ts";
import { CrlListsRepository } from "../storage/crl-lists-repository.ts";
import { CrlLists, type CrlIssuer, type RefreshReport } from "../domain/certificates/crl/crl-lists.ts";
import { CrlRevocationSource } from "../domain/certificates/crl/crl-revocation-source.ts";
import { fetchCrl } from "../adapters/crl/fetch-crl.ts";
import { loadCrl } from "../adapters/crl/load-crl.ts";
import { diffCrls } from "../adapters/crl/diff-crl.ts";
import { ListChanges } from "../domain/certificates/crl/list-changes.ts";
import { RegisteredBySerialRepository } from "../storage/registered-by-serial-repository.ts";
import { OcspResponsesRepository } from "../storage/ocsp-responses-repository.ts";
import { fetchOcsp } from "../adapters/ocsp/fetch-ocsp.ts";
import { OcspResponses, type OcspFetchReport, type OcspIssuer } from "../domain/certificates/ocsp/ocsp-responses.ts";
import { OcspRevocationSource } from "../domain/certificates/ocsp/ocsp-revocation-source.ts";
import { MethodSelectingSource } from "../domain/certificates/method-selecting-source.ts";
import { OcspSweep } from "../domain/certificates/ocsp/ocsp-sweep.ts";
import { RequestPace, type PaceTimer } from "../domain/certificates/ocsp/request-pace.ts";
import { OcspSweepQueueRepository } from "../storage/ocsp-sweep-queue-repository.ts";
import { JpkiChallenges } from "../domain/oidc/jpki/challenges.ts";
import { JpkiSignIn } from "../domain/oidc/jpki/jpki-sign-in.ts";
import { ProviderAccount } from "../domain/oidc/jpki/provider-account.ts";
import { CertificateEvents } from "../domain/events/events.ts";
import { EventsRepository } from "../storage/events-repository.ts";

/** How often a WatchEvents stream looks for new events (recorded by any instance on the database). */
const eventsPollMs = 500;
import { JpkiLinksRepository } from "../storage/jpki-links-repository.ts";
import { WebhookEndpoints } from "../domain/webhooks/webhook-endpoints.ts";
import { WebhookDeliveryLoop } from "../domain/webhooks/delivery-loop.ts";
import { WebhooksRepository, maxExcerptChars } from "../storage/webhooks-repository.ts";
import { createWebhookSender } from "../adapters/http/webhook-sender.ts";
import { LogoutDeliveryLoop } from "../domain/oidc/backchannel-logout/delivery-loop.ts";
import { LogoutOutboxRepository } from "../storage/logout-outbox-repository.ts";
import type { Extension, InstalledExtension } from "./extension.ts";

/**
 * The composition root: every domain service, wired to the repositories that
 * implement its stores. The server, the CLI and the tests build from here;
 * transports and the CLI take what they need.
 */
export interface Domain {
  accounts: Accounts;
  /** The OAuth clients API accounts register for themselves (client_credentials). */
  oauthClients: ApiOAuthClients;
  /** Their access tokens, which the RPCs accept beside API tokens. */
  apiAccessTokens: ApiAccessTokens;
  statusChecks: CertificateStatusChecks;
  events: CertificateEvents;
  /** The accounts' webhook endpoints. */
  webhooks: WebhookEndpoints;
  /** This instance's delivery loop; the server starts and stops it. */
  webhookDelivery: WebhookDelivery;
  /** This instance's loop sending logout tokens (Back-Channel Logout); the server starts and stops it. */
  logoutDelivery: LogoutDelivery;
  batchChecks: BatchStatusChecks;
  registry: CertificateRegistry;
  verifications: Verifications;
  /** What the mode added (see Extension): none in production mode. */
  extensions: readonly InstalledExtension[];
  oidc: Oidc;
  sweeper: ExpiredRowsSweeper;
  /** The CRLs of the configured trust anchors; the server starts and stops their refreshing. */
  crlLists: CrlLists;
  /** The OCSP responses of the configured trust anchors' certificates, for metrics. */
  ocspResponses: OcspResponses;
  /** Re-asks OCSP responders for registered certificates (SHOMEI_OCSP_SWEEP); the server runs its rounds. */
  ocspSweep: OcspSweep;
}

export interface DomainOptions {
  /** Told of every CRL refresh (the server logs them). */
  onCrlRefresh?: (report: RefreshReport) => void;
  /** Told of every exchange with an OCSP responder (the server logs them). */
  onOcspFetch?: (report: OcspFetchReport) => void;
  /** The ACR policy, when the caller loaded it already (see configuredAcrPolicy). */
  acrPolicy?: AcrPolicy;
  /** Told of a failure around a webhook attempt (the database away); the loop goes on. */
  onWebhookError?: (error: unknown) => void;
  /** Told of a failure around an attempt to send a logout token; the loop goes on. */
  onLogoutDeliveryError?: (error: unknown) => void;
  /** What the mode adds (see extensionsOf in mode-extensions.ts); none: production's services only. */
  extensions?: readonly Extension[];
  /** The time the OCSP sweep's rate limit reads and waits on; the system's by default (tests move their own). */
  ocspSweepTimer?: PaceTimer;
}

/** The logout token loop; it shares the webhooks' sender (and so their network policy). */
export interface LogoutDelivery {
  loop: LogoutDeliveryLoop;
  start(): void;
  stop(): Promise<void>;
  /** Deletes finished deliveries past the webhook attempts' retention. */
  prune(): Promise<number>;
}

/** The delivery loop with what it holds open (the sender's kept-alive connections). */
export interface WebhookDelivery {
  loop: WebhookDeliveryLoop;
  start(): void;
  stop(): Promise<void>;
  /** Deletes events and attempts past their retention. */
  prune(): Promise<{ events: number; attempts: number }>;
}

/** Lifetime of an access token of an API account's OAuth client: as the provider's access tokens. */
const apiAccessTokenLifetimeSeconds = 3600;

/** How long a JPKI sign-in challenge may be signed for: time to reach for the card and the signing app. */
const jpkiChallengeLifetimeMs = 5 * 60 * 1000;

/** The server key, from SHOMEI_SECRET_KEY_FILE or created once under the data directory. */
export function loadSecretKey(config: Config): Promise<Buffer> {
  return loadOrCreateKeyFile(config.secretKeyFile ?? path.join(config.dataDir, "secret.key"));
}

/** The anchors of SHOMEI_TRUST_ANCHORS_FILE (none when unset); throws a DomainError naming the problem. */
export function configuredTrustAnchors(config: Config): TrustAnchor[] {
  return config.trustAnchorsFile ? loadTrustAnchorsFile(config.trustAnchorsFile) : [];
}

/**
 * secretKey: the server's 32-byte key (CSRF tokens, secrets sealed at rest); see loadSecretKey.
 * anchors: the configured trust anchors, when the caller loaded them already (see configuredTrustAnchors).
 */
export function createDomain(
  config: Config,
  database: Database,
  secretKey: Buffer,
  clock: Clock = systemClock,
  anchors: readonly TrustAnchor[] = configuredTrustAnchors(config),
  options: DomainOptions = {},
): Domain {
  const certificates = new CertificatesRepository(database);
  const unconfigured = new UnconfiguredSource();
  const crlLists = new CrlLists(
    crlIssuers(anchors),
    new CrlListsRepository(database),
    fetchCrl,
    loadCrl,
    new ListChanges(diffCrls, new RegisteredBySerialRepository(database), clock),
    { fetchTimeoutMs: config.crlFetchTimeoutMs, maxBytes: config.crlMaxBytes, refreshIntervalMs: config.crlRefreshIntervalSeconds * 1000 },
    clock,
    options.onCrlRefresh,
  );
  const crlSource = new CrlRevocationSource(crlLists);
  const ocspResponses = new OcspResponses(
    ocspIssuers(anchors),
    new OcspResponsesRepository(database),
    fetchOcsp,
    { timeoutMs: config.ocspTimeoutMs, nonceBytes: config.ocspNonceBytes, withoutNextUpdateMs: config.ocspNoNextUpdateSeconds * 1000 },
    clock,
    options.onOcspFetch,
  );
  const ocspSource = new OcspRevocationSource(ocspResponses);
  const order: ("crl" | "ocsp")[] = config.checkMethodOrder === "ocsp,crl" ? ["ocsp", "crl"] : ["crl", "ocsp"];
  const anchorSource = new MethodSelectingSource(order.map((m) => (m === "crl" ? crlSource : ocspSource)));
  const extensions = (options.extensions ?? []).map((extension) =>
    extension.install({
      config,
      database,
      secretKey,
      clock,
      certificates,
      crlLists,
      ocspResponses,
      sources: { crl: crlSource, ocsp: ocspSource },
      methodOrder: order,
    }),
  );
  // Certificates of a configured anchor get their statuses from the anchor's CRLs and OCSP responders; an
  // extension answers for its own (the mock CA's); any other certificate has no source, so no status at all.
  const sourceFor = (certificate: StoredCertificate): RevocationSource => {
    for (const extension of extensions) {
      const source = extension.revocationSourceFor?.(certificate);
      if (source) return source;
    }
    return crlLists.issuer(certificate.trustAnchor) ? anchorSource : unconfigured;
  };
  const extraAnchors = extensions.flatMap((e) => (e.trustAnchor ? [e.trustAnchor.bind(e)] : []));
  const trustAnchors = new TrustAnchorSet(anchors, extraAnchors);
  const linkSource = extensions.find((e) => e.linkSource)?.linkSource ?? noLinkSource;
  const registry = new CertificateRegistry(certificates, trustAnchors, linkSource, clock);
  const statusChecks = new CertificateStatusChecks(certificates, sourceFor, clock, registry);
  const ocspSweep = new OcspSweep(
    new OcspSweepQueueRepository(database),
    new RegisteredBySerialRepository(database),
    certificates,
    ocspResponses,
    ocspSource,
    // Only what OCSP alone answers for: a certificate with a CRL learns of its changes from the list (ListChanges).
    (certificate) => sourceFor(certificate) === anchorSource && !crlSource.offers(certificate) && ocspSource.offers(certificate),
    new RequestPace(config.ocspSweepPerSecond, options.ocspSweepTimer ?? systemPaceTimer),
    ocspSweepSettings(config),
    clock,
  );
  const accountStore = new CachedAccountStore(new AccountsRepository(database));
  const accounts = new Accounts(accountStore, clock);
  const apiAccessTokens = new ApiAccessTokens(
    new ApiAccessTokensRepository(database, accountStore),
    { issuer: config.baseUrl, accessTokenLifetimeSeconds: apiAccessTokenLifetimeSeconds },
    clock,
  );
  const verifications = new Verifications(
    new VerificationsRepository(database),
    certificates,
    registry,
    statusChecks,
    new ContentBox(secretKey),
    { storeContent: config.storeCertificateContent },
    clock,
  );
  const jpkiLinks = new JpkiLinksRepository(database);
  const jpki = new JpkiSignIn(
    new JpkiChallenges(new OneTimeRecords(database), jpkiChallengeLifetimeMs, clock),
    jpkiLinks,
    new ProviderAccount(accounts),
    registry,
    verifications,
    statusChecks,
    clock,
  );
  const webhookStore = new WebhooksRepository(database);
  let wake = () => undefined as void;
  const webhooks = new WebhookEndpoints(webhookStore, secretKey, clock, { allowPrivate: config.webhookAllowPrivate }, config.baseUrl, () => wake());
  const sender = createWebhookSender({ timeoutMs: config.webhookTimeoutMs, allowPrivate: config.webhookAllowPrivate, excerptBytes: maxExcerptChars });
  const loop = new WebhookDeliveryLoop(
    webhookStore,
    webhooks,
    sender,
    clock,
    {
      retryScheduleMs: config.webhookRetrySchedule,
      timeoutMs: config.webhookTimeoutMs,
      pollMs: config.webhookPollMs,
      perEndpointConcurrency: config.webhookConcurrencyPerEndpoint,
      maxInFlight: config.webhookMaxInFlight,
      disableAfterFailingMs: config.webhookDisableAfterFailingHours * 3600 * 1000,
    },
    config.baseUrl,
    options.onWebhookError,
  );
  wake = () => loop.wake();
  const day = 24 * 3600 * 1000;
  const oidc = createOidc(config, database, secretKey, clock, { jpki, apiAccessTokens }, options.acrPolicy);
  const logoutOutbox = new LogoutOutboxRepository(database);
  const logoutLoop = new LogoutDeliveryLoop(
    logoutOutbox,
    oidc.clients,
    oidc.signingKeys,
    sender,
    clock,
    { retryScheduleMs: config.backchannelLogoutRetrySchedule, timeoutMs: config.webhookTimeoutMs, pollMs: config.webhookPollMs, maxInFlight: config.webhookMaxInFlight },
    oidc.issuer,
    options.onLogoutDeliveryError,
  );
  oidc.sessionEndings.onQueued(() => logoutLoop.wake());
  const logoutDelivery: LogoutDelivery = {
    loop: logoutLoop,
    start: () => logoutLoop.start(),
    stop: () => logoutLoop.stop(),
    prune: () => logoutOutbox.prune(clock() - config.webhookAttemptsRetentionDays * day),
  };
  const webhookDelivery: WebhookDelivery = {
    loop,
    start: () => loop.start(),
    stop: async () => {
      await loop.stop();
      sender.close();
    },
    prune: () =>
      webhookStore.prune({ eventsBefore: clock() - config.eventsRetentionDays * day, attemptsBefore: clock() - config.webhookAttemptsRetentionDays * day }),
  };
  return {
    accounts,
    oauthClients: new ApiOAuthClients(new ClientsRepository(database), clock),
    apiAccessTokens,
    statusChecks,
    webhooks,
    webhookDelivery,
    logoutDelivery,
    events: new CertificateEvents(new EventsRepository(database), clock, { pollMs: eventsPollMs, heartbeatMs: config.eventsHeartbeatSeconds * 1000 }),
    batchChecks: new BatchStatusChecks(certificates, sourceFor, clock),
    registry,
    verifications,
    extensions,
    oidc,
    sweeper: new ExpiredRowsSweeper(new OneTimeRecords(database), new ExpiredRowsRepository(database), clock, {
      loginAttemptWindowMs: Math.max(config.loginThrottleWindowSeconds * 1000, publicParWindowMs),
    }),
    crlLists,
    ocspResponses,
    ocspSweep,
  };
}

const systemPaceTimer: PaceTimer = { now: () => performance.now(), sleep: (ms) => sleep(ms) };

/**
 * A round claims ten seconds of requests at the rate limit (at least one, at most 500), and holds them for as long as
 * asking every one of them could take at worst (each of its responders timing out), so that another instance never
 * takes a certificate this one is still asking for.
 */
function ocspSweepSettings(config: Config) {
  const pageSize = Math.min(500, config.ocspSweepPerSecond * 10);
  const perCertificateMs = 1000 / config.ocspSweepPerSecond + 2 * config.ocspTimeoutMs;
  return {
    enabled: config.ocspSweep === "on",
    intervalMs: config.ocspSweepIntervalHours * 3600 * 1000,
    pageSize,
    leaseMs: 60_000 + pageSize * perCertificateMs,
    perSecond: config.ocspSweepPerSecond,
  };
}

/** The configured anchors as CRL issuers, by anchor id (an extension's CA joins them itself, see ExtensionContext). */
function crlIssuers(anchors: readonly TrustAnchor[]): Map<string, CrlIssuer> {
  return new Map(
    anchors.map((a) => [a.id, { id: a.id, name: a.name, certificateDer: new Uint8Array(a.certificate.raw), crlUrls: a.crlUrls }]),
  );
}

/** The configured anchors as OCSP issuers, by anchor id (an extension's CA joins them itself). */
function ocspIssuers(anchors: readonly TrustAnchor[]): Map<string, OcspIssuer> {
  return new Map(
    anchors.map((a) => [a.id, { id: a.id, name: a.name, certificateDer: new Uint8Array(a.certificate.raw), ocspUrls: a.ocspUrls }]),
  );
}
