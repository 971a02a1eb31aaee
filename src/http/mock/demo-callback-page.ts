import { type Html, html } from "../pages/html.ts";
import { page, type PageLanguage } from "../pages/layout.ts";

export interface DemoCallbackPageView {
  /** The query (or form) parameters the relying party received. */
  params: Record<string, string>;
  /** How to redeem a code by hand: the token endpoint, the redirect URI and where the client secret is kept. */
  redeem: { tokenEndpoint: string; redirectUri: string; clientId: string; secretFile: string };
}

const successFields = ["code", "state", "iss"] as const;
const failureFields = ["error", "error_description", "state", "iss"] as const;

/** The mock environment's demo relying party: shows what the authorization response carried. */
export function renderDemoCallbackPage(lang: PageLanguage, v: DemoCallbackPageView): string {
  const t = lang.t.demo;
  const params = v.params;
  const failed = has(params, "error") || !has(params, "code");
  const fields: readonly string[] = failed ? failureFields : successFields;
  const shown = new Set(fields);
  // ui_locales is the language switch's, never part of an authorization response.
  const extra = Object.keys(params).filter((key) => !shown.has(key) && key !== "ui_locales");
  const label = (key: string) => (Object.hasOwn(t.labels, key) ? t.labels[key]! : key);
  const title = failed ? t.failed : t.succeeded;
  return page(
    lang,
    title,
    html`<h1>${title}</h1>
<p class="muted">${t.intro}</p>
${
  failed
    ? html`<div class="alert" role="alert"><p>${has(params, "error") ? t.providerError(params.error!) : t.neither}</p></div>`
    : html`<div class="notice" role="status"><p>${t.issued}</p></div>`
}
${failed || !codePattern.test(params.code!) ? "" : redeemHint(lang, v.redeem, params.code!)}
<table>
<caption>${t.parameters}</caption>
<tbody>
${fields.map((key) => row(lang, key, label(key), params))}
${extra.map((key) => row(lang, key, label(key), params))}
</tbody>
</table>`,
  );
}

/**
 * Only codes shaped like ours go into a command meant to be pasted into a
 * shell: anyone can link to this page with a crafted `code`.
 */
const codePattern = /^[A-Za-z0-9_-]{20,128}$/;

/** A curl command that redeems the code within its 60 seconds (add code_verifier if the request used PKCE). */
function redeemHint(lang: PageLanguage, r: DemoCallbackPageView["redeem"], code: string): Html {
  const command = `curl -u ${r.clientId}:$(cat ${r.secretFile}) -d grant_type=authorization_code -d code=${code} -d redirect_uri=${r.redirectUri} ${r.tokenEndpoint}`;
  return html`<p>${lang.t.demo.redeem}</p>
<pre><code>${command}</code></pre>`;
}

function has(params: Record<string, string>, key: string): boolean {
  return Object.hasOwn(params, key) && params[key] !== "";
}

/** Response values are the protocol's: error_description is English by the specification, whatever the page's language. */
const englishValues = new Set(["error_description"]);

function row(lang: PageLanguage, key: string, label: string, params: Record<string, string>): Html {
  const value = Object.hasOwn(params, key) ? params[key] : undefined;
  const cell =
    value === undefined || value === "" ? html`<span class="muted">${lang.t.demo.notReturned}</span>` : englishValues.has(key) ? html`<span lang="en">${value}</span>` : value;
  return html`<tr><th scope="row">${label}${label === key ? "" : html`<span class="muted"><code>${key}</code></span>`}</th><td>${cell}</td></tr>`;
}
