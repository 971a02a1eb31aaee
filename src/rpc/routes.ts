import type { ConnectRouter } from "@connectrpc/connect";
import { CertificateService } from "../../gen/service/verify/v2/certificate_service_pb.ts";
import { MockService } from "../../gen/service/verify/v2/mock_service_pb.ts";
import { ServerInfoService } from "../../gen/service/verify/v2/server_info_pb.ts";
import { VerificationService } from "../../gen/service/verify/v2/verification_service_pb.ts";
import type { Config } from "../config/schema.ts";
import type { Domain } from "../app/compose.ts";
import { CertificateHandler } from "./services/certificate.ts";
import { DisabledMockHandler, MockHandler } from "./services/mock.ts";
import { ServerInfoHandler } from "./services/server-info.ts";
import { VerificationHandler } from "./services/verification.ts";

export interface RpcDependencies {
  config: Config;
  domain: Domain;
}

/** Services callable without an API token. */
export const publicServices: ReadonlySet<string> = new Set([ServerInfoService.typeName]);

/** Registers every RPC service. Each service class takes its domain services in its constructor. */
export function routes(router: ConnectRouter, deps: RpcDependencies): void {
  router.service(ServerInfoService, new ServerInfoHandler(deps.config.mode));
  router.service(CertificateService, new CertificateHandler(deps.domain.statusChecks, deps.domain.batchChecks));
  router.service(VerificationService, new VerificationHandler(deps.domain.verifications));
  router.service(MockService, deps.domain.mock ? new MockHandler(deps.domain.mock) : new DisabledMockHandler());
}
