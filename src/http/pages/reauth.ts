import { type Html, html } from "./html.ts";
import { page } from "./layout.ts";

export interface ReauthPageView {
  /** Where the form posts to. */
  action: string;
  csrfToken: string;
  clientName: string;
  /** The signed-in user who confirms their identity. */
  userLogin: string;
  /** A human label of the level asked for, e.g. "High". */
  requiredAcrLabel: string;
  needsPassword: boolean;
  needsOtp: boolean;
  /** Why a new authentication is needed, in words, e.g. "you signed in more than 5 minutes ago". */
  reasons: string[];
  /** A failed attempt, shown as an alert. */
  error?: string;
  /** The field the error is about; only it is marked invalid. Without it, an error marks every field. */
  invalidField?: "password" | "otp";
  /**
   * Mock environment only. Either the sentence to show or just the current
   * code, which is then shown as "Mock environment: the current code is …".
   */
  mockOtpHint?: string;
}

/** The step-up page: asks the signed-in user for the methods that reach the required level, and says why. */
export function renderReauthPage(v: ReauthPageView): string {
  const hasError = v.error !== undefined && v.error !== "";
  const passwordInvalid = hasError && v.invalidField !== "otp";
  const otpInvalid = hasError && v.invalidField !== "password";
  const reasons = v.reasons.filter((r) => r !== "");
  const otpDescribedBy = ["otp-hint", otpInvalid ? "form-error" : undefined].filter(Boolean).join(" ");
  return page(
    "Confirm it's you",
    html`<h1>Confirm it's you</h1>
<p class="lead"><strong class="client">${v.clientName}</strong> asks you to confirm it's you${methodPhrase(v)} (level: ${v.requiredAcrLabel}).</p>
<p class="muted">Signed in as <strong>${v.userLogin}</strong></p>
${
  reasons.length > 0
    ? html`<p>This is needed because:</p>
<ul class="reasons">${reasons.map((r) => html`<li>${r}</li>`)}</ul>`
    : ""
}
${hasError ? html`<div class="alert" role="alert" id="form-error"><p>${v.error}</p></div>` : ""}
${v.mockOtpHint && v.needsOtp ? html`<div class="mock" role="note"><p>${mockHintText(v.mockOtpHint)}</p></div>` : ""}
<form method="post" action="${v.action}">
<input type="hidden" name="csrf" value="${v.csrfToken}">
${
  v.needsPassword
    ? html`<input type="text" autocomplete="username" value="${v.userLogin}" hidden readonly>
<div class="field">
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required autofocus${attr("aria-invalid", passwordInvalid ? "true" : undefined)}${attr("aria-describedby", passwordInvalid ? "form-error" : undefined)}>
</div>`
    : ""
}
${
  v.needsOtp
    ? html`<div class="field">
<label for="otp">One-time code</label>
<input type="text" id="otp" name="otp" class="otp" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" minlength="6" maxlength="6" required${v.needsPassword ? "" : html` autofocus`}${attr("aria-invalid", otpInvalid ? "true" : undefined)} aria-describedby="${otpDescribedBy}">
<span class="hint" id="otp-hint">The 6-digit code shown in your authenticator app.</span>
</div>`
    : ""
}
<div class="actions"><button type="submit" class="button primary">Continue</button></div>
</form>`,
  );
}

function methodPhrase(v: { needsPassword: boolean; needsOtp: boolean }): string {
  if (v.needsPassword && v.needsOtp) return " with your password and a one-time code from your authenticator app";
  if (v.needsOtp) return " with a one-time code from your authenticator app";
  if (v.needsPassword) return " with your password";
  return "";
}

function mockHintText(hint: string): Html {
  return /^[0-9]+$/.test(hint) ? html`Mock environment: the current code is <strong>${hint}</strong>` : html`${hint}`;
}

function attr(name: string, value: string | undefined): Html | "" {
  return value === undefined ? "" : html` ${name}="${value}"`;
}
