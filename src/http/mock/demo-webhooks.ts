import express, { type Router } from "express";
import type { DemoWebhookReceiver } from "../../domain/mock/demo-webhook-receiver.ts";
import type { Locale } from "../i18n/locale.ts";
import { linkPageLanguage } from "../i18n/page-language.ts";
import { pageHeaders } from "../middleware/page-headers.ts";
import { renderWebhooksDemoPage } from "./demo-webhooks-page.ts";

export const demoWebhooksPath = "/demo/webhooks";

/**
 * Mock mode only: a webhook receiver to aim endpoints at. POST checks the
 * signature (204 when it verifies, 401 when not, as a receiver should);
 * GET shows what arrived.
 */
export function registerDemoWebhooks(router: Router, receiver: DemoWebhookReceiver, issuer: string, defaultLocale: Locale): void {
  router.post(demoWebhooksPath, express.text({ type: () => true, limit: "256kb" }), async (req, res, next) => {
    try {
      const headers: Record<string, string | undefined> = {};
      for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature"]) headers[name] = req.get(name);
      const item = await receiver.receive(headers, typeof req.body === "string" ? req.body : "");
      res.status(item.verified ? 204 : 401).end();
    } catch (error) {
      next(error);
    }
  });
  router.get(demoWebhooksPath, pageHeaders, (req, res) => {
    res.type("html").send(renderWebhooksDemoPage(linkPageLanguage(req, defaultLocale), receiver.list(), `${issuer}${demoWebhooksPath}`));
  });
}
