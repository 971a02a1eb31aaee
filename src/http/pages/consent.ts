import { type Html, html } from "./html.ts";
import { page, type PageLanguage } from "./layout.ts";
import type { Messages } from "../i18n/catalogue.ts";
import { authorizationDetailsRenderer } from "./authorization-details-view.ts";

export interface ConsentPageView {
  /** Where the form posts to. */
  action: string;
  csrfToken: string;
  clientName: string;
  userLogin: string;
  /** The requested scope values. */
  scopes: string[];
  /** RFC 9396 authorization_details entries, each with a `type`. */
  authorizationDetails: Record<string, unknown>[];
  /** How the answer changes an existing grant: a new one, replacing it, or adding to it. */
  grantAction?: "create" | "replace" | "merge";
}

/** The words shown for a scope value; unknown scopes are shown as they are. */
export function describeScope(t: Messages, scope: string): string {
  const words = t.consent.scopes;
  return Object.hasOwn(words, scope) ? words[scope as keyof typeof words] : scope;
}

/** The id of the page's form. */
export const consentFormId = "consent-form";

/** The consent page: what the client asks for, in words, and one form with Allow and Deny. */
export function renderConsentPage(lang: PageLanguage, v: ConsentPageView): string {
  const t = lang.t.consent;
  const scopes = [...new Set(v.scopes)].filter((s) => s !== "");
  const r = authorizationDetailsRenderer(lang);
  return page(
    lang,
    t.title,
    html`<h1>${t.heading(v.clientName)}</h1>
<p class="muted">${lang.t.common.signedInAs(v.userLogin)}</p>
${grantNote(lang.t, v)}
${
  scopes.length > 0
    ? html`<h2 id="scopes-heading">${t.asksFor}</h2>
<ul class="plain scopes" aria-labelledby="scopes-heading">${scopes.map((s) => html`<li>${describeScope(lang.t, s)}</li>`)}</ul>`
    : ""
}
${
  v.authorizationDetails.length > 0
    ? html`<h2>${scopes.length > 0 ? t.andThisAccess : t.asksForAccess}</h2>
${v.authorizationDetails.map(r.detail)}`
    : ""
}
<form method="post" action="${v.action}" id="${consentFormId}">
<input type="hidden" name="csrf" value="${v.csrfToken}">
<div class="actions">
<button type="submit" name="decision" value="allow" class="button primary">${t.allow}</button>
<button type="submit" name="decision" value="deny" class="button secondary">${t.deny}</button>
</div>
</form>
<p class="muted footnote">${t.denyNote(v.clientName)}</p>`,
  );
}

function grantNote(t: Messages, v: ConsentPageView): Html | "" {
  if (v.grantAction === "replace") return html`<div class="notice" role="note"><p>${t.consent.replaces(v.clientName)}</p></div>`;
  if (v.grantAction === "merge") return html`<div class="notice" role="note"><p>${t.consent.merges(v.clientName)}</p></div>`;
  return "";
}
