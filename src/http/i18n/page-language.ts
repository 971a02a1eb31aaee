import type { Request } from "express";
import type { LanguageSwitch, PageLanguage } from "../pages/layout.ts";
import { messagesFor } from "./catalogue.ts";
import { chooseLocale, uiLocalesParameter, type LocaleSources } from "./choose-locale.ts";
import type { Locale } from "./locale.ts";
import { rememberedLocale } from "./remembered-locale.ts";

/** The language of a page for this request: see chooseLocale for the order of the sources. */
export function pageLanguage(
  req: Request,
  fallback: Locale,
  sources: Omit<LocaleSources, "acceptLanguage" | "fallback">,
  /** None: the page offers no other language. */
  languageSwitch: LanguageSwitch | undefined,
): PageLanguage {
  const locale = chooseLocale({ ...sources, acceptLanguage: req.get("accept-language"), fallback });
  return { locale, t: messagesFor(locale), timeZone: pageTimeZone(req), languageSwitch };
}

/** The application's setting for the zone pages show times in (see createHttpApp); Asia/Tokyo, the default, without one. */
function pageTimeZone(req: Request): string {
  const configured: unknown = req.app.locals.timeZone;
  return typeof configured === "string" ? configured : "Asia/Tokyo";
}

/**
 * A page outside an interaction: the page language follows ui_locales in its
 * query (an application's, or one the switch added), then the language the
 * last sign-in pages spoke (remembered-locale.ts), then the browser's; the
 * switch links to the same address with another ui_locales.
 */
export function linkPageLanguage(req: Request, fallback: Locale): PageLanguage {
  const remembered = rememberedLocale(req);
  const uiLocales = [...(requestUiLocales(req) ?? []), ...(remembered ? [remembered] : [])];
  return pageLanguage(req, fallback, { uiLocales }, linkSwitch(req));
}

/** ui_locales from the query, or from a form body (POST to the authorization endpoint). */
export function requestUiLocales(req: Request): string[] | undefined {
  const body = req.body as Record<string, unknown> | undefined;
  return uiLocalesParameter(req.query.ui_locales) ?? uiLocalesParameter(body?.ui_locales);
}

/** Links to this page's address (path and query) with ui_locales set to each language. */
function linkSwitch(req: Request): LanguageSwitch {
  const url = new URL(req.originalUrl, "http://page.invalid");
  return {
    href: (locale) => {
      url.searchParams.set("ui_locales", locale);
      return url.pathname + url.search;
    },
  };
}
