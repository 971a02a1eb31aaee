import { lookupTag } from "../../domain/oidc/locales.ts";
import { negotiateLanguage, parseAcceptLanguage } from "./accept-language.ts";
import { isLocale, locales, type Locale } from "./locale.ts";

export interface LocaleSources {
  /** A language the user picked with the switch (kept in the interaction, or in the link just followed). */
  chosen?: string | undefined;
  /** The request's ui_locales, in order of preference. */
  uiLocales?: readonly string[] | undefined;
  /** The browser's Accept-Language header. */
  acceptLanguage?: string | undefined;
  /** SHOMEI_DEFAULT_LOCALE. */
  fallback: Locale;
}

/**
 * The page language: the user's own choice, then ui_locales (OIDC Core
 * 3.1.2.1, the first one supported), then Accept-Language, then the default.
 */
export function chooseLocale(s: LocaleSources): Locale {
  if (isLocale(s.chosen)) return s.chosen;
  for (const tag of s.uiLocales ?? []) {
    const found = lookupTag(tag, locales);
    if (found !== undefined) return found;
  }
  return negotiateLanguage(parseAcceptLanguage(s.acceptLanguage), locales, s.fallback) ?? s.fallback;
}

/** `ui_locales` as a query parameter (an error page's or a link's), in the shape chooseLocale takes. */
export function uiLocalesParameter(value: unknown): string[] | undefined {
  return typeof value === "string" ? value.split(" ").filter(Boolean) : undefined;
}
