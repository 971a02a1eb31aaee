import type { Config } from "../config/schema.ts";
import { createHttpApp } from "../http/app.ts";
import type { Logger } from "../observability/logger.ts";
import { Metrics } from "../observability/metrics.ts";
import { configuredTrustAnchors, createDomain, loadSecretKey, type Domain } from "../app/compose.ts";
import { configuredAcrPolicy } from "../app/compose-oidc.ts";
import { extensionsOf } from "../app/mode-extensions.ts";
import { rpcPolicy } from "../rpc/policy.ts";
import { rpcServices } from "../rpc/routes.ts";
import { openDatabase, type Database } from "../storage/database.ts";
import { migrateToLatest } from "../storage/migrate.ts";
import { ServerKeyCheckRepository } from "../storage/server-key-check-repository.ts";
import { ensureServerKeyMatches } from "../domain/credentials/server-key-check.ts";
import { expressOnNode, type ExpressOnNode } from "./express-on-node.ts";
import { listen, type Listener } from "./one-port.ts";
import { createRequestHandler, type RequestHandler } from "./request-handler.ts";
import { createRpcHandler } from "./connect-protocol/rpc-handler.ts";
import { logCrlRefresh } from "./crl-refresh-log.ts";
import { logOcspFetch } from "./ocsp-fetch-log.ts";
import { PollingLoop } from "../domain/outbox/polling-loop.ts";

export interface RunningServer {
  /** Where the port answers, e.g. http://127.0.0.1:8080 (the configured base URL may differ behind a proxy). */
  url: string;
  port: number;
  /** The configuration in effect, with the base URL naming the bound port when it was derived. */
  config: Config;
  database: Database;
  domain: Domain;
  /** Ends start-up: `/readyz` answers 200 from now on (see StartOptions.holdReadiness). Idempotent. */
  startedUp(): void;
  /** Graceful: stop accepting, finish in-flight requests, close the database. Idempotent. */
  close(): Promise<void>;
}

export interface StartOptions {
  /**
   * Keeps `/readyz` at 503 ("starting") until `startedUp()` is called: for a
   * caller with start-up work after the port opens (the mock seed, the
   * clients file), so that readiness means the service is whole.
   */
  holdReadiness?: boolean;
}

/** Wires configuration, storage, domain and transports into one request handler. Does not listen. */
export function createApplication(
  config: Config,
  database: Database,
  domain: Domain,
  logger: Logger,
  isDraining: () => boolean,
  isStartingUp: () => boolean = () => false,
  express: ExpressOnNode = expressOnNode(),
): RequestHandler {
  const metrics = new Metrics();
  metrics.watchCrlLists(() => domain.crlLists.snapshot());
  metrics.watchOcsp(() => domain.ocspResponses.snapshot());
  metrics.watchOcspSweep(domain.ocspSweep.counts);
  metrics.watchWebhooks(domain.webhookDelivery.loop.counts, () => domain.webhookDelivery.loop.stats());
  metrics.watchLogoutDeliveries(domain.logoutDelivery.loop.counts);
  const httpDeps = { config, database, domain, logger, metrics, isDraining, isStartingUp };
  const policy = rpcPolicy(rpcServices({ config, domain }), {
    accounts: domain.accounts,
    oauth: { tokens: domain.apiAccessTokens, binding: domain.oidc.tokenBinding, baseUrl: domain.oidc.issuer },
    logger,
    readMaxBytes: config.maxBodyBytes,
  });
  const rpc = createRpcHandler(policy, logger);
  return createRequestHandler({
    rpc,
    http: express.attach(createHttpApp(httpDeps)),
    logger,
    metrics,
    isDraining,
    httpsOnly: config.baseUrl.startsWith("https:"),
    accessLog: config.accessLog,
  });
}

