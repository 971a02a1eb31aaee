import { type Html, html } from "./html.ts";
import { cancelForm } from "./cancel.ts";
import { page, type PageLanguage } from "./layout.ts";
import { passkeyScripts } from "./passkey-script.ts";

export interface LoginPageView {
  /** Where the form posts to. */
  action: string;
  /** Where cancelling posts to (back to the application with access_denied); none outside an authorization request. */
  cancelAction?: string | undefined;
  csrfToken: string;
  /** The display name of the client that started the authorization request; none for the account pages' sign-in. */
  clientName?: string | undefined;
  /** Prefills the username (the `login_hint` parameter, or the name typed before a failed attempt). */
  loginHint?: string;
  /** A failed attempt, shown as an alert. */
  error?: string;
  /** Neutral information, e.g. that the session ended. */
  notice?: string;
  /** Where signing in with a JPKI card starts, for a user who linked one. */
  jpkiSignIn?: string;
  /** Signing in with a passkey (passkeySignInSection); the username field then also offers passkeys (conditional UI). */
  passkey?: Html | undefined;
}

/** The id of the page's form. */
export const loginFormId = "login-form";

/**
 * The longest username and password the fields take: far beyond any real
 * one, and short enough that the form, even in escaped non-ASCII text, stays
 * within the pages' 16 KiB form limit; past it a person got the bare
 * "request too large" page instead of the sign-in form's own answer.
 */
export const maxLoginLength = 256;
export const maxPasswordLength = 1024;

/**
 * The sign-in form shown when the user has no session. `novalidate`, as the
 * step-up's: an empty field is answered by the page in its own language
 * (login.missingFields), not by the browser in the browser's.
 */
export function renderLoginPage(lang: PageLanguage, v: LoginPageView): string {
  const t = lang.t.login;
  const hasError = v.error !== undefined && v.error !== "";
  const hasHint = v.loginHint !== undefined && v.loginHint !== "";
  const invalid = hasError ? "true" : undefined;
  const describedBy = hasError ? "form-error" : undefined;
  return page(
    lang,
    t.title,
    html`<h1>${t.title}</h1>
<p class="lead">${v.clientName === undefined ? t.accountLead : t.lead(v.clientName)}</p>
${v.notice ? html`<div class="notice" role="status"><p>${v.notice}</p></div>` : ""}
${hasError ? html`<div class="alert" role="alert" id="form-error"><p>${v.error}</p></div>` : ""}
<form method="post" action="${v.action}" id="${loginFormId}" novalidate>
<input type="hidden" name="csrf" value="${v.csrfToken}">
<div class="field">
<label for="login">${t.username}</label>
<input type="text" id="login" name="login" autocomplete="${v.passkey ? "username webauthn" : "username"}" autocapitalize="none" autocorrect="off" spellcheck="false" maxlength="${maxLoginLength}" required${attr("value", v.loginHint)}${attr("aria-invalid", invalid)}${attr("aria-describedby", describedBy)}${hasHint ? "" : html` autofocus`}>
</div>
<div class="field">
<label for="password">${t.password}</label>
<input type="password" id="password" name="password" autocomplete="current-password" maxlength="${maxPasswordLength}" required${attr("aria-invalid", invalid)}${attr("aria-describedby", describedBy)}${hasHint ? html` autofocus` : ""}>
</div>
<div class="actions"><button type="submit" class="button primary">${t.submit}</button></div>
</form>
${v.passkey ?? ""}
${v.jpkiSignIn ? html`<p class="footnote"><a href="${v.jpkiSignIn}" id="jpki-sign-in">${lang.t.jpki.signInWithCard}</a></p>` : ""}
${v.cancelAction ? cancelForm(lang.t, v.cancelAction, v.csrfToken) : ""}`,
    v.passkey ? passkeyScripts : [],
  );
}

/** ` name="value"` with the value escaped, or nothing when the value is absent. */
function attr(name: string, value: string | undefined): Html | "" {
  return value === undefined ? "" : html` ${name}="${value}"`;
}
