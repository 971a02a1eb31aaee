import type { Locale } from "./locale.ts";

/** Numbers, lists and times in a language's own way, by the platform's Intl: no hand-made plurals or date formats. */
export interface Formats {
  /** "3 minutes", "1 minute", "3 分". */
  minutes(n: number): string;
  /** "a, b and c", "a、b、c". */
  and(items: readonly string[]): string;
  /** A moment, date and time, in the page's time zone, named after it: "2026年11月27日 21:06 日本標準時". */
  dateTime(epochMs: number): string;
  /** A time of day, in the page's time zone, named after it: "21:21 日本標準時". */
  time(epochMs: number): string;
}

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
      minutes: (n) => minutes.format(n),
      and: (items) => list.format(items),
      dateTime: (ms) => dateTime.format(new Date(ms)),
      time: (ms) => time.format(new Date(ms)),
    };
    made.set(key, formats);
  }
  return formats;
}
