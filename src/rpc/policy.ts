import type { Interceptor } from "@connectrpc/connect";
import type { Accounts } from "../domain/accounts/accounts.ts";
import type { Logger } from "../observability/logger.ts";
import type { ApiScope } from "../domain/accounts/api-scopes.ts";
import { RpcAuthentication } from "./auth.ts";
import { OAuthAdmission, type OAuthAccess } from "./oauth-admission.ts";
import { errorBoundary } from "./interceptors.ts";
import type { RpcService } from "./rpc-service.ts";

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

export function rpcPolicy(services: readonly RpcService[], deps: { accounts: Accounts; oauth: OAuthAccess; logger: Logger; readMaxBytes: number }): RpcPolicy {
  const authentication = new RpcAuthentication(
    deps.accounts,
    new Set(services.filter((s) => s.access === "public").map((s) => s.service.typeName)),
    new Set(services.flatMap((s) => (s.confirmedByFirstRead ?? []).map((method) => `/${s.service.typeName}/${method.name}`))),
    { access: deps.oauth, admission: new OAuthAdmission(deps.oauth, oauthScopes(services)) },
  );
  return {
    services,
    authentication,
    interceptors: [errorBoundary(deps.logger), authentication.interceptor],
    readMaxBytes: deps.readMaxBytes,
  };
}

/** Each procedure path an OAuth access token may reach, and the scope it needs (see RpcService.oauthScope). */
export function oauthScopes(services: readonly RpcService[]): Map<string, ApiScope> {
  const scopes = new Map<string, ApiScope>();
  for (const s of services) {
    for (const method of s.service.methods) {
      const scope = s.oauthScopeByMethod?.get(method) ?? s.oauthScope;
      if (scope !== undefined) scopes.set(`/${s.service.typeName}/${method.name}`, scope);
    }
  }
  return scopes;
}
