import type { Router } from "express";
import type { DemoCallbackPageView } from "./demo-callback-page.ts";
import type { Locale } from "../i18n/locale.ts";
import { linkPageLanguage } from "../i18n/page-language.ts";
import { pageHeaders } from "../middleware/page-headers.ts";
import { renderDemoCallbackPage } from "./demo-callback-page.ts";

/** Mock mode only: the demo client's redirect_uri, a page that shows what came back. */
export function registerDemoCallback(router: Router, redeem: DemoCallbackPageView["redeem"], defaultLocale: Locale): void {
  router.get("/demo/callback", pageHeaders, (req, res) => {
    const params: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.query)) if (typeof value === "string") params[name] = value;
    res.type("html").send(renderDemoCallbackPage(linkPageLanguage(req, defaultLocale), { params, redeem }));
  });
}
