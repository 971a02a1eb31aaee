import { html } from "./html.ts";
import { page } from "./layout.ts";

export interface AuthorizationErrorPageView {
  /** The OAuth error code, e.g. `invalid_request`. */
  error: string;
  /** What went wrong, in words. */
  description: string;
}

/**
 * Shown instead of redirecting when the redirect target cannot be trusted
 * (unknown client, redirect_uri not registered): the error stays at the provider.
 */
export function renderAuthorizationErrorPage(v: AuthorizationErrorPageView): string {
  const title = v.error === "invalid_client" || v.error === "unauthorized_client"
    ? "This application can't sign you in"
    : "This sign-in request can't be completed";
  return page(
    title,
    html`<h1>${title}</h1>
<div class="alert" role="alert"><p>${v.description}</p></div>
<p>Return to the application and try again. If the problem continues, contact the application's support and mention the error code below.</p>
<p class="muted">Error code: <code>${v.error}</code></p>`,
  );
}
