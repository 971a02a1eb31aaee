import path from "node:path";
import type { Router } from "express";
import type { Config } from "../../config/schema.ts";
import { demoClientId } from "../../domain/mock/demo-names.ts";
import type { MockEnvironment } from "../../domain/mock/mock-environment.ts";
import type { Oidc } from "../../domain/oidc/provider.ts";
import type { DemoWebhookReceiver } from "../../domain/mock/demo-webhook-receiver.ts";
import { registerDemoWebhooks } from "./demo-webhooks.ts";
import { registerDemoCallback } from "./demo-callback.ts";
import { registerMockCaRoutes } from "./mock-ca-routes.ts";
import { mockCardScript, mockCardScriptPath } from "./mock-card-script.ts";

/**
 * The mock environment's routes: the mock CA's certificate, CRL and OCSP
 * responder, the mock card's script, the demo client's callback page and the
 * demo webhook receiver.
 */
export function registerMockRoutes(
  router: Router,
  mock: MockEnvironment,
  demoWebhooks: DemoWebhookReceiver,
  oidc: Pick<Oidc, "issuer" | "endpoints">,
  config: Pick<Config, "dataDir" | "defaultLocale">,
): void {
  registerMockCaRoutes(router, mock);
  router.get(mockCardScriptPath, (_req, res) => {
    res.set("Cache-Control", "no-cache").type("text/javascript").send(mockCardScript);
  });
  registerDemoCallback(
    router,
    {
      tokenEndpoint: oidc.endpoints.token,
      redirectUri: `${oidc.issuer}/demo/callback`,
      clientId: demoClientId,
      secretFile: path.join(config.dataDir, "demo-client-secret"),
    },
    config.defaultLocale,
  );
  registerDemoWebhooks(router, demoWebhooks, oidc.issuer, config.defaultLocale);
}
