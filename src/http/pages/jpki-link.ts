import { formatsFor } from "../i18n/format.ts";
import { html } from "./html.ts";
import { jpkiForm, scripts, type JpkiFormView } from "./jpki-sign.ts";
import { page, type PageLanguage } from "./layout.ts";

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

/** The signed-in user's linked certificates (no certificate content: type, date, status) and the form to link one. */
export function renderJpkiLinkPage(lang: PageLanguage, v: JpkiLinkPageView): string {
  const s = lang.t.jpki;
  const formats = formatsFor(lang.locale, lang.timeZone);
  return page(
    lang,
    s.linkTitle,
    html`<h1>${s.linkTitle}</h1>
<p class="lead">${s.linkLead}</p>
<p class="muted">${lang.t.common.signedInAs(v.userLogin)}</p>
${v.notice ? html`<div class="notice" role="status"><p>${v.notice}</p></div>` : ""}
${
  v.links.length === 0
    ? html`<p id="no-links">${s.noLinks}</p>`
    : html`<table id="links"><caption>${s.linkedCaption}</caption>
<thead><tr><th scope="col">${s.typeColumn}</th><th scope="col">${s.linkedAtColumn}</th><th scope="col">${s.statusColumn}</th></tr></thead>
<tbody>${v.links.map(
        (l) => html`<tr data-state="${l.state}"><td>${s.certificateTypes[l.type] ?? l.type}</td><td>${formats.dateTime(l.linkedAt)}</td><td>${s.states[l.state]}</td></tr>`,
      )}</tbody></table>`
}
<h2>${s.linkHeading}</h2>
${jpkiForm(lang.t, v)}`,
    scripts(v),
  );
}

/** Without a session there is nothing to link to. */
export function renderJpkiSignInFirstPage(lang: PageLanguage): string {
  const s = lang.t.jpki;
  return page(lang, s.linkTitle, html`<h1>${s.linkTitle}</h1>
<div class="notice" role="status"><p>${s.signInFirst}</p></div>`);
}
