import {
  createContextKey,
  createContextValues,
  type ContextValues,
  type HandlerContext,
  type Interceptor,
} from "@connectrpc/connect";
import type { AccountRow, Accounts, RememberedAuthentication } from "../domain/accounts/accounts.ts";
import type { ConfirmCaller } from "../domain/certificates/status-checks.ts";
import { DomainError } from "../domain/errors.ts";

/** The outcome of authenticating a call: its account, or why it has none. */
type Authentication = { account: AccountRow } | { refused: DomainError };

const authenticationKey = createContextKey<Authentication | undefined>(undefined, { description: "API token authentication" });

/**
 * A call admitted on the lookup this instance remembers, not yet confirmed
 * by a read of the auth version (Accounts.authenticateRemembered). Nothing
 * may be written or answered before `confirm` resolves: the handler confirms
 * with the version its first statement read, and whoever answers confirms
 * (reading the version) if the handler did not.
 */
export class PendingConfirmation {
  private outcome: Promise<void> | undefined;

  constructor(
    private readonly accounts: Accounts,
    private readonly token: string,
    private readonly remembered: RememberedAuthentication,
  ) {}

  /** Once per call: later calls get the first outcome. Rejects with the refusal (a DomainError) when the token no longer passes. */
  confirm(observedVersion: number | undefined): Promise<void> {
    this.outcome ??= this.accounts.confirmRemembered(this.token, this.remembered, observedVersion).then(() => undefined);
    return this.outcome;
  }
}

const pendingKey = createContextKey<PendingConfirmation | undefined>(undefined, { description: "API token authentication to confirm" });

const alreadyConfirmed: ConfirmCaller = async () => undefined;

/** What a handler that reads the auth version with its first statement passes on (see confirmedByFirstRead). */
export function callerConfirmation(context: HandlerContext): ConfirmCaller {
  const pending = context.values.get(pendingKey);
  return pending ? (version) => pending.confirm(version) : alreadyConfirmed;
}

/** The pending confirmation of a call, for the transports that answer it. */
export function pendingConfirmation(values: ContextValues): PendingConfirmation | undefined {
  return values.get(pendingKey);
}

/** The account the call acts for; only for services behind `bearerAuthentication`. */
export function callerAccount(context: HandlerContext): AccountRow {
  const authentication = context.values.get(authenticationKey);
  if (!authentication || !("account" in authentication)) {
    throw new TypeError("no authenticated account: is the service behind bearerAuthentication?");
  }
  return authentication.account;
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

async function authenticate(accounts: Accounts, header: string | null): Promise<Authentication> {
  try {
    return { account: await accounts.authenticate(bearerToken(header)) };
  } catch (error) {
    if (error instanceof DomainError) return { refused: error };
    throw error;
  }
}

/** From the lookup this instance remembers, to be confirmed (see PendingConfirmation); undefined when a full authentication must decide. */
function authenticateRemembered(accounts: Accounts, header: string | null): { account: AccountRow; pending: PendingConfirmation } | undefined {
  let token: string;
  try {
    token = bearerToken(header);
  } catch {
    return undefined;
  }
  const remembered = accounts.authenticateRemembered(token);
  return remembered && { account: remembered.account, pending: new PendingConfirmation(accounts, token, remembered) };
}

export interface Preauthentication {
  contextValues: ContextValues;
  /** The call will be refused whatever its body holds. */
  refused: boolean;
}

/**
 * Authenticates a call from its headers alone, before its body is read, so
 * that a caller without a valid token learns that first (and its body is
 * never decoded). The outcome travels in the context values to
 * `bearerAuthentication`, which refuses or admits the call.
 *
 * The procedures in `confirmedByFirstRead` (paths such as
 * "/service.verify.v2.CertificateService/CheckCertificateStatus") read the
 * auth version with their first statement and confirm with it
 * (callerConfirmation): a token this instance remembers is admitted without
 * a read of its own, pending that confirmation. Every other call, and a
 * token not remembered, is authenticated in full here.
 */
export function preauthenticate(accounts: Accounts, publicServices: ReadonlySet<string>, confirmedByFirstRead: ReadonlySet<string> = new Set()) {
  return async (service: string, headers: Pick<Headers, "get">, procedure?: string): Promise<Preauthentication> => {
    const contextValues = createContextValues();
    if (publicServices.has(service)) return { contextValues, refused: false };
    const remembered = procedure !== undefined && confirmedByFirstRead.has(procedure) ? authenticateRemembered(accounts, headers.get("authorization")) : undefined;
    if (remembered) {
      contextValues.set(authenticationKey, { account: remembered.account });
      contextValues.set(pendingKey, remembered.pending);
      return { contextValues, refused: false };
    }
    const authentication = await authenticate(accounts, headers.get("authorization"));
    contextValues.set(authenticationKey, authentication);
    return { contextValues, refused: "refused" in authentication };
  };
}

/**
 * Requires "Authorization: Bearer <token>" on every call except those of the
 * public services, and makes the token's account available to handlers. Uses
 * the outcome of `preauthenticate` when the transport ran it, and
 * authenticates from the header otherwise.
 */
export function bearerAuthentication(accounts: Accounts, publicServices: ReadonlySet<string>): Interceptor {
  return (next) => async (req) => {
    if (publicServices.has(req.service.typeName)) return next(req);
    let authentication = req.contextValues.get(authenticationKey);
    if (!authentication) {
      authentication = await authenticate(accounts, req.header.get("authorization"));
      req.contextValues.set(authenticationKey, authentication);
    }
    if ("refused" in authentication) throw authentication.refused;
    // A call admitted on a remembered lookup and handed here (its body did not take the fast path) is confirmed before it runs.
    await req.contextValues.get(pendingKey)?.confirm(undefined);
    return next(req);
  };
}
