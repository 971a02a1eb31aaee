/**
 * A urlencoded form of plain keys, parsed as qs parses it with the options
 * express.urlencoded({ extended: false }) gives it (depth 0, duplicates
 * combined into arrays, `+` as a space, a malformed escape left as it is, a
 * part without `=` as an empty value, an empty key dropped), or undefined
 * when the form needs qs's own rules: a bracket in a key (raw or escaped),
 * a `]=` anywhere in a part (where qs splits it), or a key that names a
 * property of Object.prototype. Brackets in values are plain text to qs
 * too: authorization_details (JSON) is full of them, and qs took 20-50 ms
 * over a megabyte of it.
 *
 * PAR and the token endpoint parse a form on every call, and qs was about
 * 5 % of a PAR's CPU: its general machinery (key segments, merging, arrays
 * by index, compaction) does nothing for the forms OAuth clients send.
 * test/unit/plain-form.test.ts compares the two on random forms.
 */
export function parsePlainForm(text: string): Record<string, string | string[]> | undefined {
  const form: Record<string, string | string[]> = {};
  for (const part of text.split("&")) {
    // qs first turns escaped brackets into brackets, so an escaped one splits a part as a raw one does.
    if (splitAtBracket.test(part)) return undefined;
    const at = part.indexOf("=");
    const rawKey = at === -1 ? part : part.slice(0, at);
    if (hasBracket.test(rawKey)) return undefined;
    const key = decode(rawKey);
    if (key === "") continue;
    if (key in Object.prototype) return undefined;
    const value = at === -1 ? "" : decode(part.slice(at + 1));
    const earlier = form[key];
    form[key] = earlier === undefined ? value : ([] as string[]).concat(earlier, value);
  }
  return form;
}

const hasBracket = /[[\]]|%5[bd]/i;
const splitAtBracket = /(?:\]|%5d)=/i;

/** qs's utf-8 decoder: `+` is a space; an escape that does not decode leaves the text as it was (with its spaces). */
function decode(text: string): string {
  const spaced = text.includes("+") ? text.replace(/\+/g, " ") : text;
  if (!spaced.includes("%")) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    // As qs leaves it: with the brackets it unescaped before anything else.
    return spaced.replace(/%5B/gi, "[").replace(/%5D/gi, "]");
  }
}
