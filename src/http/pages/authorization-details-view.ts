import type { Messages } from "../i18n/catalogue.ts";
import { formatsFor } from "../i18n/format.ts";
import { type Html, html } from "./html.ts";
import type { PageLanguage } from "./layout.ts";

/**
 * RFC 9396 authorization_details as a person reads them: the type and the
 * actions in words, amounts as money in the page's language (「金額：1,250円」),
 * known members by their names in the catalogue, and anything else (an
 * unknown type or member) still readable: its name split into words, its
 * value as text or nested lists. Every client-supplied string is escaped.
 */

/** The RFC 9396 §2.2 common members, shown as labelled lists, in this order. */
const listMembers = ["actions", "locations", "datatypes", "identifier", "privileges"] as const;

const maxDepth = 6;

/** "instructedAmount" → "Instructed amount", "creditor_account" → "Creditor account": a member the catalogue has no name for. */
export function wordsOfName(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/[_-]+/g, " ")
    .trim()
    .toLowerCase();
  return words === "" ? name : words.charAt(0).toUpperCase() + words.slice(1);
}

/** `{currency, amount}` with an ISO 4217 code and a decimal amount (RFC 9396's instructedAmount and the like): money. */
function moneyOf(value: unknown): { currency: string; amount: string } | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const { currency, amount, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || typeof currency !== "string" || !/^[A-Z]{3}$/.test(currency)) return undefined;
  const text = typeof amount === "number" && Number.isFinite(amount) ? String(amount) : amount;
  if (typeof text !== "string" || !/^-?\d{1,15}(\.\d{1,6})?$/.test(text)) return undefined;
  return { currency, amount: text };
}

/** Renders authorization_details entries with the page language's words. */
export function authorizationDetailsRenderer(lang: PageLanguage) {
  const t: Messages = lang.t;
  const c = t.consent;
  const formats = formatsFor(lang.locale, lang.timeZone);
  const own = <T>(words: Record<string, T>, key: string): T | undefined => (Object.hasOwn(words, key) ? words[key] : undefined);

  function detail(entry: Record<string, unknown>): Html {
    const type = typeof entry.type === "string" ? entry.type : String(entry.type ?? "access");
    const typeWords = own(c.detailTypes, type);
    const known = listMembers.filter((key) => Object.hasOwn(entry, key));
    const others = Object.keys(entry).filter((key) => key !== "type" && !(listMembers as readonly string[]).includes(key));
    return html`<section class="detail">
<h3>${typeWords === undefined ? type : html`${typeWords} <span class="muted"><code>${type}</code></span>`}</h3>
${known.length > 0 ? html`<dl class="members">${known.map((key) => html`<dt>${c.members[key]}</dt><dd>${key === "actions" ? actions(entry[key]) : list(entry[key])}</dd>`)}</dl>` : ""}
${others.length > 0 ? html`<ul class="plain kv">${others.map((key) => row(key, entry[key], 1))}</ul>` : ""}
</section>`;
  }

  /** Actions in words ("start a payment"); one the catalogue does not know is shown by its name. */
  function actions(value: unknown): Html {
    if (!Array.isArray(value) || value.length === 0) return list(value);
    return html`<ul>${value.map((action) => html`<li>${typeof action === "string" ? (own(c.actions, action) ?? action) : renderValue(action, 1)}</li>`)}</ul>`;
  }

  /** A common member: arrays become bulleted lists, anything else is rendered as a value. */
  function list(value: unknown): Html {
    if (Array.isArray(value) && value.length > 0) return html`<ul>${value.map((item) => html`<li>${renderValue(item, 1)}</li>`)}</ul>`;
    return renderValue(value, 1);
  }

  function row(key: string, value: unknown, depth: number): Html {
    return html`<li>${c.labelled(html`<span class="key">${own(c.fields, key) ?? wordsOfName(key)}</span>`, renderValue(value, depth))}</li>`;
  }

  /** Any JSON value, as text or nested lists; money as money. */
  function renderValue(value: unknown, depth: number): Html {
    if (value === null || value === undefined) return html`<span class="muted">${t.common.none}</span>`;
    if (typeof value === "string") return html`${value}`;
    if (typeof value === "boolean") return html`${value ? t.common.yes : t.common.no}`;
    if (typeof value === "number" || typeof value === "bigint") return html`${String(value)}`;
    const money = moneyOf(value);
    if (money) return html`<span class="money">${formats.money(money.amount, money.currency)}</span>`;
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
