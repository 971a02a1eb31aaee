import { html } from "./html.ts";
import { page, type PageLanguage } from "./layout.ts";

export interface InteractionEndedPageView {
  why: "expired" | "completed";
  clientName: string;
  /** The way back: the application's redirect_uri with the error (see InteractionEnded). */
  returnTo: string;
}

/** A sign-in that has ended, reached again: what happened, and the one way on, back to the application to start again. */
export function renderInteractionEndedPage(lang: PageLanguage, v: InteractionEndedPageView): string {
  const t = lang.t.ended;
  return page(
    lang,
    t.title,
    html`<h1>${t.title}</h1>
<div class="notice" role="status" data-reason="${v.why}"><p>${v.why === "expired" ? t.expired : t.completed}</p></div>
<p class="lead">${t.startAgain(v.clientName)}</p>
<div class="actions"><a class="button primary" href="${v.returnTo}" id="return-to-app">${t.returnToApp}</a></div>`,
  );
}
