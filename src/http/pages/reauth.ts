import { type Html, html } from "./html.ts";
import { cancelForm } from "./cancel.ts";
import { page, type PageLanguage } from "./layout.ts";
import { maxPasswordLength } from "./login.ts";
import { formatsFor } from "../i18n/format.ts";
import { passkeyScripts } from "./passkey-script.ts";

export interface ReauthPageView {
  /** Where the form posts to. */
  action: string;
  /** Where cancelling posts to (back to the application with access_denied). */
  cancelAction: string;
  csrfToken: string;
  clientName: string;
  /** The signed-in user who confirms their identity. */
  userLogin: string;
  /** The level asked for, e.g. "high"; shown in words when the catalogue has them. */
  requiredAcr: string;
  needsPassword: boolean;
  needsOtp: boolean;
  /** Why a new authentication is needed: the decision flow's reasons (prompt_login, max_age, acr). */
  reasons: string[];
  /** When the session last authenticated (epoch ms), shown in the page's language. */
  lastAuthTime?: number;
  /** A failed attempt, shown as an alert. */
  error?: string;
  /** The field the error is about; only it is marked invalid. Without it, an error marks every field. */
  invalidField?: "password" | "otp";
  /**
   * Mock environment only. Either the sentence to show or just the current
   * code, which is then shown as "Mock environment: the current code is …".
   */
  mockOtpHint?: string;
  /** A passkey reaches the level too (passkeyStepUpSection); with neither field needed, it is the only way. */
  passkey?: Html | undefined;
  /** The same step-up with the JPKI card instead, when the card is the other way to the level. */
  cardInstead?: string | undefined;
}

/** The id of the page's form. */
export const reauthFormId = "reauth-form";

/** The step-up page: asks the signed-in user for the methods that reach the required level, and says why. */
export function renderReauthPage(lang: PageLanguage, v: ReauthPageView): string {
  const t = lang.t.reauth;
  const formats = formatsFor(lang.locale, lang.timeZone);
  const hasError = v.error !== undefined && v.error !== "";
  const passwordInvalid = hasError && v.invalidField !== "otp";
  const otpInvalid = hasError && v.invalidField !== "password";
  const reasons = v.reasons.filter((r) => r !== "").map((r) => (Object.hasOwn(t.reasons, r) ? t.reasons[r as keyof typeof t.reasons] : r));
  const typed = v.needsPassword || v.needsOtp;
  const methods = typed ? formats.and([...(v.needsPassword ? [t.methodPassword] : []), ...(v.needsOtp ? [t.methodOtp] : [])]) : v.passkey ? lang.t.passkeys.methodPasskey : "";
  const level = Object.hasOwn(t.acrLevels, v.requiredAcr) ? t.acrLevels[v.requiredAcr as keyof typeof t.acrLevels] : v.requiredAcr;
  const otpDescribedBy = ["otp-hint", otpInvalid ? "form-error" : undefined].filter(Boolean).join(" ");
  // Focus where the person has to type next: the field that was wrong, else the first one.
  const focusOtp = v.needsOtp && (!v.needsPassword || (hasError && v.invalidField === "otp"));
  return page(
    lang,
    t.title,
    html`<h1>${t.title}</h1>
<p class="lead">${t.lead(v.clientName, methods, level)}</p>
<p class="muted">${lang.t.common.signedInAs(v.userLogin)}</p>
${v.lastAuthTime === undefined ? "" : html`<p class="muted">${t.lastSignIn(formats.dateTime(v.lastAuthTime))}</p>`}
${
  reasons.length > 0
    ? html`<p>${t.because}</p>
<ul class="reasons">${reasons.map((r) => html`<li>${r}</li>`)}</ul>`
    : ""
}
${hasError ? html`<div class="alert" role="alert" id="form-error"><p>${v.error}</p></div>` : ""}
${v.mockOtpHint && v.needsOtp ? html`<div class="mock" role="note"><p>${mockHintText(lang, v.mockOtpHint)}</p></div>` : ""}
${typed ? html`<form method="post" action="${v.action}" id="${reauthFormId}" novalidate>
<input type="hidden" name="csrf" value="${v.csrfToken}">
${
  v.needsPassword
    ? html`<input type="text" autocomplete="username" value="${v.userLogin}" hidden readonly>
<div class="field">
<label for="password">${t.password}</label>
<input type="password" id="password" name="password" autocomplete="current-password" maxlength="${maxPasswordLength}" required${focusOtp ? "" : html` autofocus`}${attr("aria-invalid", passwordInvalid ? "true" : undefined)}${attr("aria-describedby", passwordInvalid ? "form-error" : undefined)}>
</div>`
    : ""
}
${
  v.needsOtp
    ? html`<div class="field">
<label for="otp">${t.otp}</label>
<input type="text" id="otp" name="otp" class="otp" inputmode="numeric" autocomplete="one-time-code" maxlength="8" required${focusOtp ? html` autofocus` : ""}${attr("aria-invalid", otpInvalid ? "true" : undefined)} aria-describedby="${otpDescribedBy}">
<span class="hint" id="otp-hint">${t.otpHint}</span>
</div>`
    : ""
}
<div class="actions"><button type="submit" class="button primary">${t.submit}</button></div>
</form>` : ""}
${v.passkey ?? ""}
${v.cardInstead ? html`<p class="footnote"><a href="${v.cardInstead}" id="card-instead">${lang.t.passkeys.useCardInstead}</a></p>` : ""}
${cancelForm(lang.t, v.cancelAction, v.csrfToken)}`,
    v.passkey ? passkeyScripts : [],
  );
}

function mockHintText(lang: PageLanguage, hint: string): Html {
  return /^[0-9]+$/.test(hint) ? lang.t.reauth.mockOtp(hint) : html`${hint}`;
}

function attr(name: string, value: string | undefined): Html | "" {
  return value === undefined ? "" : html` ${name}="${value}"`;
}