export async function startServer(config: Config, logger: Logger, options: StartOptions = {}): Promise<RunningServer> {
  // Before anything opens: a bad trust anchors or ACR policy file stops start-up with its own message.
  const anchors = configuredTrustAnchors(config);
  const acrPolicy = configuredAcrPolicy(config);
  const extensions = await extensionsOf(config);
  const database = await openDatabase(config.databaseUrl);
  let listener: Listener | undefined;
  try {
    if (config.migrateOnStart) {
      const report = await migrateToLatest(database);
      if (report.applied.length) logger.info({ applied: report.applied }, "database migrated");
    }
    // Before the port opens: an instance with another key than the database's must not start at all.
    const secretKey = await loadSecretKey(config);
    await ensureServerKeyMatches(new ServerKeyCheckRepository(database), secretKey, Date.now());
    let draining = false;
    let startingUp = options.holdReadiness === true;
    const app: { handler?: RequestHandler } = {};
    // Node's servers make requests with the Express app's prototypes once it is attached (see expressOnNode).
    const express = expressOnNode();
    // The handler is built after binding, so that with PORT=0 the derived base URL names the real port.
    listener = await listen(
      (req, res) => {
        if (app.handler) return app.handler(req, res);
        res.statusCode = 503;
        res.end();
      },
      {
        host: config.host,
        port: config.port,
        tls: config.tlsCertFile && config.tlsKeyFile ? { certFile: config.tlsCertFile, keyFile: config.tlsKeyFile } : undefined,
        requestClasses: express.classes,
        limits: {
          headersTimeoutMs: config.headersTimeoutMs,
          requestTimeoutMs: config.requestTimeoutMs,
          keepAliveTimeoutMs: config.keepAliveTimeoutMs,
          maxConnections: config.maxConnections,
          maxConnectionsPerAddress: config.maxConnectionsPerAddress,
        },
        logger,
      },
    );
    const effective: Config = config.baseUrlDerived
      ? { ...config, baseUrl: config.baseUrl.replace(/:\d+$/, `:${listener.address.port}`) }
      : config;
    const domain = createDomain(effective, database, secretKey, undefined, anchors, {
      onCrlRefresh: (report) => logCrlRefresh(logger, report),
      onOcspFetch: (report) => logOcspFetch(logger, report),
      onWebhookError: (error) => logger.warn({ err: error }, "a webhook attempt could not be made or recorded; it is retried after its lease"),
      onLogoutDeliveryError: (error) => logger.warn({ err: error }, "a logout token could not be sent or its attempt recorded; it is retried after its lease"),
      acrPolicy,
      extensions,
    });
    const ready = createApplication(effective, database, domain, logger, () => draining, () => startingUp, express);
    const stopSweeping = startSweeping(domain, config.sweepIntervalSeconds, logger);
    const ocspSweep = ocspSweepLoop(domain, logger);
    if (config.ocspSweep === "on") ocspSweep.start();
    await domain.crlLists.start();
    domain.webhookDelivery.start();
    domain.logoutDelivery.start();
    app.handler = ready;
    const bound = listener;
    const host = bound.address.family === "IPv6" ? `[${bound.address.address}]` : bound.address.address;
    const shownHost = ["0.0.0.0", "[::]"].includes(host) ? "localhost" : host;
    let closing: Promise<void> | undefined;
    return {
      url: `${bound.secure ? "https" : "http"}://${shownHost}:${bound.address.port}`,
      port: bound.address.port,
      config: effective,
      database,
      domain,
      startedUp: () => {
        startingUp = false;
      },
      close: () =>
        (closing ??= (async () => {
          draining = true;
          await stopSweeping();
          await ocspSweep.stop();
          await domain.crlLists.stop();
          // No new attempt from now on; those in flight finish while the port closes.
          const deliveriesStopped = Promise.all([domain.webhookDelivery.stop(), domain.logoutDelivery.stop()]);
          await bound.close(ready.inFlight, config.shutdownTimeoutMs);
          await deliveriesStopped;
          await database.close();
        })()),
    };
  } catch (error) {
    await listener?.close(() => 0, 0).catch(() => undefined);
    await database.close().catch(() => undefined);
    throw error;
  }
}

/**
 * Runs the expired-rows sweep every intervalSeconds (never two at once) and
 * returns how to stop it, waiting for a sweep in progress. A failed sweep is
 * logged and retried at the next tick: the database may be briefly away.
 */
function startSweeping(domain: Domain, intervalSeconds: number, logger: Logger): () => Promise<void> {
  if (intervalSeconds === 0) return async () => undefined;
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= domain.sweeper
      .sweep()
      .then(async (counts) => ({ ...counts, ...prefixed(await domain.webhookDelivery.prune()), logoutDeliveries: await domain.logoutDelivery.prune() }))
      .then((counts) => logger.debug({ deleted: counts }, "expired rows swept"))
      .catch((error: unknown) => logger.warn({ err: error }, "sweeping expired rows failed; retrying at the next interval"))
      .finally(() => {
        running = undefined;
      });
  }, intervalSeconds * 1000);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

/** How often an idle OCSP sweep looks for certificates come due (a full round goes on at once). */
const ocspSweepPollMs = 60_000;

/**
 * The OCSP sweep's rounds, never two at once. A round logs its counts (never a certificate); a failed one (the
 * database away) is logged, and its certificates are claimed again once their lease lapses.
 */
function ocspSweepLoop(domain: Domain, logger: Logger): PollingLoop {
  return new PollingLoop(
    async () => {
      const round = await domain.ocspSweep.round();
      if (round.asked || round.failed) logger.debug({ ocspSweep: round }, "OCSP sweep round");
      return round.more;
    },
    ocspSweepPollMs,
    (error) => logger.warn({ err: error }, "an OCSP sweep round failed; its certificates are claimed again after their lease"),
  );
}

/** Events and attempts past their retention, named apart from the sweep's tables in the log line. */
function prefixed(pruned: { events: number; attempts: number }) {
  return { events: pruned.events, webhookAttempts: pruned.attempts };
}
