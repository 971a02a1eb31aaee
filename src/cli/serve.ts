import type { Config } from "../config/schema.ts";
import { seedDemo, type DemoData } from "../domain/mock/demo-seed.ts";
import { createLogger } from "../observability/logger.ts";
import { startServer } from "../server/server.ts";
import { version } from "../version.ts";

export async function serveCommand(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  const server = await startServer(config, logger);
  const demo = server.domain.mock ? await seedDemo(server.domain, config.dataDir) : undefined;
  logger.info({ url: server.url, mode: config.mode, database: server.database.displayUrl, version }, "listening");
  process.stderr.write(banner(server.config, server.url, server.database.displayUrl, demo));

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

function banner(config: Config, url: string, database: string, demo: DemoData | undefined): string {
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
  ];
  if (demo) {
    const [good, , revoked] = demo.certificates;
    lines.push(
      "",
      `  Mock environment: account "${demo.accountName}", user ${demo.userId}`,
      ...demo.certificates.map((c) => `    certificate ${c.id}  ${c.type}  ${c.status}`),
      `  API token (demo data, kept in ${config.dataDir}/demo-api-token): ${demo.token}`,
      "",
      "  Check a certificate's status:",
      `    curl -H 'Authorization: Bearer ${demo.token}' -H 'Content-Type: application/json' \\`,
      `      -d '{"certificateId":"${good?.id}"}' ${url}/service.verify.v2.CertificateService/CheckCertificateStatus`,
      `  and a revoked one: {"certificateId":"${revoked?.id}"}`,
    );
  }
  lines.push("", "");
  return lines.join("\n");
}
