import { describe, expect, it } from "vitest";
import { catalogues } from "../../src/http/i18n/catalogue.ts";
import { formatsFor } from "../../src/http/i18n/format.ts";
import { Html } from "../../src/http/pages/html.ts";

/*
 * The mechanical rules of docs/glossary-ja.md, over every Japanese message:
 * what a person reads (tags removed; <code> left out, it is quoted verbatim).
 */

/** Every message of a catalogue with its key path, functions called with a placeholder for each argument. */
function messages(value: unknown, prefix = ""): [string, string][] {
  if (value instanceof Html) return [[prefix, value.value]];
  if (typeof value === "string") return [[prefix, value]];
  if (typeof value === "function") {
    // Full-width letters: neither a digit nor Japanese, so the rules see only the message's own text.
    const args = Array.from({ length: value.length }, (_, i) => `Ｘ${"ＡＢＣＤ"[i] ?? ""}`);
    return messages((value as (...a: string[]) => unknown)(...args), prefix);
  }
  if (typeof value === "object" && value !== null) return Object.entries(value).flatMap(([key, v]) => messages(v, prefix ? `${prefix}.${key}` : key));
  return [];
}

/** The text a person reads: <code> elements left out, other tags removed, entities decoded. */
function readable(markup: string): string {
  return markup
    .replace(/<code>[\s\S]*?<\/code>/g, "")
    .replace(/<[^>]*>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&");
}

const japanese = messages(catalogues.ja).map(([path, text]) => [path, readable(text)] as const);
const kana = "\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}";

describe("the Japanese catalogue follows docs/glossary-ja.md", () => {
  it("has messages to check", () => {
    expect(japanese.length).toBeGreaterThan(150);
  });

  it("uses full-width brackets, colons and question marks, never ASCII ones", () => {
    const offending = japanese.filter(([, text]) => /[():?!]/.test(text)).map(([path, text]) => `${path}: ${text}`);
    expect(offending).toEqual([]);
  });

  it("writes a number and its unit together (「15分」, not 「15 分」)", () => {
    const spaced = new RegExp(`[0-9]\\s+[${kana}]|[${kana}]\\s+[0-9]`, "u");
    const offending = japanese.filter(([, text]) => spaced.test(text)).map(([path, text]) => `${path}: ${text}`);
    expect(offending).toEqual([]);
    // Numbers formatted for a message too.
    const formats = formatsFor("ja", "Asia/Tokyo");
    expect(formats.minutes(15)).toBe("15分");
    expect(readable(String(catalogues.ja.login.throttled(formats.time(Date.UTC(2026, 0, 2, 3, 4)))))).toContain("12:04");
  });

  it("says ログイン and アプリ, one word each, and no 最高", () => {
    const offending = japanese
      .filter(([, text]) => /サインイン|サインアウト|アプリケーション|最高/.test(text))
      .map(([path, text]) => `${path}: ${text}`);
    expect(offending).toEqual([]);
    expect(catalogues.ja.login.title).toBe("ログイン");
    expect(catalogues.ja.logout.title).toBe("ログアウト");
  });
});

describe("Japanese inside the English catalogue", () => {
  it("is marked lang=\"ja\", so that it is read and broken as Japanese", () => {
    const run = new RegExp(`[${kana}]`, "u");
    const offending = messages(catalogues.en)
      .filter(([, text]) => run.test(text.replace(/<span lang="ja">[^<]*<\/span>/g, "")))
      .map(([path, text]) => `${path}: ${text}`);
    expect(offending).toEqual([]);
  });
});
