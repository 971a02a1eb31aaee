import type { AuthorizationDetail } from "../authorization-details.ts";
import type { GrantManagementAction } from "../authorization-request.ts";
import { OAuthError } from "../oauth-error.ts";
import { detailCovers, requestCovered } from "./coverage.ts";

/** What a grant holds: the scopes and authorization_details a user granted a client. */
export interface GrantContent {
  scopes: string[];
  authorizationDetails: AuthorizationDetail[];
}

/**
 * The grant content after a consented authorization request (OpenID Grant
 * Management §5.2). `requested` is what the user approved; `existing` is the
 * grant the action applies to:
 *
 * - `create`: a new grant holding exactly `requested`; `existing` is ignored
 *   (the user's other grants for the client stay as they are).
 * - `replace`: the grant named by `grant_id` (without one, the user's current
 *   grant for the client) now holds exactly `requested` (same grant id);
 *   whatever it held before and `requested` lacks is gone.
 * - `merge`: that grant keeps what it held and gains
 *   `requested` (see {@link mergeGrantContent}).
 * - no action: the user's grant for this client (the one grant a provider
 *   keeps per user and client when the client does not manage grants, as
 *   node-oidc-provider does) gains `requested` like `merge`; with no such
 *   grant yet, a grant holding exactly `requested` is made.
 *
 * `replace` and `merge` need the existing grant (the caller turns them into
 * `create` when no grant_id was sent and the user has no grant yet): without one this throws
 * `invalid_grant_id` (the caller looks the grant up by `grant_id`, user and
 * client first and answers that error itself; this is the last guard).
 * The result shares no objects with the arguments.
 */
export function applyGrantAction(
  existing: GrantContent | undefined,
  action: GrantManagementAction | undefined,
  requested: GrantContent,
): GrantContent {
  switch (action) {
    case "create":
      return copyContent(requested);
    case "replace":
      requireExisting(existing, action);
      return copyContent(requested);
    case "merge":
      requireExisting(existing, action);
      return mergeGrantContent(existing, requested);
    case undefined:
      return existing === undefined ? copyContent(requested) : mergeGrantContent(existing, requested);
  }
}

/**
 * `existing` plus `requested`:
 *
 * - scopes: the existing scopes in their order, then the new ones in request
 *   order, each once;
 * - authorization details: each requested detail in turn is dropped when a
 *   detail already in the grant covers it ({@link detailCovers}); otherwise
 *   the details it covers are removed from the grant and it is appended. The
 *   remaining existing details keep their order.
 *
 * Coverage is transitive, so the result covers exactly what the plain
 * concatenation of both lists would cover, without the redundant entries.
 * Merging a request the grant already covers leaves the grant unchanged.
 */
export function mergeGrantContent(existing: GrantContent, requested: GrantContent): GrantContent {
  const scopes = [...new Set([...existing.scopes, ...requested.scopes])];
  let details = existing.authorizationDetails.map(copyDetail);
  for (const detail of requested.authorizationDetails) {
    if (details.some((held) => detailCovers(held, detail))) continue;
    details = details.filter((held) => !detailCovers(detail, held));
    details.push(copyDetail(detail));
  }
  return { scopes, authorizationDetails: details };
}

/**
 * Whether the request is already granted, so that the consent page may be
 * skipped (specification 3.1 row 6; the value of the decision flow's
 * `alreadyGranted`). `grant` is the grant the action applies to: for
 * `replace` and `merge` the one named by `grant_id`, for no action the user's
 * grant for this client, `undefined` when there is none.
 *
 * - `create` is never already granted: it makes a new grant, with its own
 *   grant id and lifecycle, which the user has not seen; the consent page is
 *   shown (and `prompt=none` gets `consent_required`).
 * - `replace`, `merge` and no action are already granted when the grant
 *   covers the request ({@link requestCovered}). A covered `merge` (or no
 *   action) leaves the grant unchanged; a covered `replace` only narrows it,
 *   which takes nothing from the user.
 * - A request with a detail of a one-off type (`oneOffTypes`: a payment, say)
 *   is never already granted, whatever the grant holds: each one is a new
 *   act the user must see and approve, not a standing permission. Two equal
 *   payments are two payments.
 */
export function alreadyGranted(
  action: GrantManagementAction | undefined,
  grant: GrantContent | undefined,
  request: GrantContent,
  oneOffTypes: ReadonlySet<string> = new Set(),
): boolean {
  if (action === "create" || grant === undefined) return false;
  if (request.authorizationDetails.some((detail) => oneOffTypes.has(detail.type))) return false;
  return requestCovered(grant, request);
}

function requireExisting(existing: GrantContent | undefined, action: GrantManagementAction): asserts existing is GrantContent {
  if (existing === undefined) {
    throw new OAuthError("invalid_grant_id", `grant_management_action=${action} needs an existing grant of this user and client`);
  }
}

function copyContent(content: GrantContent): GrantContent {
  return { scopes: [...content.scopes], authorizationDetails: content.authorizationDetails.map(copyDetail) };
}

function copyDetail(detail: AuthorizationDetail): AuthorizationDetail {
  return structuredClone(detail);
}
