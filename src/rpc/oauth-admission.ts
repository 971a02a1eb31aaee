import type { ConnectError } from "@connectrpc/connect";
import type { ApiAccessTokens, OAuthCaller } from "../domain/accounts/api-access-tokens.ts";
import type { ApiScope } from "../domain/accounts/api-scopes.ts";
import { DomainError } from "../domain/errors.ts";
import { BindingRefusal, requireKey, type AdmittedBinding, type TokenBinding } from "../domain/oidc/dpop/token-binding.ts";
import { bindingRefusalToConnectError } from "./errors.ts";

/** What an RPC needs to admit OAuth access tokens: the tokens, the presentation rule, and the URL the RPCs are published under. */
export interface OAuthAccess {
  tokens: ApiAccessTokens;
  binding: TokenBinding;
  /** The server's base URL: a proof's htu is it followed by the procedure path. */
  baseUrl: string;
}

/**
 * The rules for an access token at an RPC, after its lookup admitted it: its
 * presentation (TokenBinding, the rule userinfo follows too: a DPoP-bound
 * token only with "DPoP" and a proof of its key whose htu is the RPC's URL,
 * with a nonce when nonces are required), then the scope the method needs
 * (permission_denied otherwise; a method no scope names answers API tokens
 * only). An account's clients are never registered with the fapi2 profile
 * (ApiOAuthClients), so their proofs meet RFC 9449 and the general nonce
 * setting alone. A refused presentation is thrown as its ConnectError.
 */
export class OAuthAdmission {
  constructor(
    private readonly access: OAuthAccess,
    /** Procedure path ("/service.verify.v2.CertificateService/CheckCertificateStatus") to the scope it needs. */
    private readonly scopes: ReadonlyMap<string, ApiScope>,
  ) {}

  /** Judges the token's presentation: the key proven (undefined for Bearer) and a nonce for the answer. */
  async proveBinding(caller: OAuthCaller, scheme: "bearer" | "dpop", token: string, procedure: string, dpopHeader: string | null): Promise<AdmittedBinding> {
    const presented = { scheme, token, proofs: dpopHeader === null ? [] : [dpopHeader], method: "POST", url: `${this.access.baseUrl}${procedure}` };
    return translated(() => this.access.binding.admit(presented, caller.dpopJkt, {}));
  }

  /** The key a proof showed is the one the token is bound to (a remembered lookup, confirmed). */
  requireKey(caller: OAuthCaller, provenJkt: string | undefined): void {
    try {
      requireKey(caller.dpopJkt, provenJkt);
    } catch (error) {
      throw error instanceof BindingRefusal ? bindingRefusalToConnectError(error) : error;
    }
  }

  requireScope(caller: OAuthCaller, procedure: string): void {
    const scope = this.scopes.get(procedure);
    if (scope === undefined) throw new DomainError("insufficient_scope", "this method answers API tokens only, not OAuth access tokens");
    if (!caller.scopes.includes(scope)) throw new DomainError("insufficient_scope", `the access token's scope does not include ${scope}`, scope);
  }
}

async function translated<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw error instanceof BindingRefusal ? (bindingRefusalToConnectError(error) satisfies ConnectError) : error;
  }
}
