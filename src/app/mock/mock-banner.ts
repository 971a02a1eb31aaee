import type { Config } from "../../config/schema.ts";
import type { MockCard } from "../../domain/mock/mock-card.ts";
import type { DemoData } from "./demo-seed.ts";
import type { OidcDemo } from "./oidc-demo-seed.ts";

/** What `serve` prints in mock mode, after its own lines: the demo data and commands that use it. */
export function mockBanner(config: Config, url: string, demo: DemoData, oidcDemo: OidcDemo, mockCard: MockCard): string[] {
  const [good, , revoked] = demo.certificates;
  return [
    "",
    `  Mock environment: account "${demo.accountName}", user ${demo.userId}`,
    ...demo.certificates.map((c) => `    certificate ${c.id}  ${c.type}  ${c.status}`),
    `  API token (demo data, kept in ${config.dataDir}/demo-api-token): ${demo.token}`,
    "",
    "  Check a certificate's status:",
    `    curl -H 'Authorization: Bearer ${demo.token}' -H 'Content-Type: application/json' \\`,
    `      -d '{"certificateId":"${good?.id}"}' ${url}/service.verify.v2.CertificateService/CheckCertificateStatus`,
    `  and a revoked one: {"certificateId":"${revoked?.id}"}`,
    "",
    `  OpenID Connect demo: sign in as "${oidcDemo.userLogin}" / "${oidcDemo.userPassword}" (the step-up page shows the mock one-time code)`,
    `    ${oidcDemo.authorizationUrl}`,
    "  with step-up to ACR high:",
    `    ${oidcDemo.stepUpUrl}`,
    "  with step-up to ACR very_high, signing with the demo user's mock JPKI card (on the page):",
    `    ${oidcDemo.jpkiStepUpUrl}`,
    `  the mock card's certificate ${mockCard.certificateId} (account "${mockCard.accountName}"): revoke it with SetMockCertificateStatus`,
    `  client ${oidcDemo.clientId}, secret in ${config.dataDir}/demo-client-secret (client_secret_basic), e.g. for PAR:`,
    `    curl -u ${oidcDemo.clientId}:$(cat ${config.dataDir}/demo-client-secret) -d redirect_uri=${encodeURIComponent(oidcDemo.redirectUri)} \\`,
    `      -d response_type=code -d scope=openid -d state=s1 ${config.baseUrl}/api/oidc/v1/par`,
    `  public client ${oidcDemo.publicClientId} (no secret, PKCE and DPoP required), for an app's OAuth library`,
    "  the demo page shows a curl command that redeems the code at the token endpoint; discovery:",
    `    ${config.baseUrl}/.well-known/openid-configuration`,
  ];
}
