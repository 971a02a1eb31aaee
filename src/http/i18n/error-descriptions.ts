import type { Messages } from "./catalogue.ts";

type Descriptions = Messages["errors"]["descriptions"];
type Key = { [K in keyof Descriptions]: Descriptions[K] extends string ? K : never }[keyof Descriptions];

/**
 * The error_description texts the domain writes for clients (ASCII, English,
 * as RFC 6749 requires of error_description), matched to catalogue entries
 * for the pages people see. Kept beside the catalogues: a description changed
 * in the domain without a change here falls back to the words for its error
 * code, never to untranslated text.
 */
const exact: Record<string, Key> = {
  "client_id is required": "clientIdRequired",
  "the client is not registered": "clientUnknown",
  "redirect_uri is required": "redirectUriRequired",
  "redirect_uri does not match a registered redirect URI of this client": "redirectUriUnregistered",
  "this client must use pushed authorization requests (request_uri)": "parRequired",
  "request_uri is not one this server issued": "requestUriUnknown",
  "request_uri was issued to another client": "requestUriForeign",
  "request_uri has expired": "requestUriExpired",
  "request_uri has already been used": "requestUriUsed",
  "this sign-in request has expired or belongs to another browser. Return to the application and start again.": "interactionExpired",
  "the application of this sign-in request is no longer registered. Return to the application and start again.": "interactionClientGone",
  "this sign-in request was already completed. Return to the application and start again.": "interactionCompleted",
  "the form has expired or did not come from this site. Go back, reload the page and try again.": "formExpired",
  "choose Allow or Deny": "chooseAllowOrDeny",
  "client_id does not match the audience of id_token_hint": "logoutClientMismatch",
  "unknown client": "logoutClientUnknown",
  "post_logout_redirect_uri needs client_id or id_token_hint": "logoutRedirectNeedsClient",
  "post_logout_redirect_uri is not registered for this client": "logoutRedirectUnregistered",
  "id_token_hint is not an ID token issued by this provider": "logoutHintInvalid",
  "id_token_hint was issued by another provider": "logoutHintInvalid",
  "id_token_hint names no client": "logoutHintInvalid",
  "the request is malformed": "malformed",
  "the service is temporarily unavailable, retry later": "unavailable",
  "an unexpected error occurred": "serverError",
};

/** Descriptions with a value in them. */
const patterns: ReadonlyArray<readonly [RegExp, (d: Descriptions, value: string) => string]> = [
  [/^parameter ([a-z_]+) is repeated$/, (d, name) => d.parameterRepeated(name)],
  [/^parameter ([a-z_]+) is malformed$/, (d, name) => d.parameterMalformed(name)],
  [/^no route for ()/, (d) => d.notFound],
  [/^the request body exceeds the limit()/, (d) => d.tooLarge],
];

/** What a page says for an OAuth error: the catalogue's words for its description, else for its code. */
export function describeError(t: Messages, error: string, description: string): { text: string; known: boolean } {
  const d = t.errors.descriptions;
  const key = Object.hasOwn(exact, description) ? exact[description] : undefined;
  if (key !== undefined) return { text: d[key], known: true };
  for (const [pattern, words] of patterns) {
    const match = pattern.exec(description);
    if (match) return { text: words(d, match[1] ?? ""), known: true };
  }
  const byCode = t.errors.byCode;
  return { text: Object.hasOwn(byCode, error) ? byCode[error]! : byCode.other, known: false };
}
