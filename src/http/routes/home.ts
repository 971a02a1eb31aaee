import type { Router } from "express";
import type { Config } from "../../config/schema.ts";
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
    res.type("html").send(
      page(
        "Home",
        html`<h1>shomei ${version}</h1>
<p>OpenID Connect provider and certificate status service, running in <strong>${config.mode}</strong> mode.</p>
<p class="muted">Operations: <a href="/healthz">/healthz</a> · <a href="/readyz">/readyz</a> · <a href="/metrics">/metrics</a></p>`,
      ),
    );
  });
}
