import type { DescMethod, DescService } from "@bufbuild/protobuf";
import type { ConnectRouter, ServiceImpl } from "@connectrpc/connect";
import { CertificateService } from "../../gen/service/verify/v2/certificate_service_pb.ts";
import { EventService } from "../../gen/service/verify/v2/event_service_pb.ts";
import { MockService } from "../../gen/service/verify/v2/mock_service_pb.ts";
import { OAuthClientService } from "../../gen/service/verify/v2/oauth_client_service_pb.ts";
import { ServerInfoService } from "../../gen/service/verify/v2/server_info_pb.ts";
import { VerificationService } from "../../gen/service/verify/v2/verification_service_pb.ts";
import type { Config } from "../config/schema.ts";
import type { Domain } from "../app/compose.ts";
import { CertificateHandler } from "./services/certificate.ts";
import { EventHandler } from "./services/event.ts";
import { DisabledMockHandler, MockHandler } from "./services/mock.ts";
import { OAuthClientHandler } from "./services/oauth-client.ts";
import type { ApiScope } from "../domain/accounts/api-scopes.ts";
import { ServerInfoHandler } from "./services/server-info.ts";
import { VerificationHandler } from "./services/verification.ts";

export interface RpcDependencies {
  config: Config;
  domain: Domain;
}

/**
 * A service, the object that implements it, and who may call it: anyone
 * (`public`), or an API account with "Authorization: Bearer <API token>"
 * (or an OAuth access token of its clients, see `oauthScope`).
 * `confirmedByFirstRead` names the methods whose domain call reads the auth
 * version with its first statement and confirms the caller with it (see
 * Caller): a token this instance remembers costs them no read of its own.
 * `oauthScope` is the scope an OAuth access token needs for the service's
 * methods (`oauthScopeByMethod` for those that need another); a method with
 * neither answers API tokens only (docs/reference/api-oauth.md).
 */
export interface RpcService {
  service: DescService;
  implementation: Partial<ServiceImpl<DescService>>;
  access: "public" | "api_token";
  confirmedByFirstRead?: readonly DescMethod[];
  oauthScope?: ApiScope;
  oauthScopeByMethod?: ReadonlyMap<DescMethod, ApiScope>;
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

/** Every RPC, registered here once: the router, the authentication and the error boundary all read this list. */
export function rpcServices(deps: RpcDependencies): RpcService[] {
  return [
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
    service(MockService, deps.domain.mock ? new MockHandler(deps.domain.mock) : new DisabledMockHandler(), { access: "api_token", oauthScope: "mock" }),
    // No scope: a client registers clients with an API token, never with an access token.
    service(OAuthClientService, new OAuthClientHandler(deps.domain.oauthClients), { access: "api_token" }),
  ];
}

/** Registers the services with a Connect router. */
export function registerServices(router: ConnectRouter, services: readonly RpcService[]): void {
  for (const { service, implementation } of services) router.service(service, implementation);
}

/** Registers every RPC service. */
export function routes(router: ConnectRouter, deps: RpcDependencies): void {
  registerServices(router, rpcServices(deps));
}

function service<S extends DescService>(desc: S, implementation: ServiceImpl<S>, policy: Pick<RpcService, "access" | "confirmedByFirstRead" | "oauthScope" | "oauthScopeByMethod">): RpcService {
  return { service: desc, implementation: implementation as unknown as Partial<ServiceImpl<DescService>>, ...policy };
}
