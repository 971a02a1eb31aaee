import express, { type Express } from "express";
import type { Config } from "../config/schema.ts";
import type { Domain } from "../app/compose.ts";
import type { OperationsDependencies } from "./routes/health.ts";
import { registerOperationsRoutes } from "./routes/health.ts";
import { registerAssetRoutes } from "./routes/assets.ts";
import { registerHomeRoute } from "./routes/home.ts";
import { registerAuthorizeRoute } from "./routes/oidc/authorize.ts";
import { registerInteractionPages } from "./routes/oidc/interaction-pages.ts";
import { accountLoginPath, registerAccountLogin } from "./routes/oidc/account-login.ts";
import { registerAccountSecurity } from "./routes/oidc/passkey-pages.ts";
import { registerPasskeyAssets } from "./routes/passkey-assets.ts";
import { registerLogoutRoute } from "./routes/oidc/logout.ts";
import { registerDiscoveryRoutes } from "./routes/oidc/discovery.ts";
import { registerGrantRoutes } from "./routes/oidc/grants.ts";
import { registerParRoute } from "./routes/oidc/par.ts";
import { registerClientRegistrationRoutes } from "./routes/oidc/register.ts";
import { registerTokenAdministrationRoutes } from "./routes/oidc/token-administration.ts";
import { registerTokenRoute } from "./routes/oidc/token.ts";
import { registerUserinfoRoute } from "./routes/oidc/userinfo.ts";
import { registerJpkiAppApi } from "./routes/jpki-app-api.ts";
import { bodyLimit } from "./middleware/body-limit.ts";
import { securityHeaders } from "./middleware/page-headers.ts";
import { registerCors } from "./middleware/cors.ts";
import { errorHandler, notFound } from "./middleware/errors.ts";
import { combinedHints } from "./page-hints.ts";

export interface HttpDependencies extends OperationsDependencies {
  config: Config;
  domain: Domain;
}

/**
 * The Express application for everything that is not an RPC, on HTTP/1.1 and
 * HTTP/2 alike (see src/server/express-on-node.ts): the operations
 * endpoints, the OpenID Connect routes and pages, and those of the installed
 * extensions (see Extension). All state lives in the
 * dependencies, never in here.
 */
export function createHttpApp(deps: HttpDependencies): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  // An application-wide setting the pages read with their language (see pageLanguage).
  app.locals.timeZone = deps.config.timeZone;
  app.use(securityHeaders);
  app.use(bodyLimit(deps.config.maxBodyBytes));

  const { oidc } = deps.domain;
  // The calls every sign-in makes, first, so that no other route is tried before them: PAR and the
  // authorization endpoint on the way in, the token endpoint on the way out. Each route parses what it
  // needs itself (the token route sets its CORS headers too, see registerFormEndpoint).
  registerParRoute(app, oidc, deps.config.maxBodyBytes);
  registerAuthorizeRoute(app, oidc, deps.config.maxBodyBytes);
  registerTokenRoute(app, oidc, deps.config.maxBodyBytes);

  const router = express.Router();
  registerOperationsRoutes(router, deps);
  registerHomeRoute(router, deps.config, oidc);
  registerAssetRoutes(router);
  registerPasskeyAssets(router);
  registerCors(router);
  registerDiscoveryRoutes(router, oidc);
  registerTokenAdministrationRoutes(router, oidc, deps.config.maxBodyBytes);
  registerUserinfoRoute(router, oidc);
  if (oidc.registration.enabled) registerClientRegistrationRoutes(router, oidc.registration, deps.config.maxBodyBytes);
  registerGrantRoutes(router, oidc);
  registerJpkiAppApi(router, oidc.signRequests, oidc.issuer);
  const defaultLocale = deps.config.defaultLocale;
  const { extensions } = deps.domain;
  const hints = combinedHints(extensions.flatMap((extension) => (extension.pageHints ? [extension.pageHints(deps.domain)] : [])));
  registerInteractionPages(router, oidc, hints, defaultLocale, deps.logger);
  registerAccountLogin(router, oidc, defaultLocale, deps.logger);
  registerAccountSecurity(router, oidc, deps.logger, defaultLocale, accountLoginPath);
  registerLogoutRoute(router, oidc, defaultLocale);
  // What the mode adds (the mock environment's CA, card script and demo pages): after production's routes.
  for (const extension of extensions) extension.registerRoutes?.(router, deps.domain);
  app.use(router);

  app.use(notFound(defaultLocale));
  app.use(errorHandler(deps.logger, oidc.issuer, defaultLocale));
  return app;
}
