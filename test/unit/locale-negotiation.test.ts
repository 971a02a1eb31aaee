import { describe, expect, it } from "vitest";
import { negotiateLanguage, parseAcceptLanguage } from "../../src/http/i18n/accept-language.ts";
import { chooseLocale } from "../../src/http/i18n/choose-locale.ts";
import { formatsFor } from "../../src/http/i18n/format.ts";
import { lookupTag, parseLocaleList } from "../../src/domain/oidc/locales.ts";
import { nameClaims } from "../../src/domain/oidc/name-claims.ts";

const supported = ["en", "ja"] as const;
const fromHeader = (header: string | undefined, fallback: "en" | "ja" = "en") => chooseLocale({ acceptLanguage: header, fallback });

describe("Accept-Language (RFC 9110 §12.5.4)", () => {
  it("parses ranges and weights, most wanted first, ties in the sender's order", () => {
    expect(parseAcceptLanguage("en-US,en;q=0.9,ja;q=0.8")).toEqual([
      { range: "en-US", q: 1 },
      { range: "en", q: 0.9 },
      { range: "ja", q: 0.8 },
    ]);
    expect(parseAcceptLanguage("fr;q=0.5, ja ;q=0.5 , de")).toEqual([
      { range: "de", q: 1 },
      { range: "fr", q: 0.5 },
      { range: "ja", q: 0.5 },
    ]);
    expect(parseAcceptLanguage("ja;Q=0.7")).toEqual([{ range: "ja", q: 0.7 }]);
  });

  it("skips malformed entries and keeps the rest", () => {
    expect(parseAcceptLanguage("ja;q=2, en;q=0.1234, x y, ;q=1, *;q=0.1, de;level=1, fr;q=")).toEqual([{ range: "*", q: 0.1 }]);
    expect(parseAcceptLanguage("日本語, ja")).toEqual([{ range: "ja", q: 1 }]);
    expect(parseAcceptLanguage("")).toEqual([]);
    expect(parseAcceptLanguage(undefined)).toEqual([]);
    expect(parseAcceptLanguage("ja," + "x".repeat(5000))).toEqual([]);
  });

  it.each([
    ["ja", "ja"],
    ["ja-JP", "ja"],
    ["JA-jp", "ja"],
    ["en-GB,ja;q=0.9", "en"],
    ["fr-CA, fr;q=0.9, ja;q=0.8, en;q=0.7", "ja"],
    ["en;q=0.5, ja", "ja"],
    // q=0 means "not acceptable": ja is ruled out even when a wildcard follows.
    ["ja;q=0, *", "en"],
    ["en;q=0, *;q=0.5", "ja"],
    ["ja;q=0", "en"],
    // A wildcard alone takes the default; the default is then the configured one.
    ["*", "en"],
    ["fr, *;q=0.1", "en"],
    ["de", "en"],
  ])("%s → %s", (header, expected) => {
    expect(fromHeader(header)).toBe(expected);
  });

  it("a wildcard, a malformed or an absent header falls back to the configured default", () => {
    expect(fromHeader("*", "ja")).toBe("ja");
    expect(fromHeader(";;;,,=q", "ja")).toBe("ja");
    expect(fromHeader("\u0000\u00ff", "ja")).toBe("ja");
    expect(fromHeader(undefined, "ja")).toBe("ja");
    expect(fromHeader("en;q=0, ja;q=0", "ja")).toBe("ja");
  });

  it("negotiates among any set of tags", () => {
    expect(negotiateLanguage(parseAcceptLanguage("de-AT"), ["de", "fr"], "fr")).toBe("de");
    expect(negotiateLanguage(parseAcceptLanguage("it"), supported, "en")).toBeUndefined();
  });
});

