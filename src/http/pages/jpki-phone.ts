import type { SignRequestCertificateKind } from "../../domain/oidc/jpki/sign-requests.ts";
import { formatsFor } from "../i18n/format.ts";
import { type Html, html } from "./html.ts";
import type { PageLanguage } from "./layout.ts";

/** A signing request as its page shows it. */
export interface PhoneSignView {
  /** The request's URL for the app: the QR code's content. */
  requestUrl: string;
  /** The same request as a link that opens a JPKI app on this phone. */
  appLink: string;
  qrCode: Html;
  bindingCode: string;
  certificateKind: SignRequestCertificateKind;
  expiresAt: number;
  requestId: string;
  /** Where the page's script asks how the request is doing (this browser only). */
  progressUrl: string;
  /** Where the continue button posts: the page's own form action. */
  action: string;
  csrfToken: string;
}

/** Where the waiting script is served from (this origin; see signRequestScript). */
export const signRequestScriptPath = "/assets/sign-request.js";

/**
 * The phone section of a JPKI page: on a computer the QR code, on a phone
 * the app link (by the screen's width), the binding code on both, and a
 * continue button that takes the app's answer. The script presses it when
 * the app has answered; without scripts the person does.
 */
export function phoneSignSection(lang: PageLanguage, v: PhoneSignView): Html {
  const s = lang.t.jpki.phone;
  const pin = v.certificateKind === "signature" ? s.signaturePassword : s.authenticationPin;
  return html`<section class="phone-sign" id="phone-sign" aria-labelledby="phone-sign-heading" data-progress="${v.progressUrl}"
 data-waiting="${s.waiting}" data-answered="${s.answered}" data-last-attempt="${s.lastPinAttempt}" data-certificate-kind="${v.certificateKind}">
<h2 id="phone-sign-heading">${s.heading}</h2>
<p class="on-computer">${s.scanLead}</p>
<div class="qr on-computer" id="sign-request-qr" data-content="${v.requestUrl}">${v.qrCode}</div>
<p class="on-phone">${s.appLinkLead}</p>
<p class="on-phone"><a class="button primary" id="sign-request-app-link" href="${v.appLink}">${s.openApp}</a></p>
<p><span class="muted" id="binding-code-label">${s.bindingCodeLabel}</span>
<strong class="binding-code" id="binding-code" aria-describedby="binding-code-label binding-code-hint">${v.bindingCode}</strong>
<span class="hint" id="binding-code-hint">${s.bindingCodeHint}</span></p>
<p>${pin}</p>
<p class="muted">${s.expires(formatsFor(lang.locale, lang.timeZone).time(v.expiresAt))}</p>
<form method="post" action="${v.action}" id="sign-request-form">
<input type="hidden" name="csrf" value="${v.csrfToken}">
<input type="hidden" name="sign_request" value="${v.requestId}">
<p class="hint" id="sign-request-hint">${s.continueHint}</p>
<div class="actions"><button type="submit" class="button primary" aria-describedby="sign-request-hint">${s.continue}</button></div>
<p class="hint" role="status" id="sign-request-status"></p>
</form>
</section>`;
}

/** Before a signature certificate is asked for: what it carries and what is done with it, and the button that agrees. */
export function basicInfoConsentSection(lang: PageLanguage, v: { clientName: string | undefined; action: string; csrfToken: string }): Html {
  const s = lang.t.jpki.basicInfo;
  return html`<section class="phone-sign" id="basic-info-consent" aria-labelledby="basic-info-heading">
<h2 id="basic-info-heading">${s.heading}</h2>
<p>${s.lead}</p>
<p>${s.use(v.clientName)}</p>
<p>${lang.t.jpki.phone.signaturePassword}</p>
<form method="post" action="${v.action}" id="basic-info-form">
<input type="hidden" name="csrf" value="${v.csrfToken}">
<input type="hidden" name="basic_info_consent" value="agree">
<div class="actions"><button type="submit" class="button primary">${s.consent}</button></div>
</form>
</section>`;
}

/**
 * The waiting page's script, served from this origin: it asks how the
 * request is doing every two seconds and, once the app has answered (or the
 * request has ended), submits the continue form, so the page goes on by
 * itself. It has no words of its own: they are on the section.
 */
export const signRequestScript = `"use strict";
(() => {
  const section = document.getElementById("phone-sign");
  const form = document.getElementById("sign-request-form");
  const status = document.getElementById("sign-request-status");
  if (!section || !form || !window.fetch) return;
  status.textContent = section.dataset.waiting;
  const ask = async () => {
    try {
      const reply = await fetch(section.dataset.progress, { credentials: "same-origin", cache: "no-store" });
      const progress = reply.ok ? await reply.json() : { state: "ended" };
      // The card has one PIN attempt left: the next wrong one locks it, and only the municipality unlocks it.
      if (progress.pin_attempts_remaining === 1) {
        status.textContent = section.dataset.lastAttempt;
        status.classList.add("warning");
      }
      if (progress.state !== "pending") {
        status.textContent = section.dataset.answered;
        form.submit();
        return;
      }
    } catch {
      // The network may come back: keep asking.
    }
    setTimeout(ask, 2000);
  };
  setTimeout(ask, 1000);
})();
`;
