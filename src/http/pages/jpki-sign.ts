import type { Messages } from "../i18n/messages/en.ts";
import { type Html, html } from "./html.ts";
import { cancelForm } from "./cancel.ts";
import { page, type PageLanguage } from "./layout.ts";
import { signRequestScriptPath } from "./jpki-phone.ts";
import type { PageHint } from "../page-hints.ts";

/** The form that takes a signed challenge: on the step-up, sign-in and linking pages. */
export interface JpkiFormView {
  action: string;
  csrfToken: string;
  challenge: string;
  /** What the card signs (see challengeText). */
  challengeText: string;
  /** The button's words: continue, or link the certificate. */
  submit: "submit" | "linkSubmit";
  /** A refused attempt: its code (data-error) and message. */
  error?: { code: string; message: string | Html } | undefined;
  /** The certificate pasted before a refusal, given back so it need not be pasted again (it is public). */
  certificate?: string | undefined;
  /** A section an extension shows beside the form (the mock card in mock mode; see PageHints). */
  hint?: PageHint | undefined;
  /** On an interaction's pages: where cancelling posts to (back to the application with access_denied). */
  cancelAction?: string | undefined;
  /** Signing with a phone (phoneSignSection), or the 基本4情報 notice before it; the form above is then the developers' way. */
  phone?: Html | undefined;
  /** The error is about the phone's answer, not about what was pasted: shown above everything, no field marked. */
  errorFromPhone?: boolean | undefined;
}

export interface JpkiStepUpPageView extends JpkiFormView {
  clientName: string;
  userLogin: string;
  /** The level asked for, as the ACR policy names it. */
  requiredAcr: string;
  /** Only a signature certificate will do (the level needs it). */
  needsSignatureCertificate: boolean;
  /** The decision flow's reasons (prompt_login, max_age, acr), put in words by the catalogue. */
  reasons: string[];
}

export interface JpkiSignInPageView extends JpkiFormView {
  clientName: string;
  /** The same interaction's password sign-in page. */
  passwordSignIn: string;
}

/** The copy button's script, served from this origin on every JPKI page. */
export const copyScriptPath = "/assets/copy.js";

/** Step-up with the card: the signed-in user signs a challenge bound to this interaction. */
export function renderJpkiStepUpPage(lang: PageLanguage, v: JpkiStepUpPageView): string {
  const { jpki: s, reauth, common } = lang.t;
  const level = Object.hasOwn(reauth.acrLevels, v.requiredAcr) ? reauth.acrLevels[v.requiredAcr as keyof typeof reauth.acrLevels] : v.requiredAcr;
  const reasons = v.reasons.filter((r) => r !== "").map((r) => (Object.hasOwn(reauth.reasons, r) ? reauth.reasons[r as keyof typeof reauth.reasons] : r));
  return page(
    lang,
    s.stepUpTitle,
    html`<h1>${s.stepUpTitle}</h1>
<p class="lead">${s.stepUpLead(v.clientName, level)}</p>
<p class="muted">${common.signedInAs(v.userLogin)}</p>
<p>${v.needsSignatureCertificate ? s.signatureCertificateNeeded : s.userAuthenticationCertificateNeeded}</p>
${reasons.length > 0 ? html`<p>${reauth.because}</p>
<ul class="reasons">${reasons.map((r) => html`<li>${r}</li>`)}</ul>` : ""}
${signingWays(lang.t, v)}
<p class="footnote"><a href="/account/jpki">${s.manageLinks}</a></p>
${v.cancelAction ? cancelForm(lang.t, v.cancelAction, v.csrfToken) : ""}`,
    scripts(v),
  );
}

/** Sign-in with the card: the certificate's link says who signs in. */
export function renderJpkiSignInPage(lang: PageLanguage, v: JpkiSignInPageView): string {
  const s = lang.t.jpki;
  return page(
    lang,
    s.signInTitle,
    html`<h1>${s.signInTitle}</h1>
<p class="lead">${s.signInLead(v.clientName)}</p>
${signingWays(lang.t, v)}
<p class="footnote"><a href="${v.passwordSignIn}" id="password-sign-in">${s.signInWithPassword}</a></p>
${v.cancelAction ? cancelForm(lang.t, v.cancelAction, v.csrfToken) : ""}`,
    scripts(v),
  );
}

