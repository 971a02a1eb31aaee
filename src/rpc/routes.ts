import type { ConnectRouter } from "@connectrpc/connect";
import { CertificateService } from "../../gen/service/verify/v2/certificate_service_pb.ts";
import { EventService } from "../../gen/service/verify/v2/event_service_pb.ts";
import { MockService } from "../../gen/service/verify/v2/mock_service_pb.ts";
import { OAuthClientService } from "../../gen/service/verify/v2/oauth_client_service_pb.ts";
import { ServerInfoService } from "../../gen/service/verify/v2/server_info_pb.ts";
import { VerificationService } from "../../gen/service/verify/v2/verification_service_pb.ts";
import type { Config } from "../config/schema.ts";
import type { Domain } from "../app/compose.ts";
import { service, type RpcService } from "./rpc-service.ts";
import { CertificateHandler } from "./services/certificate.ts";
import { EventHandler } from "./services/event.ts";
import { DisabledMockHandler } from "./services/mock-disabled.ts";
import { OAuthClientHandler } from "./services/oauth-client.ts";
import { ServerInfoHandler } from "./services/server-info.ts";
import { VerificationHandler } from "./services/verification.ts";

export type { RpcService } from "./rpc-service.ts";

export interface RpcDependencies {
  config: Config;
  domain: Domain;
}

/** The EventService methods that manage webhooks and deliveries rather than read events. */
const webhookMethods = [
  EventService.method.createWebhookEndpoint,
  EventService.method.listWebhookEndpoints,
  EventService.method.getWebhookEndpoint,
  EventService.method.updateWebhookEndpoint,
  EventService.method.deleteWebhookEndpoint,
  EventService.method.rotateWebhookEndpointSecret,
  EventService.method.listEventDeliveries,
  EventService.method.redeliverEvent,
  EventService.method.sendTestEvent,
];

/**
 * Every RPC, registered here once: the router, the authentication and the error boundary all read this list.
 * An extension's service (see Extension) takes the place of the one of the same name, MockService's
 * placeholder in mock mode.
 */
export function rpcServices(deps: RpcDependencies): RpcService[] {
  const core = [
    service(ServerInfoService, new ServerInfoHandler(deps.config.mode), { access: "public" }),
    service(CertificateService, new CertificateHandler(deps.domain.statusChecks, deps.domain.batchChecks), {
      access: "api_token",
      confirmedByFirstRead: [CertificateService.method.checkCertificateStatus],
      oauthScope: "certificate.status",
    }),
    service(VerificationService, new VerificationHandler(deps.domain.verifications), { access: "api_token", oauthScope: "verify" }),
    service(EventService, new EventHandler(deps.domain.events, deps.domain.webhooks, deps.domain.oidc.issuer), {
      access: "api_token",
      oauthScope: "events",
      oauthScopeByMethod: new Map(webhookMethods.map((m) => [m, "webhooks"])),
    }),
    service(MockService, new DisabledMockHandler(), { access: "api_token", oauthScope: "mock" }),
    // No scope: a client registers clients with an API token, never with an access token.
    service(OAuthClientService, new OAuthClientHandler(deps.domain.oauthClients), { access: "api_token" }),
  ];
  const added = deps.domain.extensions.flatMap((extension) => extension.rpcServices?.() ?? []);
  const named = (entry: RpcService) => added.find((a) => a.service.typeName === entry.service.typeName);
  return [...core.map((entry) => named(entry) ?? entry), ...added.filter((a) => !core.some((c) => c.service.typeName === a.service.typeName))];
}

/** Registers the services with a Connect router. */
export function registerServices(router: ConnectRouter, services: readonly RpcService[]): void {
  for (const { service, implementation } of services) router.service(service, implementation);
}

/** Registers every RPC service. */
export function routes(router: ConnectRouter, deps: RpcDependencies): void {
  registerServices(router, rpcServices(deps));
}
