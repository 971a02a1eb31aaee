import { type Html, html } from "./html.ts";
import { page } from "./layout.ts";

export interface DemoCallbackPageView {
  /** The query (or form) parameters the relying party received. */
  params: Record<string, string>;
  /** How to redeem a code by hand: the token endpoint, the redirect URI and where the client secret is kept. */
  redeem: { tokenEndpoint: string; redirectUri: string; clientId: string; secretFile: string };
}

const successFields: ReadonlyArray<readonly [string, string]> = [
  ["code", "Authorization code"],
  ["state", "State"],
  ["iss", "Issuer"],
];

const failureFields: ReadonlyArray<readonly [string, string]> = [
  ["error", "Error"],
  ["error_description", "Description"],
  ["state", "State"],
  ["iss", "Issuer"],
];

/** Labels for parameters shown only when present. */
const knownLabels: Record<string, string> = { ...Object.fromEntries([...successFields, ...failureFields]), error_uri: "More information" };

/** The mock environment's demo relying party: shows what the authorization response carried. */
export function renderDemoCallbackPage(v: DemoCallbackPageView): string {
  const params = v.params;
  const failed = has(params, "error") || !has(params, "code");
  const fields = failed ? failureFields : successFields;
  const shown = new Set(fields.map(([key]) => key));
  const extra = Object.keys(params).filter((key) => !shown.has(key));
  const title = failed ? "Authorization failed" : "Authorization succeeded";
  return page(
    title,
    html`<h1>${title}</h1>
<p class="muted">This is the demo application of the mock environment. It shows the parameters the provider sent back to its redirect URI.</p>
${
  failed
    ? html`<div class="alert" role="alert"><p>${
        has(params, "error")
          ? html`The provider answered with the error <code>${params.error}</code>.`
          : "The response carries neither an authorization code nor an error."
      }</p></div>`
    : html`<div class="notice" role="status"><p>The provider issued an authorization code. A real application would now exchange it at the token endpoint.</p></div>`
}
${failed || !codePattern.test(params.code!) ? "" : redeemHint(v.redeem, params.code!)}
<table>
<caption>Response parameters</caption>
<tbody>
${fields.map(([key, label]) => row(key, label, params))}
${extra.map((key) => row(key, knownLabels[key] ?? key, params))}
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
function redeemHint(r: DemoCallbackPageView["redeem"], code: string): Html {
  const command = `curl -u ${r.clientId}:$(cat ${r.secretFile}) -d grant_type=authorization_code -d code=${code} -d redirect_uri=${r.redirectUri} ${r.tokenEndpoint}`;
  return html`<p>Redeem it yourself within 60 seconds (add <code>-d code_verifier=…</code> if the request carried a <code>code_challenge</code>):</p>
<pre><code>${command}</code></pre>`;
}

function has(params: Record<string, string>, key: string): boolean {
  return Object.hasOwn(params, key) && params[key] !== "";
}

function row(key: string, label: string, params: Record<string, string>): Html {
  const value = Object.hasOwn(params, key) ? params[key] : undefined;
  return html`<tr><th scope="row">${label}${label === key ? "" : html`<span class="muted"><code>${key}</code></span>`}</th><td>${
    value === undefined || value === "" ? html`<span class="muted">not returned</span>` : value
  }</td></tr>`;
}
