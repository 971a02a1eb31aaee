import { createContextKey, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import type { AccountRow, Accounts } from "../domain/accounts/accounts.ts";
import { DomainError } from "../domain/errors.ts";

const accountKey = createContextKey<AccountRow | undefined>(undefined, { description: "authenticated API account" });

/** The account the call acts for; only for services behind `bearerAuthentication`. */
export function callerAccount(context: HandlerContext): AccountRow {
  const account = context.values.get(accountKey);
  if (!account) throw new TypeError("no authenticated account: is the service behind bearerAuthentication?");
  return account;
}

const bearer = /^Bearer ([\x21-\x7e]+)$/i;

/**
 * Requires "Authorization: Bearer <token>" on every call except those of the
 * public services, and makes the token's account available to handlers.
 */
export function bearerAuthentication(accounts: Accounts, publicServices: ReadonlySet<string>): Interceptor {
  return (next) => async (req) => {
    if (publicServices.has(req.service.typeName)) return next(req);
    const header = req.header.get("authorization");
    if (header === null || header === "") {
      throw new DomainError("token_missing", "an Authorization header with a Bearer API token is required");
    }
    const token = bearer.exec(header)?.[1];
    if (!token) throw new DomainError("token_malformed", 'the Authorization header must be "Bearer <API token>"');
    req.contextValues.set(accountKey, await accounts.authenticate(token));
    return next(req);
  };
}
