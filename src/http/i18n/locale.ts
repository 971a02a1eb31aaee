/** The languages the pages speak. Adding one is adding its catalogue (messages/) and its name here. */
export const locales = ["en", "ja"] as const;

export type Locale = (typeof locales)[number];

export function isLocale(value: unknown): value is Locale {
  return typeof value === "string" && (locales as readonly string[]).includes(value);
}

/** Each language's name in itself, for the language switch. */
export const localeNames: Record<Locale, string> = { en: "English", ja: "日本語" };

/** What stands between two sentences: a space in English, nothing in Japanese (each ends with 。 or ：). */
export function sentenceGap(locale: Locale): string {
  return locale === "ja" ? "" : " ";
}

/** Sentences one after another, as the language writes them (sentenceGap). */
export function joinSentences(locale: Locale, ...sentences: readonly string[]): string {
  return sentences.filter((sentence) => sentence !== "").join(sentenceGap(locale));
}
