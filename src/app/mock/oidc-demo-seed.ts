import { readFile, writeFile, mkdir } from "node:fs/promises";
import { createHmac } from "node:crypto";
import path from "node:path";
import type { Oidc } from "../../domain/oidc/provider.ts";
import { registrationFromMetadata } from "../../domain/oidc/client-registration.ts";
import { demoClientId, demoLocalizedNames, demoLogin, demoPassword, demoPublicClientId } from "../../domain/mock/demo-names.ts";

export interface OidcDemo {
  clientId: string;
  /** A public client (no secret, PKCE) that must use DPoP, as a mobile app is registered. */
  publicClientId: string;
  clientSecret: string;
  redirectUri: string;
  userLogin: string;
  userPassword: string;
  authorizationUrl: string;
  stepUpUrl: string;
  /** Step-up to very_high: only the mock JPKI card earns it (see seedMockCard). */
  jpkiStepUpUrl: string;
}

/**
 * Mock mode only: a demo client whose redirect_uri is the built-in demo page,
 * a public demo client with the same redirect_uri that must use DPoP (for
 * trying a mobile app's flow with its OAuth library), and a demo user with a password and a TOTP second factor (the mock
 * re-authentication page shows the current code). Idempotent; the client
 * secret is derived from the server key, so that instances sharing a
 * database (and, as they must, the key) all seed the same one instead of
 * each replacing it; it is written to <dataDir>/demo-client-secret for curl.
 */
export async function seedOidcDemo(oidc: Oidc, dataDir: string, now: number): Promise<OidcDemo> {
  const redirectUri = `${oidc.issuer}/demo/callback`;
  const secretFile = path.join(dataDir, "demo-client-secret");
  const secret = createHmac("sha256", oidc.secretKey).update("mock demo client secret").digest("base64url").slice(0, 32);
  if ((await readFile(secretFile, "utf8").catch(() => "")).trim() !== secret) {
    await mkdir(dataDir, { recursive: true });
    await writeFile(secretFile, secret + "\n", { mode: 0o600 });
  }
  const { client } = registrationFromMetadata(
    {
      client_id: demoClientId,
      client_name: "shomei demo app",
      token_endpoint_auth_method: "client_secret_basic",
      client_secret: secret,
      redirect_uris: [redirectUri],
      post_logout_redirect_uris: [`${oidc.issuer}/`],
      scope: "openid profile email offline_access",
      authorization_details_types: ["payment_initiation", "account_information"],
      // Stated rather than left to the default, so the demo shows where RS256 would be chosen.
      id_token_signed_response_alg: "ES256",
    },
    now,
  );
  await oidc.clients.save(client, now);
  const { client: publicClient } = registrationFromMetadata(
    {
      client_id: demoPublicClientId,
      client_name: "shomei demo mobile app",
      token_endpoint_auth_method: "none",
      redirect_uris: [redirectUri],
      scope: "openid profile offline_access",
      dpop_bound_access_tokens: true,
    },
    now,
  );
  await oidc.clients.save(publicClient, now);

  const existing = await oidc.users.findByLogin(demoLogin);
  if (!existing) {
    const user = await oidc.users.create({ login: demoLogin, password: demoPassword, name: "Demo User", localizedNames: demoLocalizedNames, email: "demo@example.com" });
    await oidc.users.enrolTotp(user.id);
  } else if (existing.localizedNames.length === 0) {
    // Demo users seeded before names had languages get theirs.
    await oidc.users.setLocalizedNames(existing.id, demoLocalizedNames);
  }
  const base = `${oidc.endpoints.authorization}?client_id=demo-client&redirect_uri=${encodeURIComponent(redirectUri)}&response_type=code`;
  return {
    clientId: client.clientId,
    publicClientId: publicClient.clientId,
    clientSecret: secret,
    redirectUri,
    userLogin: demoLogin,
    userPassword: demoPassword,
    authorizationUrl: `${base}&scope=openid%20profile&state=demo-state`,
    stepUpUrl: `${base}&scope=openid%20profile&state=demo-step-up&acr_values=high`,
    jpkiStepUpUrl: `${base}&scope=openid%20profile&state=demo-jpki&acr_values=very_high`,
  };
}
