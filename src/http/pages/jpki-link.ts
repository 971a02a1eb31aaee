import { formatsFor } from "../i18n/format.ts";
import { html } from "./html.ts";
import { scripts, signingWays, type JpkiFormView } from "./jpki-sign.ts";
import { page, type PageLanguage } from "./layout.ts";

export interface LinkedCertificateView {
  /** The provider's id of the certificate: what the remove button names (no certificate content). */
  certificateId: string;
  type: string;
  linkedAt: number;
  expiresAt: number;
  /** renewSoon: still valid, within the three months before it ends, when renewal opens. */
  state: "good" | "renewSoon" | "revoked" | "expired";
}

export interface JpkiLinkPageView extends JpkiFormView {
  userLogin: string;
  links: LinkedCertificateView[];
  /** Where a link's remove button posts to. */
  removeAction: string;
  /** Shown after a certificate was linked or removed. */
  notice?: "linked" | "alreadyLinked" | "removed" | undefined;
}

/** The signed-in user's linked certificates (no certificate content: type, dates, status), a way to remove each, and the form to link one. */
export function renderJpkiLinkPage(lang: PageLanguage, v: JpkiLinkPageView): string {
  const s = lang.t.jpki;
  const formats = formatsFor(lang.locale, lang.timeZone);
  const typeOf = (type: string) => s.certificateTypes[type] ?? type;
  return page(
    lang,
    s.linkTitle,
    html`<h1>${s.linkTitle}</h1>
<p class="lead">${s.linkLead}</p>
<p class="muted">${lang.t.common.signedInAs(v.userLogin)}</p>
${v.notice ? html`<div class="notice" role="status" data-notice="${v.notice}"><p>${s[v.notice]}</p></div>` : ""}
${
  v.links.length === 0
    ? html`<p id="no-links">${s.noLinks}</p>`
    : html`<table id="links"><caption>${s.linkedCaption}</caption>
<thead><tr><th scope="col">${s.typeColumn}</th><th scope="col">${s.statusColumn}</th><th scope="col">${s.actionsColumn}</th></tr></thead>
<tbody>${v.links.map(
        // Three columns, the dates under the status: five do not fit a phone.
        (l) => html`<tr data-state="${l.state}"><td>${typeOf(l.type)}</td>
<td><span class="state">${s.states[l.state]}</span>${l.state === "renewSoon" ? html`<span class="muted dates">${s.renewHint}</span>` : ""}<span class="muted dates">${s.linkedAtColumn}${lang.t.common.colon}${formats.dateTime(l.linkedAt)}</span><span class="muted dates">${s.expiresColumn}${lang.t.common.colon}${formats.dateTime(l.expiresAt)}</span></td>
<td><form method="post" action="${v.removeAction}" class="remove"><input type="hidden" name="csrf" value="${v.csrfToken}"><input type="hidden" name="certificate_id" value="${l.certificateId}"><button type="submit" class="button secondary" aria-label="${s.removeLabel(typeOf(l.type))}">${s.remove}</button></form></td></tr>`,
      )}</tbody></table>`
}
<h2>${s.linkHeading}</h2>
${signingWays(lang.t, v)}`,
    scripts(v),
  );
}

/** Without a session there is nothing to link to: the way to sign in. */
export function renderJpkiSignInFirstPage(lang: PageLanguage, signIn: string): string {
  const s = lang.t.jpki;
  return page(lang, s.linkTitle, html`<h1>${s.linkTitle}</h1>
<div class="notice" role="status"><p>${s.signInFirst}</p></div>
<div class="actions"><a class="button primary" href="${signIn}" id="sign-in">${s.signIn}</a></div>`);
}
