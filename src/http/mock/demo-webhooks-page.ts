import type { ReceivedWebhook } from "../../domain/mock/demo-webhook-receiver.ts";
import { formatsFor } from "../i18n/format.ts";
import { html } from "../pages/html.ts";
import { page, type PageLanguage } from "../pages/layout.ts";

/** The mock environment's webhook receiver: what arrived, newest first, and whether its signature verified. */
export function renderWebhooksDemoPage(lang: PageLanguage, received: readonly ReceivedWebhook[], receiverUrl: string): string {
  const t = lang.t.demoWebhooks;
  const formats = formatsFor(lang.locale, lang.timeZone);
  return page(
    lang,
    t.title,
    html`<h1>${t.title}</h1>
<p class="muted">${t.intro}</p>
<p>${t.pointHere}</p>
<pre><code>${receiverUrl}</code></pre>
<div class="actions"><a class="button primary" href="/demo/webhooks" id="reload">${t.reload}</a></div>
${
  received.length === 0
    ? html`<p class="notice" role="status">${t.none}</p>`
    : received.map(
        (r) => html`<section class="received">
<h2><code>${r.type || t.notCloudEvent}</code></h2>
${r.verified ? html`<p class="notice">✓ ${t.verified}</p>` : html`<p class="alert">✗ ${t.notVerified}</p>`}
<table><tbody>
<tr><th scope="row">${t.receivedAt}</th><td>${formats.dateTime(r.receivedAt)}</td></tr>
<tr><th scope="row">webhook-id</th><td><code>${r.webhookId}</code></td></tr>
</tbody></table>
<pre lang="en"><code>${r.body}</code></pre>
</section>`,
      )
}`,
  );
}
