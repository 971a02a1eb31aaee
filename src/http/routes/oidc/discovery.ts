import type { Response, Router } from "express";
import { providerMetadata } from "../../../domain/oidc/discovery.ts";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { locales } from "../../i18n/locale.ts";

/** The provider's metadata (domain/oidc/discovery.ts) at both well-known paths, and the JWKS. */
export function registerDiscoveryRoutes(
  router: Router,
  oidc: Pick<Oidc, "advertiseAuthorizationResponseIss" | "authorizationDetailsTypes" | "endpoints" | "issuer" | "policy" | "registration" | "signingKeys">,
): void {
  const send = async (res: Response) => {
    const metadata = providerMetadata({
      issuer: oidc.issuer,
      endpoints: oidc.endpoints,
      policy: oidc.policy,
      advertiseAuthorizationResponseIss: oidc.advertiseAuthorizationResponseIss,
      authorizationDetailsTypes: await oidc.authorizationDetailsTypes(),
      uiLocales: locales,
      registrationEnabled: oidc.registration.enabled,
    });
    res.set("Cache-Control", "public, max-age=300").json(metadata);
  };
  router.get("/.well-known/openid-configuration", (_req, res) => send(res));
  router.get("/.well-known/oauth-authorization-server", (_req, res) => send(res));
  router.get("/api/oidc/v1/jwks", async (_req, res) => {
    res.set("Cache-Control", "public, max-age=300").type("application/jwk-set+json").json(await oidc.signingKeys.jwks());
  });
}
