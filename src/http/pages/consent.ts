import { type Html, html } from "./html.ts";
import { page } from "./layout.ts";

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

const scopeWords: Record<string, string> = {
  openid: "Confirm your identity",
  profile: "Your name and profile",
  email: "Your email address",
  offline_access: "Stay connected when you are not using the app",
};

/** The words shown for a scope value; unknown scopes are shown as they are. */
export function describeScope(scope: string): string {
  return Object.hasOwn(scopeWords, scope) ? scopeWords[scope]! : scope;
}

/** The RFC 9396 §2.2 common members, shown as labelled lists, in this order. */
const listMembers: ReadonlyArray<readonly [string, string]> = [
  ["actions", "Actions"],
  ["locations", "Locations"],
  ["datatypes", "Data types"],
  ["identifier", "Identifier"],
  ["privileges", "Privileges"],
];

const maxDepth = 6;

/** The consent page: what the client asks for, in words, and one form with Allow and Deny. */
export function renderConsentPage(v: ConsentPageView): string {
  const scopes = [...new Set(v.scopes)].filter((s) => s !== "");
  return page(
    "Allow access",
    html`<h1><span class="client">${v.clientName}</span> wants to access your account</h1>
<p class="muted">Signed in as <strong>${v.userLogin}</strong></p>
${grantNote(v)}
${
  scopes.length > 0
    ? html`<h2 id="scopes-heading">It asks for</h2>
<ul class="plain scopes" aria-labelledby="scopes-heading">${scopes.map((s) => html`<li>${describeScope(s)}</li>`)}</ul>`
    : ""
}
${
  v.authorizationDetails.length > 0
    ? html`<h2>${scopes.length > 0 ? "And this specific access" : "It asks for this access"}</h2>
${v.authorizationDetails.map(renderDetail)}`
    : ""
}
<form method="post" action="${v.action}">
<input type="hidden" name="csrf" value="${v.csrfToken}">
<div class="actions">
<button type="submit" name="decision" value="allow" class="button primary">Allow</button>
<button type="submit" name="decision" value="deny" class="button secondary">Deny</button>
</div>
</form>
<p class="muted footnote">If you deny, <span class="client">${v.clientName}</span> gets no access and you return to it.</p>`,
  );
}

function grantNote(v: ConsentPageView): Html | "" {
  if (v.grantAction === "replace") {
    return html`<div class="notice" role="note"><p>Allowing replaces the access you gave <span class="client">${v.clientName}</span> before.</p></div>`;
  }
  if (v.grantAction === "merge") {
    return html`<div class="notice" role="note"><p>Allowing adds to the access you already gave <span class="client">${v.clientName}</span>.</p></div>`;
  }
  return "";
}

function renderDetail(detail: Record<string, unknown>): Html {
  const type = typeof detail.type === "string" ? detail.type : String(detail.type ?? "access");
  const known = listMembers.filter(([key]) => Object.hasOwn(detail, key));
  const others = Object.keys(detail).filter((key) => key !== "type" && !listMembers.some(([k]) => k === key));
  return html`<section class="detail">
<h3>${type}</h3>
${
  known.length > 0
    ? html`<dl class="members">${known.map(([key, label]) => html`<dt>${label}</dt><dd>${renderList(detail[key])}</dd>`)}</dl>`
    : ""
}
${others.length > 0 ? html`<ul class="plain kv">${others.map((key) => renderRow(key, detail[key], 1))}</ul>` : ""}
</section>`;
}

/** A common member: arrays become bulleted lists, anything else is rendered as a value. */
function renderList(value: unknown): Html {
  if (Array.isArray(value) && value.length > 0) return html`<ul>${value.map((item) => html`<li>${renderValue(item, 1)}</li>`)}</ul>`;
  return renderValue(value, 1);
}

function renderRow(key: string, value: unknown, depth: number): Html {
  return html`<li><span class="key">${key}:</span> ${renderValue(value, depth)}</li>`;
}

/** Any JSON value, as text or nested lists; every string goes through escaping. */
function renderValue(value: unknown, depth: number): Html {
  if (value === null || value === undefined) return html`<span class="muted">none</span>`;
  if (typeof value === "string") return html`${value}`;
  if (typeof value === "boolean") return html`${value ? "yes" : "no"}`;
  if (typeof value === "number" || typeof value === "bigint") return html`${String(value)}`;
  if (depth >= maxDepth) return html`<code>${safeJson(value)}</code>`;
  if (Array.isArray(value)) {
    if (value.length === 0) return html`<span class="muted">none</span>`;
    return html`<ul>${value.map((item) => html`<li>${renderValue(item, depth + 1)}</li>`)}</ul>`;
  }
  if (typeof value === "object") {
    const keys = Object.keys(value);
    if (keys.length === 0) return html`<span class="muted">none</span>`;
    return html`<ul class="plain kv">${keys.map((k) => renderRow(k, (value as Record<string, unknown>)[k], depth + 1))}</ul>`;
  }
  return html`${String(value)}`;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
