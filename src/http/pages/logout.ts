import { html } from "./html.ts";
import { page, type PageLanguage } from "./layout.ts";

export interface LogoutPageView {
  /** The application that asked, when known. */
  clientName?: string;
  /** Who is signed in (and would be signed out). */
  userLogin?: string | undefined;
  /** Where "stay signed in" leads: the home page (the post_logout_redirect_uri would tell the application the user left). */
  stayHref: string;
  /** Carried to the confirming POST (the CSRF token among them). */
  hidden: Record<string, string>;
  /** Why the page is shown again. */
  error?: string;
}

/** The end-session confirmation: signing out needs the user's click, never just a link. */
export function renderLogoutPage(lang: PageLanguage, v: LogoutPageView): string {
  const t = lang.t.logout;
  return page(
    lang,
    t.title,
    html`<h1>${t.title}</h1>
${v.error ? html`<div class="alert" role="alert"><p>${v.error}</p></div>` : ""}
<p class="lead">${v.clientName ? t.asks(v.clientName) : ""}${t.question}</p>
${v.userLogin ? html`<p class="muted">${lang.t.common.signedInAs(v.userLogin)}</p>` : ""}
<form method="post" action="/auth/logout">
${Object.entries(v.hidden).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<input type="hidden" name="confirm" value="yes">
<div class="actions">
<button type="submit" class="button primary">${t.submit}</button>
<a class="button secondary" href="${v.stayHref}" id="stay-signed-in">${t.stay}</a>
</div>
</form>`,
  );
}

export function renderSignedOutPage(lang: PageLanguage): string {
  const t = lang.t.logout;
  return page(lang, t.signedOutTitle, html`<h1>${t.signedOutHeading}</h1><p class="lead">${t.signedOutLead}</p>`);
}
