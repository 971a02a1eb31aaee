import { createContextKey, createContextValues, type ContextValues, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import type { Accounts } from "../domain/accounts/accounts.ts";
import { CallerNotConfirmed, type Caller } from "../domain/accounts/caller.ts";
import { DomainError } from "../domain/errors.ts";

/**
 * How a call was admitted: its caller, or why it is refused. While the
 * caller is still to confirm (admitted on a remembered token), the token is
 * kept to authenticate it in full if the call cannot confirm it.
 */
type Admission = { caller: Caller; token?: string } | { refused: DomainError };

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

const bearer = /^Bearer ([\x21-\x7e]+)$/i;

function bearerToken(header: string | null): string {
  if (header === null || header === "") {
    throw new DomainError("token_missing", "an Authorization header with a Bearer API token is required");
  }
  const token = bearer.exec(header)?.[1];
  if (!token) throw new DomainError("token_malformed", 'the Authorization header must be "Bearer <API token>"');
  return token;
}

/**
 * "Authorization: Bearer <API token>" on every call but those of public
 * services, as each service's registration says (RpcService.access).
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
  ) {}

  async beforeBody(service: string, procedure: string, headers: Pick<Headers, "get">): Promise<Preauthentication> {
    const contextValues = createContextValues();
    if (this.publicServices.has(service)) return { contextValues, refused: false };
    const header = headers.get("authorization");
    const remembered = this.confirmedByFirstRead.has(procedure) ? this.rememberedAdmission(header) : undefined;
    const admission = remembered ?? (await this.admitInFull(header));
    contextValues.set(admissionKey, admission);
    return { contextValues, refused: "refused" in admission };
  }

  readonly interceptor: Interceptor = (next) => async (req) => {
    if (this.publicServices.has(req.service.typeName)) return next(req);
    let admission = req.contextValues.get(admissionKey);
    if (!admission) {
      admission = await this.admitInFull(req.header.get("authorization"));
      req.contextValues.set(admissionKey, admission);
    }
    if ("refused" in admission) throw admission.refused;
    if (admission.caller.unconfirmedAt === undefined) return next(req);
    const token = admission.token!;
    try {
      const response = await next(req);
      // The call confirmed its caller (its domain call throws CallerNotConfirmed otherwise).
      req.contextValues.set(admissionKey, { caller: { accountId: admission.caller.accountId } });
      await this.accounts.confirmedUse(token);
      return response;
    } catch (error) {
      const confirmed = await this.admitInFull(req.header.get("authorization"));
      req.contextValues.set(admissionKey, confirmed);
      if ("refused" in confirmed) throw confirmed.refused;
      // Nothing was written: the call runs again for the caller authenticated in full.
      if (error instanceof CallerNotConfirmed) return next(req);
      throw error;
    }
  };

  /**
   * For a call whose caller was admitted on a remembered token and whose
   * request never reached the interceptor (its body could not be read): the
   * context values of a refusal when a full authentication refuses the
   * token, for the transport to answer instead.
   */
  async refusalOfUnreadCall(values: ContextValues): Promise<ContextValues | undefined> {
    const admission = values.get(admissionKey);
    if (!admission || !("caller" in admission) || admission.caller.unconfirmedAt === undefined) return undefined;
    const confirmed = await this.admitInFull(`Bearer ${admission.token!}`);
    if (!("refused" in confirmed)) return undefined;
    return createContextValues().set(admissionKey, confirmed);
  }

  private async admitInFull(header: string | null): Promise<Admission> {
    try {
      const account = await this.accounts.authenticate(bearerToken(header));
      return { caller: { accountId: account.id } };
    } catch (error) {
      if (error instanceof DomainError) return { refused: error };
      throw error;
    }
  }

  /** An admission from the lookup this instance remembers, still to confirm; undefined when a full authentication must decide. */
  private rememberedAdmission(header: string | null): Admission | undefined {
    let token: string;
    try {
      token = bearerToken(header);
    } catch {
      return undefined;
    }
    const caller = this.accounts.rememberedCaller(token);
    return caller && { caller, token };
  }
}
