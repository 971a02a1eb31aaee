import type { IncomingMessage, ServerResponse } from "node:http";
import { type CookieNames, readCookie, setCookie } from "../cookies.ts";
import { isLocale, type Locale } from "./locale.ts";

/** A year: it is a preference, not a secret. */
const lifetimeSeconds = 365 * 24 * 60 * 60;

/**
 * Remembers the language the interaction's pages spoke, so that the pages a
 * person reaches after it (the demo application's callback, the account
 * pages, sign-out) follow the flow's language rather than only the browser's.
 */
export function rememberLocale(req: IncomingMessage, res: ServerResponse, names: CookieNames, locale: Locale): void {
  if (readCookie(req, names.locale) !== locale) setCookie(res, names, names.locale, locale, lifetimeSeconds);
}

/** The remembered language, under either cookie name (https or plain http), when it is one we speak. */
export function rememberedLocale(req: IncomingMessage): Locale | undefined {
  const value = readCookie(req, "__Host-shomei_locale") ?? readCookie(req, "shomei_locale");
  return isLocale(value) ? value : undefined;
}
