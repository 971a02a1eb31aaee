import type { DescService } from "@bufbuild/protobuf";
import type { ConnectRouter, ServiceImpl } from "@connectrpc/connect";
import { CertificateService } from "../../gen/service/verify/v2/certificate_service_pb.ts";
import { EventService } from "../../gen/service/verify/v2/event_service_pb.ts";
import { MockService } from "../../gen/service/verify/v2/mock_service_pb.ts";
import { ServerInfoService } from "../../gen/service/verify/v2/server_info_pb.ts";
import { VerificationService } from "../../gen/service/verify/v2/verification_service_pb.ts";
import type { Config } from "../config/schema.ts";
import type { Domain } from "../app/compose.ts";
import { CertificateHandler } from "./services/certificate.ts";
import { EventHandler } from "./services/event.ts";
import { DisabledMockHandler, MockHandler } from "./services/mock.ts";
import { ServerInfoHandler } from "./services/server-info.ts";
import { VerificationHandler } from "./services/verification.ts";

export interface RpcDependencies {
  config: Config;
  domain: Domain;
}

/** Services callable without an API token. */
export const publicServices: ReadonlySet<string> = new Set([ServerInfoService.typeName]);

/** A service and the object that implements it. */
export interface RpcService {
  service: DescService;
  implementation: Partial<ServiceImpl<DescService>>;
}

/** Every RPC service. Each service class takes its domain services in its constructor. */
export function rpcServices(deps: RpcDependencies): RpcService[] {
  return [
    service(ServerInfoService, new ServerInfoHandler(deps.config.mode)),
    service(CertificateService, new CertificateHandler(deps.domain.statusChecks, deps.domain.batchChecks)),
    service(VerificationService, new VerificationHandler(deps.domain.verifications)),
    service(EventService, new EventHandler(deps.domain.events, deps.domain.oidc.issuer)),
    service(MockService, deps.domain.mock ? new MockHandler(deps.domain.mock) : new DisabledMockHandler()),
  ];
}

/** Services whose plain unary Connect calls take the fast path (src/server/unary-fast-path.ts): the certificate checks. */
export const fastPathServices: ReadonlySet<string> = new Set([CertificateService.typeName]);

/**
 * Procedures whose handler reads the auth version with its first statement
 * and confirms the caller with it before anything else (see preauthenticate):
 * a remembered API token costs them no read of its own.
 */
export const confirmedByFirstRead: ReadonlySet<string> = new Set([`/${CertificateService.typeName}/${CertificateService.method.checkCertificateStatus.name}`]);

/** Registers the services with a Connect router. */
export function registerServices(router: ConnectRouter, services: readonly RpcService[]): void {
  for (const { service, implementation } of services) router.service(service, implementation);
}

/** Registers every RPC service. */
export function routes(router: ConnectRouter, deps: RpcDependencies): void {
  registerServices(router, rpcServices(deps));
}

function service<S extends DescService>(desc: S, implementation: ServiceImpl<S>): RpcService {
  return { service: desc, implementation: implementation as unknown as Partial<ServiceImpl<DescService>> };
}
