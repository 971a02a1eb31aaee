import {
  createContextKey,
  createContextValues,
  type ContextValues,
  type HandlerContext,
  type Interceptor,
} from "@connectrpc/connect";
import type { AccountRow, Accounts } from "../domain/accounts/accounts.ts";
import { DomainError } from "../domain/errors.ts";

/** The outcome of authenticating a call: its account, or why it has none. */
type Authentication = { account: AccountRow } | { refused: DomainError };

const authenticationKey = createContextKey<Authentication | undefined>(undefined, { description: "API token authentication" });

/** The account the call acts for; only for services behind `bearerAuthentication`. */
export function callerAccount(context: HandlerContext): AccountRow {
  const authentication = context.values.get(authenticationKey);
  if (!authentication || !("account" in authentication)) {
    throw new TypeError("no authenticated account: is the service behind bearerAuthentication?");
  }
  return authentication.account;
}

const bearer = /^Bearer ([\x21-\x7e]+)$/i;

async function authenticate(accounts: Accounts, header: string | null): Promise<Authentication> {
  try {
    if (header === null || header === "") {
      throw new DomainError("token_missing", "an Authorization header with a Bearer API token is required");
    }
    const token = bearer.exec(header)?.[1];
    if (!token) throw new DomainError("token_malformed", 'the Authorization header must be "Bearer <API token>"');
    return { account: await accounts.authenticate(token) };
  } catch (error) {
    if (error instanceof DomainError) return { refused: error };
    throw error;
  }
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
 */
export function preauthenticate(accounts: Accounts, publicServices: ReadonlySet<string>) {
  return async (service: string, headers: Pick<Headers, "get">): Promise<Preauthentication> => {
    const contextValues = createContextValues();
    if (publicServices.has(service)) return { contextValues, refused: false };
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
    return next(req);
  };
}
