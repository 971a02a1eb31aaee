import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import express, { type Express } from "express";
import { demoClientId } from "../domain/mock/demo-names.ts";
import type { Config } from "../config/schema.ts";
import type { Domain } from "../app/compose.ts";
import type { OperationsDependencies } from "./routes/health.ts";
import { registerOperationsRoutes } from "./routes/health.ts";
import { registerAssetRoutes } from "./routes/assets.ts";
import { registerHomeRoute } from "./routes/home.ts";
import { registerMockCaRoutes } from "./routes/mock-ca.ts";
import { registerAuthorizeRoute } from "./routes/oidc/authorize.ts";
import { registerDemoCallback } from "./routes/oidc/demo-callback.ts";
import { registerInteractionPages } from "./routes/oidc/interaction-pages.ts";
import { registerAccountLogin } from "./routes/oidc/account-login.ts";
import { registerLogoutRoute } from "./routes/oidc/logout.ts";
import { registerDiscoveryRoutes } from "./routes/oidc/discovery.ts";
import { registerGrantRoutes } from "./routes/oidc/grants.ts";
import { parEndpoint, registerParRoute } from "./routes/oidc/par.ts";
import { registerTokenAdministrationRoutes } from "./routes/oidc/token-administration.ts";
import { registerTokenRoute, tokenEndpoint } from "./routes/oidc/token.ts";
import { registerUserinfoRoute } from "./routes/oidc/userinfo.ts";
import { bodyLimit } from "./middleware/body-limit.ts";
import { securityHeaders } from "./middleware/page-headers.ts";
import { registerCors } from "./middleware/cors.ts";
import { errorHandler, notFound } from "./middleware/errors.ts";
import { leanClientEndpoints } from "./lean-client-endpoints.ts";
import { leanAuthorize } from "./lean-authorize.ts";

export interface HttpDependencies extends OperationsDependencies {
  config: Config;
  domain: Domain;
}

/**
 * The Express application for everything that is not an RPC: operations
 * endpoints now, the OpenID Connect routes and pages as they arrive. Built by a
 * function so the HTTP/2 listener can have its own instance (see
 * express-on-http2.ts); all state lives in the dependencies, never in here.
 */
export function createHttpApp(deps: HttpDependencies): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  // An application-wide setting the pages read with their language (see pageLanguage).
  app.locals.timeZone = deps.config.timeZone;
  app.use(securityHeaders);
  app.use(bodyLimit(deps.config.maxBodyBytes));

  const router = express.Router();
  registerOperationsRoutes(router, deps);
  const { oidc } = deps.domain;
  registerHomeRoute(router, deps.config, oidc);
  registerAssetRoutes(router);
  registerAuthorizeRoute(router, oidc, deps.config.maxBodyBytes);
  registerParRoute(router, oidc, deps.config.maxBodyBytes);
  registerCors(router);
  registerDiscoveryRoutes(router, oidc);
  registerTokenRoute(router, oidc, deps.config.maxBodyBytes);
  registerTokenAdministrationRoutes(router, oidc, deps.config.maxBodyBytes);
  registerUserinfoRoute(router, oidc);
  registerGrantRoutes(router, oidc);
  const defaultLocale = deps.config.defaultLocale;
  registerInteractionPages(router, oidc, deps.config.mode === "mock", defaultLocale);
  registerAccountLogin(router, oidc, defaultLocale);
  registerLogoutRoute(router, oidc, defaultLocale);
  if (deps.domain.mock) {
    registerMockCaRoutes(router, deps.domain.mock);
    registerDemoCallback(router, {
      tokenEndpoint: oidc.endpoints.token,
      redirectUri: `${oidc.issuer}/demo/callback`,
      clientId: demoClientId,
      secretFile: path.join(deps.config.dataDir, "demo-client-secret"),
    }, defaultLocale);
  }
  app.use(router);

  app.use(notFound(defaultLocale));
  app.use(errorHandler(deps.logger, oidc.issuer, defaultLocale));
  return app;
}

/**
 * The HTTP/1.1 handler for everything that is not an RPC: PAR and token
 * posts in their plainest shape, and the authorization endpoint's plain
 * GET, answered without Express (see leanClientEndpoints and
 * leanAuthorize), everything else by the Express app. HTTP/2 requests
 * go to the Express app alone.
 */
export function createHttp1Handler(deps: HttpDependencies): (req: IncomingMessage, res: ServerResponse) => void {
  const app = createHttpApp(deps);
  const oidc = deps.domain.oidc;
  const clientEndpoints = leanClientEndpoints(oidc, deps.logger, [parEndpoint(oidc, deps.config.maxBodyBytes), tokenEndpoint(oidc, deps.config.maxBodyBytes)]);
  const authorizeEndpoint = leanAuthorize(oidc, app);
  return (req, res) => {
    if (!clientEndpoints(req, res) && !authorizeEndpoint(req, res)) app(req, res);
  };
}

