import type { OutOfReach } from "../../domain/oidc/jpki/out-of-reach.ts";
import { html } from "./html.ts";
import { page, type PageLanguage } from "./layout.ts";

export interface UnreachablePageView {
  /** Where the form posts to (back to the application). */
  action: string;
  csrfToken: string;
  clientName: string;
  userLogin: string;
  /** The level the application asked for, in words when the catalogue has them. */
  requiredAcr: string;
  why: OutOfReach;
  /** Where the user links a (new) certificate; only when one would reach the level. */
  linkCertificate?: string | undefined;
  /** This page again: the flow decides anew (after a certificate was linked). */
  tryAgain: string;
}

/** The id of the page's form. */
export const unreachableFormId = "unreachable-form";

/**
 * The level the application needs is out of the user's reach (decision flow
 * row 4): what happened, what can still work, and the way back to the
 * application, which then gets unmet_authentication_requirements. No sign-in
 * form: nothing typed here could succeed.
 */
export function renderUnreachablePage(lang: PageLanguage, v: UnreachablePageView): string {
  const t = lang.t.unreachable;
  const levels = lang.t.reauth.acrLevels;
  const level = Object.hasOwn(levels, v.requiredAcr) ? levels[v.requiredAcr as keyof typeof levels] : v.requiredAcr;
  const renew = v.why === "signature_revoked" || v.why === "authentication_revoked" || v.why === "expired";
  return page(
    lang,
    t.title,
    html`<h1>${t.title}</h1>
<p class="lead">${t.lead(v.clientName, level)}</p>
<p class="muted">${lang.t.common.signedInAs(v.userLogin)}</p>
<div class="alert" role="alert" id="why" data-reason="${v.why}"><p>${t.why[v.why]}</p></div>
${
  v.linkCertificate
    ? html`<h2>${t.whatToDo}</h2>
${renew ? html`<p>${t.reissue}</p>` : ""}
<ul class="reasons">
<li><a href="${v.linkCertificate}">${renew ? t.linkNew : t.linkCard}</a></li>
<li><a href="${v.tryAgain}">${t.tryAgain}</a></li>
</ul>`
    : ""
}
<form method="post" action="${v.action}" id="${unreachableFormId}">
<input type="hidden" name="csrf" value="${v.csrfToken}">
<div class="actions"><button type="submit" name="return" value="yes" class="button primary">${t.returnToApp}</button></div>
</form>
<p class="muted footnote">${t.returnNote(v.clientName)}</p>`,
  );
}
