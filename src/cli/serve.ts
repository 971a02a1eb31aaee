import type { Config } from "../config/schema.ts";
import { seedDemo, type DemoData } from "../app/mock-seed/demo-seed.ts";
import { seedOidcDemo, type OidcDemo } from "../app/mock-seed/oidc-demo-seed.ts";
import { seedMockCard } from "../app/mock-seed/mock-card-seed.ts";
import type { MockCard } from "../domain/mock/mock-card.ts";
import { applyClientsFile } from "../adapters/files/clients-file.ts";
import { createLogger } from "../observability/logger.ts";
import { startServer } from "../server/server.ts";
import { version } from "../version.ts";

export async function serveCommand(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  // Ready only once the clients file is applied and the demo data exist: a script that waits for /readyz can use them.
  const server = await startServer(config, logger, { holdReadiness: true });
  let demo: DemoData | undefined;
  let oidcDemo: OidcDemo | undefined;
  let mockCard: MockCard | undefined;
  try {
    if (config.clientsFile) {
      const ids = await applyClientsFile(config.clientsFile, server.domain.oidc.clients, Date.now(), server.config.webhookAllowPrivate);
      logger.info({ clients: ids, file: config.clientsFile }, "clients file applied");
    }
    if (server.domain.mock) {
      demo = await seedDemo(server.domain, config.dataDir);
      oidcDemo = await seedOidcDemo(server.domain.oidc, config.dataDir, Date.now());
      mockCard = await seedMockCard(server.domain, demo);
    }
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
  process.stderr.write(banner(server.config, server.url, server.database.displayUrl, demo, oidcDemo, mockCard));
}

function banner(
  config: Config,
  url: string,
  database: string,
  demo: DemoData | undefined,
  oidcDemo: OidcDemo | undefined,
  mockCard: MockCard | undefined,
): string {
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
  if (oidcDemo) {
    lines.push(
      "",
      `  OpenID Connect demo: sign in as "${oidcDemo.userLogin}" / "${oidcDemo.userPassword}" (the step-up page shows the mock one-time code)`,
      `    ${oidcDemo.authorizationUrl}`,
      "  with step-up to ACR high:",
      `    ${oidcDemo.stepUpUrl}`,
      "  with step-up to ACR very_high, signing with the demo user's mock JPKI card (on the page):",
      `    ${oidcDemo.jpkiStepUpUrl}`,
      ...(mockCard ? [`  the mock card's certificate ${mockCard.certificateId} (account "${mockCard.accountName}"): revoke it with SetMockCertificateStatus`] : []),
      `  client ${oidcDemo.clientId}, secret in ${config.dataDir}/demo-client-secret (client_secret_basic), e.g. for PAR:`,
      `    curl -u ${oidcDemo.clientId}:$(cat ${config.dataDir}/demo-client-secret) -d redirect_uri=${encodeURIComponent(oidcDemo.redirectUri)} \\`,
      `      -d response_type=code -d scope=openid -d state=s1 ${config.baseUrl}/api/oidc/v1/par`,
      `  public client ${oidcDemo.publicClientId} (no secret, PKCE and DPoP required), for an app's OAuth library`,
      "  the demo page shows a curl command that redeems the code at the token endpoint; discovery:",
      `    ${config.baseUrl}/.well-known/openid-configuration`,
    );
  }
  lines.push("", "");
  return lines.join("\n");
}