describe("the page language", () => {
  it("the switch, then ui_locales, then Accept-Language, then the default", () => {
    expect(chooseLocale({ chosen: "en", uiLocales: ["ja"], acceptLanguage: "ja", fallback: "ja" })).toBe("en");
    expect(chooseLocale({ uiLocales: ["fr", "ja-JP"], acceptLanguage: "en", fallback: "en" })).toBe("ja");
    expect(chooseLocale({ uiLocales: ["fr"], acceptLanguage: "ja", fallback: "en" })).toBe("ja");
    expect(chooseLocale({ chosen: "fr", uiLocales: [], acceptLanguage: "de", fallback: "ja" })).toBe("ja");
  });

  it("ui_locales keeps well-formed tags only, and lookup drops subtags", () => {
    expect(parseLocaleList("fr-CA  ja <x> en")).toEqual(["fr-CA", "ja", "en"]);
    expect(parseLocaleList("<x> !!")).toBeUndefined();
    expect(parseLocaleList(undefined)).toBeUndefined();
    expect(lookupTag("ja-Jpan-JP-x-private", supported)).toBe("ja");
    expect(lookupTag("jax", supported)).toBeUndefined();
  });
});

describe("formats through Intl", () => {
  it("plurals and lists in each language", () => {
    expect(formatsFor("en", "UTC").minutes(1)).toBe("1 minute");
    expect(formatsFor("en", "UTC").minutes(3)).toBe("3 minutes");
    expect(formatsFor("ja", "UTC").minutes(3)).toBe("3分");
    expect(formatsFor("ja", "UTC").minutes(15)).toBe("15分");
    expect(formatsFor("en", "UTC").and(["a", "b"])).toBe("a and b");
    expect(formatsFor("ja", "UTC").and(["a", "b", "c"])).toBe("a、b、c");
    expect(formatsFor("ja", "UTC").and(["パスワード", "認証アプリのワンタイムコード"])).toBe("パスワードと認証アプリのワンタイムコード");
  });

  it("dates and times in each language, in the zone asked for, named", () => {
    const when = Date.UTC(2026, 0, 2, 3, 4);
    expect(formatsFor("en", "UTC").dateTime(when)).toBe("January 2, 2026 at 3:04 AM Coordinated Universal Time");
    expect(formatsFor("ja", "UTC").dateTime(when)).toBe("2026年1月2日 3:04 協定世界時");
    expect(formatsFor("en", "Asia/Tokyo").dateTime(when)).toBe("January 2, 2026 at 12:04 PM Japan Standard Time");
    expect(formatsFor("ja", "Asia/Tokyo").dateTime(when)).toBe("2026年1月2日 12:04 日本標準時");
    expect(formatsFor("ja", "Asia/Tokyo").time(when)).toBe("12:04 日本標準時");
    expect(formatsFor("en", "Europe/Berlin").time(when)).toBe("4:04 AM Central European Standard Time");
  });
});

describe("name claims for claims_locales (OIDC Core 5.2)", () => {
  const user = {
    name: "Demo User",
    localizedNames: [
      { tag: "ja", value: "見本 太郎" },
      { tag: "ja-Kana-JP", value: "ミホン タロウ" },
    ],
  };

  it("without claims_locales, or with none the user has: the plain name", () => {
    expect(nameClaims(user, undefined)).toEqual({ name: "Demo User" });
    expect(nameClaims(user, null)).toEqual({ name: "Demo User" });
    expect(nameClaims(user, ["fr", "en"])).toEqual({ name: "Demo User" });
    expect(nameClaims({ name: null, localizedNames: [] }, ["ja"])).toEqual({ name: undefined });
  });

  it("ja: the written name, and every Japanese name by its tag", () => {
    expect(nameClaims(user, ["ja"])).toEqual({ name: "見本 太郎", "name#ja": "見本 太郎", "name#ja-Kana-JP": "ミホン タロウ" });
    expect(nameClaims(user, ["fr", "ja-JP"])).toEqual({ name: "見本 太郎", "name#ja": "見本 太郎", "name#ja-Kana-JP": "ミホン タロウ" });
  });

  it("ja-Kana-JP: the reading alone", () => {
    expect(nameClaims(user, ["ja-Kana-JP", "ja"])).toEqual({ name: "ミホン タロウ", "name#ja-Kana-JP": "ミホン タロウ" });
    expect(nameClaims(user, ["JA-kana-jp"])).toEqual({ name: "ミホン タロウ", "name#ja-Kana-JP": "ミホン タロウ" });
  });
});
