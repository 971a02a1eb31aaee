import type { Locale } from "./locale.ts";

/** Numbers, lists and times in a language's own way, by the platform's Intl: no hand-made plurals or date formats. */
export interface Formats {
  /** "3 minutes", "1 minute", "3分". */
  minutes(n: number): string;
  /** "a, b and c", "a、b、c"; two in Japanese "aとb". */
  and(items: readonly string[]): string;
  /** A moment, date and time, in the page's time zone, named after it: "2026年11月27日 21:06 日本標準時". */
  dateTime(epochMs: number): string;
  /** A time of day, in the page's time zone, named after it: "21:21 日本標準時". */
  time(epochMs: number): string;
  /**
   * A decimal amount (as text, e.g. "1250" or "123.50") in an ISO 4217
   * currency: 「1,250円」, "¥1,250", "€123.50". Never rounded: an amount with
   * more decimals than the currency uses keeps them all.
   */
  money(amount: string, currency: string): string;
}

/** How a language names a currency beside an amount: Japanese reads 「1,250円」 where English reads "¥1,250". */
const currencyDisplay: Record<Locale, "name" | "symbol"> = { ja: "name", en: "symbol" };

const made = new Map<string, Formats>();

/**
 * The formats of a language and time zone, made once: building Intl
 * formatters is the costly part. Times always carry the zone's name: the
 * server's zone is nobody's, and a bare 12:06 reads as local time anywhere.
 */
export function formatsFor(locale: Locale, timeZone: string): Formats {
  const key = `${locale} ${timeZone}`;
  let formats = made.get(key);
  if (!formats) {
    const minutes = new Intl.NumberFormat(locale, { style: "unit", unit: "minute", unitDisplay: "long" });
    const list = new Intl.ListFormat(locale, { style: "long", type: "conjunction" });
    const zone = { timeZone, timeZoneName: "long" } as const;
    const dateTime = new Intl.DateTimeFormat(locale, { year: "numeric", month: "long", day: "numeric", hour: "numeric", minute: "2-digit", ...zone });
    const time = new Intl.DateTimeFormat(locale, { hour: "numeric", minute: "2-digit", ...zone });
    formats = {
      // Japanese writes a number and its unit together (「15分」, docs/glossary-ja.md); Intl puts a space between them.
      minutes: (n) => (locale === "ja" ? minutes.format(n).replace(/(\d)\s+/gu, "$1") : minutes.format(n)),
      // Japanese joins two with と (「パスワードと認証アプリのワンタイムコード」); Intl lists them as 「A、B」, a list, not "A and B".
      and: (items) => (locale === "ja" && items.length === 2 ? `${items[0]}と${items[1]}` : list.format(items)),
      dateTime: (ms) => dateTime.format(new Date(ms)),
      time: (ms) => time.format(new Date(ms)),
      money: (amount, currency) => moneyFormat(locale, currency, amount.split(".")[1]?.length ?? 0).format(amount as Intl.StringNumericLiteral),
    };
    made.set(key, formats);
  }
  return formats;
}

const moneyFormats = new Map<string, Intl.NumberFormat>();

/** A currency's format showing at least `decimals` decimals (so nothing is rounded away), made once per shape. */
function moneyFormat(locale: Locale, currency: string, decimals: number): Intl.NumberFormat {
  const key = `${locale} ${currency} ${decimals}`;
  let format = moneyFormats.get(key);
  if (!format) {
    const usual = new Intl.NumberFormat(locale, { style: "currency", currency }).resolvedOptions();
    format = new Intl.NumberFormat(locale, {
      style: "currency",
      currency,
      currencyDisplay: currencyDisplay[locale],
      minimumFractionDigits: usual.minimumFractionDigits,
      maximumFractionDigits: Math.max(usual.maximumFractionDigits ?? 0, decimals),
    });
    // Bounded by the languages, the currency codes clients send and the decimals the renderer admits (0 to 6).
    if (moneyFormats.size < 1000) moneyFormats.set(key, format);
  }
  return format;
}
