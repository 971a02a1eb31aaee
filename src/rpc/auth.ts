import { ConnectError, createContextKey, createContextValues, type ContextValues, type HandlerContext, type Interceptor, type StreamRequest, type UnaryRequest } from "@connectrpc/connect";
import type { Accounts } from "../domain/accounts/accounts.ts";
import { CallerNotConfirmed, type Caller } from "../domain/accounts/caller.ts";
import { DomainError } from "../domain/errors.ts";
import { presentedCredential } from "./caller-credentials.ts";
import type { OAuthAccess, OAuthAdmission } from "./oauth-admission.ts";

/**
 * How a call was admitted: its caller, or why it is refused. While the
 * caller is still to confirm (admitted on a remembered lookup), what it
 * presented is kept to authenticate it in full if the call cannot confirm
 * it: the token, and for a DPoP-bound access token the key its proof showed
 * (a proof is used once, so it is never checked twice). A refusal is a
 * domain error, or a refused token presentation already in its Connect
 * form (it may carry a DPoP-Nonce header). `freshNonce`: a DPoP nonce for
 * the answer, the proof's being about to expire.
 */
type Admission = { caller: Caller; kept?: KeptCredential; freshNonce?: string } | { refused: DomainError | ConnectError };

type KeptCredential = { kind: "api_token"; token: string } | { kind: "access_token"; token: string; provenJkt: string | undefined };

const admissionKey = createContextKey<Admission | undefined>(undefined, { description: "API token admission" });

/** The caller of a call to a service behind API tokens (see RpcService.access). */
export function callerOf(context: HandlerContext): Caller {
  const admission = context.values.get(admissionKey);
  if (!admission || !("caller" in admission)) throw new TypeError("no admitted caller: is the service registered with access api_token?");
  return admission.caller;
}

/** The account a call acts for, for every method that does not confirm its caller itself (see RpcService.confirmedByFirstRead). */
export function callerAccountId(context: HandlerContext): string {
  const caller = callerOf(context);
  if (caller.unconfirmedAt !== undefined) throw new TypeError("the caller is still to confirm: pass the Caller to a domain call that confirms it");
  return caller.accountId;
}

export interface Preauthentication {
  contextValues: ContextValues;
  /** The call will be refused whatever its body holds. */
  refused: boolean;
}

/**
 * "Authorization: Bearer <API token>" on every call but those of public
 * services, as each service's registration says (RpcService.access), or an
 * OAuth access token of one of the account's clients ("Bearer", or "DPoP"
 * with a proof), within its scope (OAuthAdmission).
 *
 * The transport runs `beforeBody` on the headers, before the body is read,
 * so that a caller without a valid token learns that first (and its body is
 * never decoded); the interceptor then refuses or admits the call with that
 * outcome, or authenticates from the header when the transport did not.
 *
 * A method listed in `confirmedByFirstRead` may be admitted on a token this
 * instance remembers, without a read: its Caller is then unconfirmed, and
 * its domain call confirms it with the auth version its first statement
 * reads (see Caller). When the call fails in any way, or its request never
 * reaches the interceptor, the token is authenticated in full and a refusal
 * is answered instead of the call's own outcome: a revoked token is refused
 * whatever its request holds.
 */
export class RpcAuthentication {
  /**
   * publicServices: type names ("service.verify.v2.ServerInfoService");
   * confirmedByFirstRead: procedure paths ("/service.verify.v2.CertificateService/CheckCertificateStatus").
   */
  constructor(
    private readonly accounts: Accounts,
    private readonly publicServices: ReadonlySet<string>,
    private readonly confirmedByFirstRead: ReadonlySet<string>,
    private readonly oauth: { access: OAuthAccess; admission: OAuthAdmission },
  ) {}

  async beforeBody(service: string, procedure: string, headers: Pick<Headers, "get">): Promise<Preauthentication> {
    const contextValues = createContextValues();
    if (this.publicServices.has(service)) return { contextValues, refused: false };
    const admission = await this.admit(procedure, headers, this.confirmedByFirstRead.has(procedure));
    contextValues.set(admissionKey, admission);
    return { contextValues, refused: "refused" in admission };
  }

