import { isLanguageTag, lookupTag } from "../../domain/oidc/locales.ts";

/** One entry of an Accept-Language header: a language range and its weight. */
export interface LanguageRange {
  range: string;
  q: number;
}

/** Longer headers are not read at all: no browser sends one, and parsing stays cheap. */
const maxHeaderLength = 4096;
const weightPattern = /^(?:0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)$/;

/**
 * RFC 9110 §12.5.4: `range;q=weight` entries separated by commas, most wanted
 * first (a stable sort, so equal weights keep the sender's order). A malformed
 * entry is skipped, not refused: the header is a preference, and a page in the
 * default language is better than an error.
 */
export function parseAcceptLanguage(header: string | undefined): LanguageRange[] {
  if (header === undefined || header.length > maxHeaderLength) return [];
  const entries: LanguageRange[] = [];
  for (const part of header.split(",")) {
    const [rawRange = "", ...params] = part.split(";");
    const range = rawRange.trim();
    if (range === "") continue;
    if (range !== "*" && !isLanguageTag(range)) continue;
    let q = 1;
    let valid = true;
    for (const param of params) {
      const [name = "", value = ""] = param.split("=").map((s) => s.trim());
      if (name.toLowerCase() !== "q" || !weightPattern.test(value)) valid = false;
      else q = Number(value);
    }
    if (valid) entries.push({ range, q });
  }
  return entries.sort((a, b) => b.q - a.q);
}

/**
 * The supported language the ranges prefer (RFC 4647 lookup, `ja-JP` finds
 * `ja`), or undefined. A range with q=0 rules its language out; `*` stands for
 * any language not ruled out, the default first.
 */
export function negotiateLanguage<T extends string>(ranges: readonly LanguageRange[], supported: readonly T[], preferred: T): T | undefined {
  const ruledOut = new Set(ranges.filter((r) => r.q === 0 && r.range !== "*").map((r) => r.range.toLowerCase()));
  const allowed = supported.filter((tag) => !ruledOut.has(tag.toLowerCase()));
  for (const { range, q } of ranges) {
    if (q === 0) continue;
    if (range === "*") return allowed.includes(preferred) ? preferred : allowed[0];
    const found = lookupTag(range, allowed);
    if (found !== undefined) return found;
  }
  return undefined;
}
