/** The WebAuthn library's browser half, from this origin (no CDN: the pages' CSP allows 'self' scripts only). */
export const webauthnLibraryPath = "/assets/webauthn.js";
/** The passkey forms' own script (below). */
export const passkeyScriptPath = "/assets/passkeys.js";
/** The scripts of a page with a passkey form, in order: the library defines what the form's script uses. */
export const passkeyScripts: readonly string[] = [webauthnLibraryPath, passkeyScriptPath];

/**
 * The passkey forms' script, served from this origin beside the WebAuthn
 * library's browser half (@simplewebauthn/browser, /assets/webauthn.js):
 * the pages' CSP allows 'self' scripts, never inline ones.
 *
 * A form with data-passkey ("sign-in", "step-up" or "register") carries its
 * ceremony's options (data-options, JSON made by the server with a challenge
 * bound to this page) and its messages (data-msg-*); the script runs the
 * ceremony when the form is submitted (its button, or Enter in its name
 * field), puts the browser's answer in the hidden field `response` and
 * sends the form, so the server decides and the page moves on as after any
 * form. A cancelled ceremony stays on the page with a message. The sign-in
 * form also starts a conditional request as the page loads, so the browser
 * can offer passkeys in the username field's suggestions (not after a
 * refusal of a passkey: then the page waits for its button).
 *
 * Passkey forms are hidden until this script shows them; without WebAuthn
 * the element named by data-unsupported is shown instead.
 */
export const passkeyScript = `"use strict";
(() => {
  const lib = window.SimpleWebAuthnBrowser;
  for (const form of document.querySelectorAll("form[data-passkey]")) {
    const kind = form.dataset.passkey;
    const status = document.getElementById(form.dataset.status);
    const field = form.querySelector("input[name=response]");
    const button = form.querySelector("button[type=submit]");
    const say = (text) => {
      if (!status) return;
      status.textContent = text;
      status.hidden = false;
    };
    const unsupported = document.getElementById(form.dataset.unsupported);
    if (!lib || !lib.browserSupportsWebAuthn()) {
      if (unsupported) unsupported.hidden = false;
      continue;
    }
    if (unsupported) unsupported.hidden = true;
    const section = form.closest("[data-passkey-section]") || form;
    section.hidden = false;
    const options = JSON.parse(form.dataset.options);
    let sending = false;
    const send = (answer) => {
      sending = true;
      field.value = JSON.stringify(answer);
      form.submit();
    };
    const failed = (error) => {
      if (error && error.code === "ERROR_CEREMONY_ABORTED") return;
      if (error && error.code === "ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED") return say(form.dataset.msgRegistered);
      if (error && (error.name === "NotAllowedError" || error.name === "AbortError")) return say(form.dataset.msgCancelled);
      say(form.dataset.msgFailed);
    };
    form.addEventListener("submit", (event) => {
      if (sending) return;
      event.preventDefault();
      if (status) status.hidden = true;
      const nameField = form.querySelector("input[name=name]");
      if (nameField && nameField.value.trim() === "") {
        say(form.dataset.msgName);
        nameField.focus();
        return;
      }
      if (button) button.disabled = true;
      const ceremony = kind === "register" ? lib.startRegistration({ optionsJSON: options }) : lib.startAuthentication({ optionsJSON: options });
      ceremony.then(send, (error) => {
        if (button) button.disabled = false;
        failed(error);
      });
    });
    // After a refused passkey the page waits for the button: an autofilled request would only be refused again.
    if (kind === "sign-in" && !document.getElementById("passkey-error")) {
      lib.browserSupportsWebAuthnAutofill().then((yes) => {
        if (yes && !sending) lib.startAuthentication({ optionsJSON: options, useBrowserAutofill: true }).then(send, () => {});
      });
    }
  }
})();
`;
