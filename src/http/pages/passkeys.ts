import type { PasskeyRow } from "../../domain/oidc/passkeys/model.ts";
import { formatsFor } from "../i18n/format.ts";
import { type Html, html } from "./html.ts";
import { page, type PageLanguage } from "./layout.ts";
import { passkeyScripts } from "./passkey-script.ts";

/** A passkey form: where it posts, its CSRF token, and the ceremony's options (JSON) for the page's script. */
export interface PasskeyFormView {
  action: string;
  csrfToken: string;
  options: unknown;
}

/** A refusal of the server, shown above the passkey form: its code (data-error) and words. */
export interface PasskeyRefusal {
  code: string;
  message: string;
}

/** The data attributes every passkey form carries: ceremony, options, and the script's messages in the page's language. */
function formAttributes(lang: PageLanguage, kind: "sign-in" | "step-up" | "register", options: unknown, status: string, unsupported: string): Html {
  const t = lang.t.passkeys;
  return html`data-passkey="${kind}" data-options="${JSON.stringify(options)}" data-status="${status}" data-unsupported="${unsupported}" data-msg-cancelled="${t.cancelled}" data-msg-failed="${t.failed}" data-msg-registered="${t.alreadyOnDevice}" data-msg-name="${t.nameMissing}"`;
}

/** Where the script says why a ceremony did not happen (cancelled, no WebAuthn): read out when it changes. */
function statusLine(id: string): Html {
  return html`<div class="notice" role="status" aria-live="polite" id="${id}" hidden></div>`;
}

function refusalAlert(refusal: PasskeyRefusal | undefined): Html | "" {
  return refusal ? html`<div class="alert" role="alert" id="passkey-error" data-error="${refusal.code}"><p>${refusal.message}</p></div>` : "";
}

/**
 * The login page's passkey way: a form of its own (Enter in the password
 * form never starts it; Tab reaches its button), hidden until the script
 * finds WebAuthn, with a message instead when it does not.
 */
export function passkeySignInSection(lang: PageLanguage, v: PasskeyFormView & { refusal?: PasskeyRefusal | undefined }): Html {
  const t = lang.t.passkeys;
  return html`<section class="passkey" aria-labelledby="passkey-heading">
<p class="divider" id="passkey-heading"><span>${t.or}</span></p>
${refusalAlert(v.refusal)}
${statusLine("passkey-status")}
<p class="muted" id="passkey-unsupported" hidden>${t.unsupported}</p>
<div data-passkey-section hidden>
<form method="post" action="${v.action}" id="passkey-form" ${formAttributes(lang, "sign-in", v.options, "passkey-status", "passkey-unsupported")}>
<input type="hidden" name="csrf" value="${v.csrfToken}">
<input type="hidden" name="response" value="">
<div class="actions"><button type="submit" class="button secondary" id="passkey-sign-in" aria-describedby="passkey-hint">${t.signIn}</button></div>
<span class="hint" id="passkey-hint">${t.signInHint}</span>
</form>
</div>
</section>`;
}

/**
 * The step-up page's passkey way. `only`: no other way is asked for, so its
 * button is the page's primary one and has the focus.
 */
export function passkeyStepUpSection(lang: PageLanguage, v: PasskeyFormView & { only: boolean; refusal?: PasskeyRefusal | undefined }): Html {
  const t = lang.t.passkeys;
  return html`<section class="passkey" aria-label="${t.stepUp}">
${v.only ? "" : html`<p class="divider"><span>${t.or}</span></p>`}
${refusalAlert(v.refusal)}
${statusLine("passkey-status")}
<p class="muted" id="passkey-unsupported" hidden>${t.unsupported}</p>
<div data-passkey-section hidden>
<form method="post" action="${v.action}" id="passkey-form" ${formAttributes(lang, "step-up", v.options, "passkey-status", "passkey-unsupported")}>
<input type="hidden" name="csrf" value="${v.csrfToken}">
<input type="hidden" name="method" value="passkey">
<input type="hidden" name="response" value="">
<div class="actions"><button type="submit" class="button ${v.only ? "primary" : "secondary"}" id="passkey-step-up"${v.only ? html` autofocus` : ""}>${t.stepUp}</button></div>
</form>
</div>
</section>`;
}

