import type { Locale } from "./locale.ts";

/** Numbers, lists and times in a language's own way, by the platform's Intl: no hand-made plurals or date formats. */
export interface Formats {
  /** "3 minutes", "1 minute", "3 分". */
  minutes(n: number): string;
  /** "a, b and c", "a、b、c". */
  and(items: readonly string[]): string;
  /** A moment, date and time, in the server's time zone unless one is given. */
  dateTime(epochMs: number): string;
}

const made = new Map<string, Formats>();

/** The formats of a language (and time zone), made once: building Intl formatters is the costly part. */
export function formatsFor(locale: Locale, timeZone?: string): Formats {
  const key = `${locale} ${timeZone ?? ""}`;
  let formats = made.get(key);
  if (!formats) {
    const minutes = new Intl.NumberFormat(locale, { style: "unit", unit: "minute", unitDisplay: "long" });
    const list = new Intl.ListFormat(locale, { style: "long", type: "conjunction" });
    const dateTime = new Intl.DateTimeFormat(locale, { dateStyle: "long", timeStyle: "short", ...(timeZone ? { timeZone } : {}) });
    formats = {
      minutes: (n) => minutes.format(n),
      and: (items) => list.format(items),
      dateTime: (ms) => dateTime.format(new Date(ms)),
    };
    made.set(key, formats);
  }
  return formats;
}
