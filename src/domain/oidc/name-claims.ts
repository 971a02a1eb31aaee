import type { OidcUserRow } from "./model.ts";
import { filterTags, lookupTag } from "./locales.ts";

/** The languages and scripts names may be asked for in: discovery's claims_locales_supported. */
export const claimsLocalesSupported = ["en", "ja", "ja-Kana-JP"];

/**
 * The `name` claims of a user for a request's claims_locales (OIDC Core 5.2).
 * Without claims_locales, or when no requested language has a name: the
 * user's `name` as it is. Otherwise, for the first requested language that
 * has one: `name` in that language (its first name in the user's order, so
 * `ja` gives the written form before the reading), and every name the
 * language covers with its tag, e.g. `name#ja-Kana-JP`, so a client also gets
 * the reading. A range is matched by filtering (`ja` covers `ja-Kana-JP`),
 * then by lookup (`ja-JP` falls back to `ja`).
 */
export function nameClaims(user: Pick<OidcUserRow, "name" | "localizedNames">, claimsLocales: readonly string[] | null | undefined): Record<string, string | undefined> {
  const plain = { name: user.name ?? undefined };
  if (!claimsLocales || claimsLocales.length === 0 || user.localizedNames.length === 0) return plain;
  const tags = user.localizedNames.map((n) => n.tag);
  for (const range of claimsLocales) {
    let matched = filterTags(range, tags);
    if (matched.length === 0) {
      const fallback = lookupTag(range, tags);
      matched = fallback === undefined ? [] : filterTags(fallback, tags);
    }
    if (matched.length === 0) continue;
    const names = user.localizedNames.filter((n) => matched.includes(n.tag));
    return { name: names[0]!.value, ...Object.fromEntries(names.map((n) => [`name#${n.tag}`, n.value])) };
  }
  return plain;
}
