/**
 * BCP 47 language tags as OpenID Connect uses them (`ui_locales`,
 * `claims_locales`, language-tagged claims such as `name#ja-Kana-JP`): the
 * well-formed shape only (language, then subtags of up to 8 letters or
 * digits), compared case-insensitively, matched by RFC 4647 lookup.
 */
const tagPattern = /^[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*$/;

/** At most this many tags of a list are looked at; more is no longer a preference. */
const maxTags = 16;

export function isLanguageTag(value: string): boolean {
  return tagPattern.test(value);
}

/**
 * A space-separated list of tags in order of preference. Malformed entries are
 * dropped, not refused: OIDC Core 3.1.2.1 asks that unsupported locales cause no
 * error, and a tag we cannot read is one we cannot support.
 */
export function parseLocaleList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const tags = value.split(" ").filter((t) => t !== "" && isLanguageTag(t)).slice(0, maxTags);
  return tags.length > 0 ? tags : undefined;
}

/**
 * RFC 4647 §3.4 lookup of one language range among `available` tags: the range
 * itself, then the range with its last subtag removed, and so on. Returns the
 * available tag as it is spelled there.
 */
export function lookupTag<T extends string>(range: string, available: readonly T[]): T | undefined {
  let candidate = range.toLowerCase();
  while (candidate !== "") {
    const found = available.find((tag) => tag.toLowerCase() === candidate);
    if (found !== undefined) return found;
    const cut = candidate.lastIndexOf("-");
    candidate = cut < 0 ? "" : candidate.slice(0, cut);
    // A single-letter subtag (an extension or private-use marker) never stands alone at the end.
    if (/-[a-z0-9]$/.test(candidate)) candidate = candidate.slice(0, -2);
  }
  return undefined;
}

/** RFC 4647 §3.3.1 basic filtering: the tags the range names (itself, or tags that begin with it and a hyphen). */
export function filterTags<T extends string>(range: string, available: readonly T[]): T[] {
  const r = range.toLowerCase();
  return available.filter((tag) => {
    const t = tag.toLowerCase();
    return t === r || t.startsWith(r + "-");
  });
}