export function scripts(v: { hint?: PageHint | undefined; phone?: Html | undefined }): string[] {
  return [copyScriptPath, ...(v.phone ? [signRequestScriptPath] : []), ...(v.hint?.scripts ?? [])];
}

/** The phone's way first (with its refusal above it), then pasting a signature, the developers' way. */
export function signingWays(t: Messages, v: JpkiFormView): Html {
  if (!v.phone) return jpkiForm(t, v);
  const phoneError = v.errorFromPhone ? v.error : undefined;
  return html`${phoneError ? errorAlert(phoneError) : ""}${v.phone}
<h2 id="paste-heading">${t.jpki.phone.developers}</h2>
${jpkiForm(t, { ...v, error: phoneError ? undefined : v.error })}`;
}

function errorAlert(error: { code: string; message: string | Html }): Html {
  return html`<div class="alert" role="alert" id="form-error" data-error="${error.code}"><p>${error.message}</p></div>`;
}

/** Which field a refusal is about, by its code: marked invalid (aria-invalid) and described by the alert. */
function invalidField(code: string | undefined): "certificate" | "signature" | undefined {
  if (code === undefined) return undefined;
  if (code.startsWith("certificate_")) return "certificate";
  if (code.startsWith("signature_") || code.startsWith("challenge_")) return "signature";
  return undefined;
}

/**
 * The challenge, the two fields the signing app fills, and an extension's
 * hint between them (the mock card). The form is `novalidate`: an empty
 * field is refused by the page, in its language, as a bad one is.
 */
export function jpkiForm(t: Messages, v: JpkiFormView): Html {
  const s = t.jpki;
  const invalid = invalidField(v.error?.code);
  const describedBy = (field: "certificate" | "signature") => (invalid === field ? `${field}-hint form-error` : `${field}-hint`);
  const invalidAttr = (field: "certificate" | "signature") => (invalid === field ? html` aria-invalid="true"` : "");
  // A refusal about a field stands just above it: the field takes the focus, and the browser scrolls to it, past
  // the instructions, the text to sign and the mock card; at the top of the page the words went out of sight.
  const alert = v.error ? errorAlert(v.error) : "";
  const alertAbove = (field: "certificate" | "signature") => (invalid === field ? alert : "");
  return html`${invalid ? "" : alert}
<p>${s.howTo}</p>
<div class="field">
<label for="challenge-text">${s.challengeLabel}</label>
<textarea id="challenge-text" class="challenge" rows="3" readonly spellcheck="false" aria-describedby="challenge-hint">${v.challengeText}</textarea>
<span class="hint" id="challenge-hint">${s.challengeHint}</span>
<div class="copy"><button type="button" class="button secondary" data-copy="challenge-text" data-copied="${s.copied}" hidden>${s.copy}</button><span class="hint" role="status" id="copy-status"></span></div>
</div>
${v.hint?.section ?? ""}
<form method="post" action="${v.action}" id="jpki-form" novalidate>
<input type="hidden" name="csrf" value="${v.csrfToken}">
<input type="hidden" name="method" value="jpki">
<input type="hidden" name="challenge" value="${v.challenge}">
${alertAbove("certificate")}<div class="field">
<label for="certificate">${s.certificateLabel}</label>
<textarea id="certificate" name="certificate" rows="4" required spellcheck="false" aria-describedby="${describedBy("certificate")}"${invalidAttr("certificate")}${invalid === "certificate" ? html` autofocus` : ""}>${v.certificate ?? ""}</textarea>
<span class="hint" id="certificate-hint">${s.certificateHint}</span>
</div>
${alertAbove("signature")}<div class="field">
<label for="signature">${s.signatureLabel}</label>
<input type="text" id="signature" name="signature" required spellcheck="false" autocomplete="off" autocapitalize="none" class="mono" aria-describedby="${describedBy("signature")}"${invalidAttr("signature")}${invalid === "signature" ? html` autofocus` : ""}>
<span class="hint" id="signature-hint">${s.signatureHint}</span>
</div>
<div class="actions"><button type="submit" class="button primary">${s[v.submit]}</button></div>
</form>`;
}
