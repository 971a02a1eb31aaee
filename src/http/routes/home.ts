import type { Router } from "express";
import type { Config } from "../../config/schema.ts";
import { linkPageLanguage } from "../i18n/page-language.ts";
import { html } from "../pages/html.ts";
import { page } from "../pages/layout.ts";
import { version } from "../../version.ts";

/** A landing page so that opening the base URL in a browser shows what runs there. */
export function registerHomeRoute(router: Router, config: Config): void {
  router.get("/", (req, res) => {
    const info = { name: "shomei", version, mode: config.mode, issuer: config.baseUrl };
    if (req.accepts(["json", "html"]) !== "html") {
      res.json(info);
      return;
    }
    // The language follows Accept-Language: caches must keep one copy per header value.
    res.vary("Accept-Language");
    const lang = linkPageLanguage(req, config.defaultLocale);
    const t = lang.t.home;
    res.type("html").send(
      page(
        lang,
        t.title,
        html`<h1>shomei ${version}</h1>
<p>${t.running(config.mode)}</p>
<p class="muted">${t.operations}: <a href="/healthz">/healthz</a> · <a href="/readyz">/readyz</a> · <a href="/metrics">/metrics</a></p>`,
      ),
    );
  });
}
