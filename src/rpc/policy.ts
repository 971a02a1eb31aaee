import type { Interceptor } from "@connectrpc/connect";
import type { Accounts } from "../domain/accounts/accounts.ts";
import type { Logger } from "../observability/logger.ts";
import { RpcAuthentication } from "./auth.ts";
import { errorBoundary } from "./interceptors.ts";
import type { RpcService } from "./routes.ts";

/**
 * What every RPC is served under, made once from the registrations
 * (rpcServices) and read by the one transport: who may call (each service's
 * access), how errors are answered (the error boundary), and how much of a
 * request is read.
 */
export interface RpcPolicy {
  services: readonly RpcService[];
  authentication: RpcAuthentication;
  /** Outermost first: errors of every later interceptor pass through the boundary. */
  interceptors: Interceptor[];
  /** The largest request message read, in bytes (after decompression). */
  readMaxBytes: number;
}

export function rpcPolicy(services: readonly RpcService[], deps: { accounts: Accounts; logger: Logger; readMaxBytes: number }): RpcPolicy {
  const authentication = new RpcAuthentication(
    deps.accounts,
    new Set(services.filter((s) => s.access === "public").map((s) => s.service.typeName)),
    new Set(services.flatMap((s) => (s.confirmedByFirstRead ?? []).map((method) => `/${s.service.typeName}/${method.name}`))),
  );
  return {
    services,
    authentication,
    interceptors: [errorBoundary(deps.logger), authentication.interceptor],
    readMaxBytes: deps.readMaxBytes,
  };
}
