import type { Messages } from "../i18n/catalogue.ts";
import { type Html, html } from "./html.ts";

/**
 * 「キャンセル／アプリに戻る」: a form of its own, placed after the page's main
 * form, so that Enter in a field of the main form never presses it. It ends
 * the interaction and returns access_denied to the application.
 */
export function cancelForm(t: Messages, action: string, csrfToken: string): Html {
  return html`<form method="post" action="${action}" class="cancel" id="cancel-form">
<input type="hidden" name="csrf" value="${csrfToken}">
<button type="submit" class="button secondary">${t.common.cancel}</button>
</form>`;
}
