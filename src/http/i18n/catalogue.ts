import type { Locale } from "./locale.ts";
import { en, type Messages } from "./messages/en.ts";
import { ja } from "./messages/ja.ts";

export type { Messages };

/** Every catalogue by language; the Record type makes a language without one a compile error. */
export const catalogues: Record<Locale, Messages> = { en, ja };

export function messagesFor(locale: Locale): Messages {
  return catalogues[locale];
}

/**
 * The key paths `a` has and `b` lacks, e.g. `login.title`: the run-time check
 * that two catalogues agree, for records the types leave open (labels,
 * descriptions by code) and for catalogues built from data.
 */
export function missingKeys(a: unknown, b: unknown, prefix = ""): string[] {
  if (!isPlainObject(a)) return [];
  const missing: string[] = [];
  for (const key of Object.keys(a)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (!isPlainObject(b) || !Object.hasOwn(b, key)) missing.push(path);
    else missing.push(...missingKeys(a[key], b[key], path));
  }
  return missing;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}
