import type { AuthorizationDetail } from "../authorization-details.ts";

/**
 * When a request is already covered by what a user granted (specification 3.1
 * row 6: the consent page can be skipped).
 *
 * RFC 9396 §6.1 leaves the comparison of authorization details to each
 * `type`, and shomei knows no type-specific rules, so this is one generic,
 * conservative rule. A wrong "not covered" only shows a consent page that was
 * not needed; a wrong "covered" would hand out access the user never approved.
 * Every doubt therefore answers "not covered".
 *
 * `granted` covers `requested` when both are JSON values and:
 *
 * - **Objects** (an authorization detail itself, or any nested object): both
 *   have exactly the same members, and each member of `granted` covers the
 *   member of the same name in `requested`. A member missing from `requested`
 *   that `granted` has is *not* a free pass: an absent member puts no limit on
 *   the request, so the request asks for more than the limited grant.
 *   `{type:"payment", amount:10}` does not cover `{type:"payment"}`; nor does
 *   `{type:"payment"}` cover `{type:"payment", amount:10}` (the grant says
 *   nothing about what `amount` means to the API). A member whose value is
 *   `undefined` counts as absent, as in JSON.
 * - **Arrays**: set inclusion. Every element of `requested` is covered by some
 *   element of `granted` (order and repetition do not matter), following RFC
 *   9396 §2.2, where `locations`, `actions`, `datatypes` and `privileges` list
 *   alternatives and a detail grants their cartesian product: fewer values in
 *   each list is less access. `{actions:["read","write"]}` covers
 *   `{actions:["read"]}`, never the reverse. An *empty* requested array is
 *   covered only by an empty granted array: RFC 9396 §7.1 uses `[]` for "to be
 *   filled in during the authorization" (the user picks the accounts), which is
 *   an open request, not a request for nothing.
 * - **Primitives** (strings, numbers, booleans, null): strict equality. Strings
 *   compare exactly, code unit by code unit, with no case folding or Unicode
 *   normalization (RFC 9396 §12). Numbers have no order: `amount: 5` is not
 *   covered by `amount: 10`, since an amount may be an exact payment as well
 *   as a limit. `10` and `"10"` differ.
 * - **Kinds differ** (array against object, object against string, …): not
 *   covered.
 * - Structures nested deeper than {@link maxCoverageDepth} levels are not
 *   covered (no recursion without bound on client-supplied JSON).
 *
 * `type` is compared like any other string member, so a different `type` is
 * never covered. Type-specific subsumption (RFC 9396 §6.1: `write` implying
 * `read`, `privileges:["admin"]` implying everything) is not recognized; such
 * a request shows the consent page again.
 */
export function detailCovers(granted: AuthorizationDetail, requested: AuthorizationDetail): boolean {
  if (granted.type !== requested.type) return false;
  return valueCovers(granted, requested, 0);
}

/** The rights a grant holds, or a request asks for. */
export interface GrantedRights {
  readonly scopes: readonly string[];
  readonly authorizationDetails: readonly AuthorizationDetail[];
}

/**
 * True when every requested scope is in the grant (exact string match) and
 * every requested authorization detail is covered by at least one granted
 * detail on its own ({@link detailCovers}). Two granted details are never
 * combined to cover one requested detail: `{actions:["read"]}` and
 * `{actions:["write"]}` granted separately do not cover
 * `{actions:["read","write"]}`, because a single detail grants the cartesian
 * product of its lists, which the two separate grants do not.
 */
export function requestCovered(grant: GrantedRights, request: GrantedRights): boolean {
  const grantedScopes = new Set(grant.scopes);
  if (!request.scopes.every((scope) => grantedScopes.has(scope))) return false;
  return request.authorizationDetails.every((requested) => grant.authorizationDetails.some((granted) => detailCovers(granted, requested)));
}

/** Nesting (objects and arrays) deeper than this is never covered. */
export const maxCoverageDepth = 32;

function valueCovers(granted: unknown, requested: unknown, depth: number): boolean {
  if (depth > maxCoverageDepth) return false;
  if (Array.isArray(requested)) {
    if (!Array.isArray(granted)) return false;
    if (requested.length === 0) return granted.length === 0;
    return requested.every((r: unknown) => granted.some((g: unknown) => valueCovers(g, r, depth + 1)));
  }
  if (isPlainObject(requested)) {
    if (!isPlainObject(granted)) return false;
    const requestedKeys = presentKeys(requested);
    if (requestedKeys.length !== presentKeys(granted).length) return false;
    return requestedKeys.every((key) => Object.hasOwn(granted, key) && granted[key] !== undefined && valueCovers(granted[key], requested[key], depth + 1));
  }
  return granted === requested;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Own member names, leaving out members whose value is undefined (absent in JSON). */
function presentKeys(value: Record<string, unknown>): string[] {
  return Object.keys(value).filter((key) => value[key] !== undefined);
}
