import type { ApiAccessTokens, OAuthCaller } from "../domain/accounts/api-access-tokens.ts";
import type { ApiScope } from "../domain/accounts/api-scopes.ts";
import { DomainError } from "../domain/errors.ts";
import type { DpopProofs } from "../domain/oidc/dpop/dpop-proofs.ts";
import { OAuthError } from "../domain/oidc/oauth-error.ts";

/** What an RPC needs to admit OAuth access tokens: the tokens, the DPoP proof check, and the URL the RPCs are published under. */
export interface OAuthAccess {
  tokens: ApiAccessTokens;
  proofs: DpopProofs;
  /** The server's base URL: a proof's htu is it followed by the procedure path. */
  baseUrl: string;
}

/**
 * The rules for an access token at an RPC, after its lookup admitted it: the
 * scheme its binding needs (a DPoP-bound token only with "DPoP" and a proof
 * of its key whose htu is the RPC's URL; RFC 9449 section 7), then the scope
 * the method needs (permission_denied otherwise; a method no scope names
 * answers API tokens only).
 */
export class OAuthAdmission {
  constructor(
    private readonly access: OAuthAccess,
    /** Procedure path ("/service.verify.v2.CertificateService/CheckCertificateStatus") to the scope it needs. */
    private readonly scopes: ReadonlyMap<string, ApiScope>,
  ) {}

  /** Checks the request's DPoP proof for a token bound to a key; returns the key proven (undefined for Bearer). */
  async proveBinding(caller: OAuthCaller, scheme: "bearer" | "dpop", token: string, procedure: string, dpopHeader: string | null): Promise<string | undefined> {
    if (scheme === "bearer") {
      if (caller.dpopJkt !== null) throw new DomainError("dpop_proof_invalid", 'the access token is DPoP-bound: send it as "DPoP <token>" with a DPoP proof');
      return undefined;
    }
    if (caller.dpopJkt === null) throw new DomainError("token_malformed", 'the access token is not DPoP-bound: send it as "Bearer <token>"');
    if (dpopHeader === null) throw new DomainError("dpop_proof_invalid", "a DPoP proof is required with the DPoP scheme");
    let jkt: string | undefined;
    try {
      jkt = await this.access.proofs.check({ proofs: [dpopHeader], method: "POST", url: `${this.access.baseUrl}${procedure}`, accessToken: token });
    } catch (error) {
      if (error instanceof OAuthError) throw new DomainError("dpop_proof_invalid", error.description || "the DPoP proof is not valid");
      throw error;
    }
    this.requireKey(caller, jkt);
    return jkt;
  }

  /** The key a proof showed is the one the token is bound to. */
  requireKey(caller: OAuthCaller, provenJkt: string | undefined): void {
    if (caller.dpopJkt !== null && provenJkt !== caller.dpopJkt) {
      throw new DomainError("dpop_proof_invalid", "the DPoP proof is not signed by the key the access token is bound to");
    }
  }

  requireScope(caller: OAuthCaller, procedure: string): void {
    const scope = this.scopes.get(procedure);
    if (scope === undefined) throw new DomainError("insufficient_scope", "this method answers API tokens only, not OAuth access tokens");
    if (!caller.scopes.includes(scope)) throw new DomainError("insufficient_scope", `the access token's scope does not include ${scope}`, scope);
  }
}
