import { type Html, html } from "./html.ts";
import { page, type PageLanguage } from "./layout.ts";
import type { Messages } from "../i18n/catalogue.ts";

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

/** The RFC 9396 §2.2 common members, shown as labelled lists, in this order. */
const listMembers = ["actions", "locations", "datatypes", "identifier", "privileges"] as const;

/** The id of the page's form: the language switch's buttons submit it. */
export const consentFormId = "consent-form";

const maxDepth = 6;

/** The consent page: what the client asks for, in words, and one form with Allow and Deny. */
export function renderConsentPage(lang: PageLanguage, v: ConsentPageView): string {
  const t = lang.t.consent;
  const scopes = [...new Set(v.scopes)].filter((s) => s !== "");
  const r = renderer(lang.t);
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

/** Renders authorization_details entries with the page language's labels and words for yes, no and none. */
function renderer(t: Messages) {
  const c = t.consent;
  function detail(entry: Record<string, unknown>): Html {
    const type = typeof entry.type === "string" ? entry.type : String(entry.type ?? "access");
    const typeWords = Object.hasOwn(c.detailTypes, type) ? c.detailTypes[type] : undefined;
    const known = listMembers.filter((key) => Object.hasOwn(entry, key));
    const others = Object.keys(entry).filter((key) => key !== "type" && !(listMembers as readonly string[]).includes(key));
    return html`<section class="detail">
<h3>${typeWords === undefined ? type : html`${typeWords} <span class="muted"><code>${type}</code></span>`}</h3>
${known.length > 0 ? html`<dl class="members">${known.map((key) => html`<dt>${c.members[key]}</dt><dd>${list(entry[key])}</dd>`)}</dl>` : ""}
${others.length > 0 ? html`<ul class="plain kv">${others.map((key) => row(key, entry[key], 1))}</ul>` : ""}
</section>`;
  }

  /** A common member: arrays become bulleted lists, anything else is rendered as a value. */
  function list(value: unknown): Html {
    if (Array.isArray(value) && value.length > 0) return html`<ul>${value.map((item) => html`<li>${renderValue(item, 1)}</li>`)}</ul>`;
    return renderValue(value, 1);
  }

  function row(key: string, value: unknown, depth: number): Html {
    return html`<li><span class="key">${key}:</span> ${renderValue(value, depth)}</li>`;
  }

  /** Any JSON value, as text or nested lists; every string goes through escaping. */
  function renderValue(value: unknown, depth: number): Html {
    if (value === null || value === undefined) return html`<span class="muted">${t.common.none}</span>`;
    if (typeof value === "string") return html`${value}`;
    if (typeof value === "boolean") return html`${value ? t.common.yes : t.common.no}`;
    if (typeof value === "number" || typeof value === "bigint") return html`${String(value)}`;
    if (depth >= maxDepth) return html`<code>${safeJson(value)}</code>`;
    if (Array.isArray(value)) {
      if (value.length === 0) return html`<span class="muted">${t.common.none}</span>`;
      return html`<ul>${value.map((item) => html`<li>${renderValue(item, depth + 1)}</li>`)}</ul>`;
    }
    if (typeof value === "object") {
      const keys = Object.keys(value);
      if (keys.length === 0) return html`<span class="muted">${t.common.none}</span>`;
      return html`<ul class="plain kv">${keys.map((k) => row(k, (value as Record<string, unknown>)[k], depth + 1))}</ul>`;
    }
    return html`${String(value)}`;
  }

  return { detail };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
