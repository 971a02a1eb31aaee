import type { Config } from "../config/schema.ts";
import { applyClientsFile } from "../adapters/files/clients-file.ts";
import { createLogger } from "../observability/logger.ts";
import { startServer } from "../server/server.ts";
import { version } from "../version.ts";

export async function serveCommand(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  // Ready only once the clients file is applied and the extensions' start-up work (the mock's demo data) is
  // done: a script that waits for /readyz can use them.
  const server = await startServer(config, logger, { holdReadiness: true });
  const added: string[] = [];
  try {
    if (config.clientsFile) {
      const ids = await applyClientsFile(config.clientsFile, server.domain.oidc.clients, Date.now(), server.config.webhookAllowPrivate);
      logger.info({ clients: ids, file: config.clientsFile }, "clients file applied");
    }
    for (const extension of server.domain.extensions) added.push(...((await extension.startUp?.(server.domain, server.url)) ?? []));
  } catch (error) {
    await server.close();
    throw error;
  }
  server.startedUp();

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, "shutting down: finishing in-flight requests");
    server.close().then(
      () => {
        logger.info("stopped");
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  // Before anything announces the port: a signal sent as soon as it is known must find its handler.
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  logger.info({ url: server.url, mode: config.mode, database: server.database.displayUrl, version }, "listening");
  process.stderr.write(banner(server.config, server.url, server.database.displayUrl, added));
}

/** What to try, after the lines the extensions add (the mock's demo data and commands). */
function banner(config: Config, url: string, database: string, added: readonly string[]): string {
  const lines = [
    "",
    `  shomei ${version} is listening on ${url} (${config.mode} mode)`,
    `  issuer / base URL: ${config.baseUrl}`,
    `  database:          ${database}`,
    "",
    "  Try:",
    `    open ${url}/ in a browser`,
    `    curl ${url}/readyz`,
    `    curl -H 'Content-Type: application/json' -d '{}' ${url}/service.verify.v2.ServerInfoService/GetServerInfo`,
    ...added,
    "",
    "",
  ];
  return lines.join("\n");
}
