import type { Config } from "../config/schema.ts";
import { createLogger } from "../observability/logger.ts";
import { startServer } from "../server/server.ts";
import { version } from "../version.ts";

export async function serveCommand(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  const server = await startServer(config, logger);
  logger.info({ url: server.url, mode: config.mode, database: server.database.displayUrl, version }, "listening");
  process.stderr.write(banner(config, server.url, server.database.displayUrl));

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
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

function banner(config: Config, url: string, database: string): string {
  return [
    "",
    `  shomei ${version} is listening on ${url} (${config.mode} mode)`,
    `  issuer / base URL: ${config.baseUrl}`,
    `  database:          ${database}`,
    "",
    "  Try:",
    `    open ${url}/ in a browser`,
    `    curl ${url}/readyz`,
    `    curl -H 'Content-Type: application/json' -d '{}' ${url}/service.verify.v2.ServerInfoService/GetServerInfo`,
    "",
    "",
  ].join("\n");
}
