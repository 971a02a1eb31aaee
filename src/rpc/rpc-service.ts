import type { DescMethod, DescService } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { ApiScope } from "../domain/accounts/api-scopes.ts";

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

/** One entry of the list of RPCs (see rpcServices). */
export function service<S extends DescService>(
  desc: S,
  implementation: ServiceImpl<S>,
  policy: Pick<RpcService, "access" | "confirmedByFirstRead" | "oauthScope" | "oauthScopeByMethod">,
): RpcService {
  return { service: desc, implementation: implementation as unknown as Partial<ServiceImpl<DescService>>, ...policy };
}
