import { html } from "./html.ts";
import { page } from "./layout.ts";

export interface LogoutPageView {
  /** The application that asked, when known. */
  clientName?: string;
  /** Carried to the confirming POST (the CSRF token among them). */
  hidden: Record<string, string>;
  /** Why the page is shown again. */
  error?: string;
}

/** The end-session confirmation: signing out needs the user's click, never just a link. */
export function renderLogoutPage(v: LogoutPageView): string {
  return page(
    "Sign out",
    html`<h1>Sign out</h1>
${v.error ? html`<div class="alert" role="alert"><p>${v.error}</p></div>` : ""}
<p class="lead">${v.clientName ? html`<strong>${v.clientName}</strong> asks you to sign out. ` : ""}End your session on this device?</p>
<form method="post" action="/auth/logout">
${Object.entries(v.hidden).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<input type="hidden" name="confirm" value="yes">
<button type="submit" class="primary">Sign out</button>
</form>`,
  );
}

export function renderSignedOutPage(): string {
  return page("Signed out", html`<h1>You are signed out</h1><p class="lead">You can close this window.</p>`);
}
