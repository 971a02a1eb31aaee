import { html } from "./html.ts";
import { jpkiForm, scripts, type JpkiFormView } from "./jpki-sign.ts";
import { jpkiStrings as s } from "./jpki-strings.ts";
import { page } from "./layout.ts";

export interface LinkedCertificateView {
  type: string;
  linkedAt: number;
  state: "good" | "revoked" | "expired";
}

export interface JpkiLinkPageView extends JpkiFormView {
  userLogin: string;
  links: LinkedCertificateView[];
  /** Shown after a certificate was linked. */
  notice?: string | undefined;
}

const stateWords = { good: s.statusGood, revoked: s.statusRevoked, expired: s.statusExpired };

/** The signed-in user's linked certificates (no certificate content: type, date, status) and the form to link one. */
export function renderJpkiLinkPage(v: JpkiLinkPageView): string {
  return page(
    s.linkTitle,
    html`<h1>${s.linkTitle}</h1>
<p class="lead">${s.linkLead}</p>
<p class="muted">${s.signedInAs} <strong>${v.userLogin}</strong></p>
${v.notice ? html`<div class="notice" role="status"><p>${v.notice}</p></div>` : ""}
${
  v.links.length === 0
    ? html`<p id="no-links">${s.noLinks}</p>`
    : html`<table id="links"><caption>${s.linkedCaption}</caption>
<thead><tr><th scope="col">${s.typeColumn}</th><th scope="col">${s.linkedAtColumn}</th><th scope="col">${s.statusColumn}</th></tr></thead>
<tbody>${v.links.map(
        (l) => html`<tr data-state="${l.state}"><td>${s.certificateTypes[l.type] ?? l.type}</td><td>${new Date(l.linkedAt).toISOString().slice(0, 10)}</td><td>${stateWords[l.state]}</td></tr>`,
      )}</tbody></table>`
}
<h2>${s.linkHeading}</h2>
${jpkiForm(v)}`,
    scripts(v),
  );
}

/** Without a session there is nothing to link to. */
export function renderJpkiSignInFirstPage(): string {
  return page(s.linkTitle, html`<h1>${s.linkTitle}</h1>
<div class="notice" role="status"><p>${s.signInFirst}</p></div>`);
}
