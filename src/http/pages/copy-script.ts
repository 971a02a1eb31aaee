/**
 * The copy buttons of the JPKI pages: a button with data-copy="<id>" copies
 * the value of that field. Served from this origin (the JPKI pages' CSP allows
 * 'self' scripts, never inline ones). The buttons are hidden until this
 * script shows them, so a page without scripts offers none that cannot work.
 * It has no words of its own: the button carries its "copied" text.
 */
export const copyScript = `"use strict";
(() => {
  const status = document.getElementById("copy-status");
  for (const button of document.querySelectorAll("button[data-copy]")) {
    const field = document.getElementById(button.dataset.copy);
    if (!field) continue;
    button.hidden = false;
    button.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(field.value);
      } catch {
        field.focus();
        field.select();
        document.execCommand("copy");
      }
      if (status) status.textContent = button.dataset.copied;
    });
  }
})();
`;