  readonly interceptor: Interceptor = (next) => async (req) => {
    if (this.publicServices.has(req.service.typeName)) return next(req);
    const procedure = `/${req.service.typeName}/${req.method.name}`;
    let admission = req.contextValues.get(admissionKey);
    if (!admission) {
      admission = await this.admit(procedure, req.header, false);
      req.contextValues.set(admissionKey, admission);
    }
    if ("refused" in admission) throw admission.refused;
    const { freshNonce } = admission;
    if (freshNonce !== undefined) {
      const response = await this.admitted(admission, procedure, req, next);
      response.header.set("DPoP-Nonce", freshNonce);
      return response;
    }
    return this.admitted(admission, procedure, req, next);
  };

  /** Runs an admitted call; a caller admitted on a remembered lookup is confirmed by it, or authenticated in full when it fails. */
  private async admitted(admission: { caller: Caller; kept?: KeptCredential }, procedure: string, req: UnaryRequest | StreamRequest, next: Parameters<Interceptor>[0]) {
    if (admission.caller.unconfirmedAt === undefined) return next(req);
    const kept = admission.kept!;
    try {
      const response = await next(req);
      // The call confirmed its caller (its domain call throws CallerNotConfirmed otherwise).
      req.contextValues.set(admissionKey, { caller: { accountId: admission.caller.accountId } });
      if (kept.kind === "api_token") await this.accounts.confirmedUse(kept.token);
      return response;
    } catch (error) {
      const confirmed = await this.admitKept(procedure, kept);
      req.contextValues.set(admissionKey, confirmed);
      if ("refused" in confirmed) throw confirmed.refused;
      // Nothing was written: the call runs again for the caller authenticated in full.
      if (error instanceof CallerNotConfirmed) return next(req);
      throw error;
    }
  }

  /**
   * For a call whose caller was admitted on a remembered lookup and whose
   * request never reached the interceptor (its body could not be read): the
   * context values of a refusal when a full authentication refuses the
   * credential, for the transport to answer instead.
   */
  async refusalOfUnreadCall(values: ContextValues, procedure: string): Promise<ContextValues | undefined> {
    const admission = values.get(admissionKey);
    if (!admission || !("caller" in admission) || admission.caller.unconfirmedAt === undefined) return undefined;
    const confirmed = await this.admitKept(procedure, admission.kept!);
    if (!("refused" in confirmed)) return undefined;
    return createContextValues().set(admissionKey, confirmed);
  }

  /** Admits a call from its headers: on a remembered lookup when the method confirms its caller itself, in full otherwise. */
  private async admit(procedure: string, headers: Pick<Headers, "get">, mayRemember: boolean): Promise<Admission> {
    try {
      const presented = presentedCredential(headers.get("authorization"));
      if (presented.kind === "api_token") {
        const remembered = mayRemember ? this.accounts.rememberedCaller(presented.token) : undefined;
        if (remembered) return { caller: remembered, kept: presented };
        return { caller: { accountId: (await this.accounts.authenticate(presented.token)).id } };
      }
      const { tokens } = this.oauth.access;
      const remembered = mayRemember ? tokens.rememberedCaller(presented.token) : undefined;
      const caller = remembered?.caller ?? (await tokens.authenticate(presented.token));
      const { provenJkt, freshNonce } = await this.oauth.admission.proveBinding(caller, presented.scheme, presented.token, procedure, headers.get("dpop"));
      this.oauth.admission.requireScope(caller, procedure);
      const nonce = freshNonce !== undefined ? { freshNonce } : {};
      if (!remembered) return { caller: { accountId: caller.accountId }, ...nonce };
      return { caller: { accountId: caller.accountId, unconfirmedAt: remembered.version }, kept: { kind: "access_token", token: presented.token, provenJkt }, ...nonce };
    } catch (error) {
      if (error instanceof DomainError || error instanceof ConnectError) return { refused: error };
      throw error;
    }
  }

  /** Authenticates in full what a caller admitted on a remembered lookup presented. */
  private async admitKept(procedure: string, kept: KeptCredential): Promise<Admission> {
    try {
      if (kept.kind === "api_token") return { caller: { accountId: (await this.accounts.authenticate(kept.token)).id } };
      const caller = await this.oauth.access.tokens.authenticate(kept.token);
      this.oauth.admission.requireKey(caller, kept.provenJkt);
      this.oauth.admission.requireScope(caller, procedure);
      return { caller: { accountId: caller.accountId } };
    } catch (error) {
      if (error instanceof DomainError || error instanceof ConnectError) return { refused: error };
      throw error;
    }
  }
}
