import type { ConnectRouter } from "@connectrpc/connect";
import { ServerInfoService } from "../../gen/service/verify/v2/server_info_pb.ts";
import type { Config } from "../config/schema.ts";
import { ServerInfoHandler } from "./services/server-info.ts";

export interface RpcDependencies {
  config: Config;
}

/** Registers every RPC service. Each service class takes its domain services in its constructor. */
export function routes(router: ConnectRouter, deps: RpcDependencies): void {
  router.service(ServerInfoService, new ServerInfoHandler(deps.config.mode));
}
