import { ApiAccessTokens } from "../domain/accounts/api-access-tokens.ts";
import { DomainError } from "../domain/errors.ts";

/**
 * What the Authorization header of an RPC presents: an API token
 * ("Bearer shm_…"), or an OAuth access token of an account's client
 * ("Bearer shmat_…", or "DPoP shmat_…" with a DPoP header). The shape of the
 * value tells them apart, so an API token costs no more than before.
 */
export type PresentedCredential = { kind: "api_token"; token: string } | { kind: "access_token"; token: string; scheme: "bearer" | "dpop" };

const authorization = /^(Bearer|DPoP) ([\x21-\x7e]+)$/i;

export function presentedCredential(header: string | null): PresentedCredential {
  if (header === null || header === "") {
    throw new DomainError("token_missing", "an Authorization header with a Bearer API token or an OAuth access token is required");
  }
  const match = authorization.exec(header);
  if (!match) throw new DomainError("token_malformed", 'the Authorization header must be "Bearer <API token or access token>" or "DPoP <access token>"');
  const scheme = match[1]!.toLowerCase() as "bearer" | "dpop";
  const token = match[2]!;
  if (scheme === "bearer" && !ApiAccessTokens.isAccessTokenValue(token)) return { kind: "api_token", token };
  return { kind: "access_token", token, scheme };
}
