/**
 * Mock environment only: what a signing app does, in the page. The key and
 * certificate come from the page's #mock-card element; the script signs the
 * challenge text with WebCrypto (RSASSA-PKCS1-v1_5 over its SHA-256, as the
 * card does), fills the form and submits it. It has no words of its own: a
 * failure shows the page's hidden #mock-card-failed text.
 */
/** Where the script is served, from this origin (see withPageScripts). */
export const mockCardScriptPath = "/assets/mock-card.js";

export const mockCardScript = `"use strict";
(() => {
  const card = document.getElementById("mock-card");
  const button = document.getElementById("mock-card-sign");
  const form = document.getElementById("jpki-form");
  if (!card || !button || !form || !window.crypto || !window.crypto.subtle) return;
  const der = (pem) => Uint8Array.from(atob(pem.replace(/-----[^-]+-----|\\s+/g, "")), (c) => c.charCodeAt(0));
  button.hidden = false;
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const key = await crypto.subtle.importKey("pkcs8", der(card.dataset.key), { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["sign"]);
      const text = new TextEncoder().encode(card.dataset.challengeText);
      const signature = new Uint8Array(await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key, text));
      form.elements.certificate.value = card.dataset.certificate;
      form.elements.signature.value = btoa(String.fromCharCode(...signature));
      form.submit();
    } catch {
      document.getElementById("mock-card-failed").hidden = false;
      button.disabled = false;
    }
  });
})();
`;
