import { type Html, html } from "./html.ts";
import { page, type PageLanguage } from "./layout.ts";
import { describeError } from "../i18n/error-descriptions.ts";

export interface AuthorizationErrorPageView {
  /** The OAuth error code, e.g. `invalid_request`. */
  error: string;
  /** What went wrong, as the client was told (error_description). */
  description: string;
  /** The response's X-Request-Id, for a person to quote to support (it finds the request in the logs). */
  requestId?: string | undefined;
}

/**
 * Shown instead of redirecting when the redirect target cannot be trusted
 * (unknown client, redirect_uri not registered): the error stays at the provider.
 * The words come from the catalogue; a description it has no words for is
 * shown as sent, as a detail for the application's support.
 */
export function renderAuthorizationErrorPage(lang: PageLanguage, v: AuthorizationErrorPageView): string {
  const t = lang.t.errors;
  const title = v.error === "invalid_client" || v.error === "unauthorized_client" ? t.clientTitle : t.requestTitle;
  const said = describeError(lang.t, v.error, v.description);
  return page(
    lang,
    title,
    html`<h1>${title}</h1>
<div class="alert" role="alert"><p>${said.text}</p></div>
<p>${t.advice}</p>
<p class="muted">${t.errorCode}${lang.t.common.colon}<code>${v.error}</code></p>
${requestIdLine(lang, v.requestId)}
${!said.known && v.description ? html`<p class="muted">${t.details}${lang.t.common.colon}<code lang="en">${v.description}</code></p>` : ""}`,
  );
}

/** Any other error a browser reaches (no route, too large, unavailable): a title and what happened. */
export function renderErrorPage(lang: PageLanguage, v: { status: number; error: string; description: string; requestId?: string | undefined }): string {
  const t = lang.t.errors;
  const title =
    v.status === 404 ? t.notFound : v.status === 413 ? t.tooLarge : v.status === 503 ? t.unavailable : v.status >= 500 ? t.serverError : t.badRequest;
  const said = describeError(lang.t, v.error, v.description);
  return page(
    lang,
    title,
    html`<h1>${title}</h1><p>${said.text}</p>
${requestIdLine(lang, v.requestId)}
${!said.known && v.description ? html`<p class="muted">${t.details}${lang.t.common.colon}<code lang="en">${v.description}</code></p>` : ""}`,
  );
}

function requestIdLine(lang: PageLanguage, requestId: string | undefined): Html | "" {
  return requestId ? html`<p class="muted" id="request-id">${lang.t.errors.requestId}${lang.t.common.colon}<code>${requestId}</code></p>` : "";
}