export interface AccountSecurityView {
  userLogin: string;
  passkeys: PasskeyRow[];
  csrfToken: string;
  removeAction: string;
  /** Adding: its form, or, when the session must be confirmed first, the level to confirm at and a passkey to confirm with. */
  add: ({ kind: "add" } & PasskeyFormView) | { kind: "confirm"; level: string; confirm?: PasskeyFormView | undefined };
  notice?: string | undefined;
  refusal?: PasskeyRefusal | undefined;
  /** The name typed before a refusal, given back. */
  name?: string | undefined;
  /** Other account pages. */
  certificatesHref: string;
}

/** /account/security: the user's passkeys, removing one (without scripts too), adding one (with WebAuthn). */
export function renderAccountSecurityPage(lang: PageLanguage, v: AccountSecurityView): string {
  const t = lang.t.passkeys;
  const formats = formatsFor(lang.locale, lang.timeZone);
  const rows = v.passkeys.map(
    (p) => html`<tr>
<th scope="row">${p.name}<span class="muted">${p.backupEligible ? t.synced : t.deviceBound}</span></th>
<td><span class="dates">${t.created(formats.dateTime(p.createdAt))}</span><span class="dates">${p.lastUsedAt === null ? t.neverUsed : t.lastUsed(formats.dateTime(p.lastUsedAt))}</span></td>
<td><form method="post" action="${v.removeAction}"><input type="hidden" name="csrf" value="${v.csrfToken}"><input type="hidden" name="credential_id" value="${p.credentialId}"><button type="submit" class="button secondary" aria-label="${t.removeLabel(p.name)}">${t.remove}</button></form></td>
</tr>`,
  );
  const level = (name: string) => (Object.hasOwn(lang.t.reauth.acrLevels, name) ? lang.t.reauth.acrLevels[name as keyof typeof lang.t.reauth.acrLevels] : name);
  return page(
    lang,
    t.securityTitle,
    html`<h1>${t.securityTitle}</h1>
<p class="lead">${t.securityLead}</p>
<p class="muted">${lang.t.common.signedInAs(v.userLogin)}</p>
${v.notice ? html`<div class="notice" role="status"><p>${v.notice}</p></div>` : ""}
${refusalAlert(v.refusal)}
${
  v.passkeys.length === 0
    ? html`<p id="no-passkeys">${t.none}</p>`
    : html`<table id="passkeys"><caption>${t.listCaption}</caption><tbody>${rows}</tbody></table>`
}
<h2 id="add-heading">${t.addHeading}</h2>
${v.add.kind === "add" ? addForm(lang, v.add, v.name) : confirmSection(lang, level(v.add.level), v.add.confirm)}
<p class="footnote"><a href="${v.certificatesHref}">${lang.t.home.certificates}</a></p>`,
    passkeyScripts,
  );
}

function addForm(lang: PageLanguage, form: PasskeyFormView, name: string | undefined): Html {
  const t = lang.t.passkeys;
  return html`${statusLine("passkey-status")}
<p id="passkey-unsupported">${t.needsScript}</p>
<form method="post" action="${form.action}" id="passkey-form" ${formAttributes(lang, "register", form.options, "passkey-status", "passkey-unsupported")}>
<input type="hidden" name="csrf" value="${form.csrfToken}">
<input type="hidden" name="response" value="">
<div class="field">
<label for="passkey-name">${t.nameLabel}</label>
<input type="text" id="passkey-name" name="name" maxlength="64" autocomplete="off" required aria-describedby="passkey-name-hint"${name ? html` value="${name}"` : ""}>
<span class="hint" id="passkey-name-hint">${t.nameHint}</span>
</div>
<div class="actions"><button type="submit" class="button primary" id="passkey-add">${t.add}</button></div>
</form>`;
}

function confirmSection(lang: PageLanguage, level: string, confirm: PasskeyFormView | undefined): Html {
  const t = lang.t.passkeys;
  return html`<p id="confirm-first">${t.confirmFirst(level)}</p>
${
  confirm
    ? html`${statusLine("passkey-status")}
<p class="muted" id="passkey-unsupported" hidden>${t.unsupported}</p>
<div data-passkey-section hidden>
<form method="post" action="${confirm.action}" id="passkey-form" ${formAttributes(lang, "step-up", confirm.options, "passkey-status", "passkey-unsupported")}>
<input type="hidden" name="csrf" value="${confirm.csrfToken}">
<input type="hidden" name="response" value="">
<div class="actions"><button type="submit" class="button primary" id="passkey-confirm">${t.confirmWithPasskey}</button></div>
</form>
</div>`
    : ""
}`;
}
