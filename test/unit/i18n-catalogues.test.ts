import { describe, expect, it } from "vitest";
import { catalogues, missingKeys } from "../../src/http/i18n/catalogue.ts";
import { joinSentences, locales } from "../../src/http/i18n/locale.ts";
import { wrongPasswordMessage } from "../../src/http/routes/oidc/sign-in-refusals.ts";
import { Html } from "../../src/http/pages/html.ts";

/** Every value of a catalogue, with its key path. */
function leaves(value: unknown, prefix = ""): [string, unknown][] {
  if (typeof value !== "object" || value === null || value instanceof Html) return [[prefix, value]];
  return Object.entries(value).flatMap(([key, v]) => leaves(v, prefix ? `${prefix}.${key}` : key));
}

describe("message catalogues", () => {
  it("every language has every key the others have", () => {
    for (const a of locales) {
      for (const b of locales) {
        expect(missingKeys(catalogues[a], catalogues[b]), `keys of ${a} missing in ${b}`).toEqual([]);
      }
    }
  });

  it("the check names a key one catalogue misses, however deep", () => {
    const { login: _login, ...withoutLogin } = catalogues.ja;
    expect(missingKeys(catalogues.en, withoutLogin)).toEqual(["login"]);
    const withoutScope = { ...catalogues.ja, consent: { ...catalogues.ja.consent, scopes: { openid: "x" } } };
    expect(missingKeys(catalogues.en, withoutScope)).toEqual(["consent.scopes.profile", "consent.scopes.email", "consent.scopes.offline_access"]);
    const withoutCode = { ...catalogues.en, errors: { ...catalogues.en.errors, byCode: { other: "x" } } };
    expect(missingKeys(catalogues.ja, withoutCode)).toEqual([
      "errors.byCode.invalid_request",
      "errors.byCode.invalid_request_uri",
      "errors.byCode.invalid_client",
      "errors.byCode.unauthorized_client",
    ]);
    // An extra key is a key the other one misses.
    expect(missingKeys({ ...catalogues.ja, extra: "x" }, catalogues.en)).toEqual(["extra"]);
  });

  it("no message is empty, and each is of the same kind in every language", () => {
    const english = new Map(leaves(catalogues.en));
    for (const locale of locales) {
      for (const [path, value] of leaves(catalogues[locale])) {
        expect(typeof value, `${locale} ${path}`).toBe(typeof english.get(path));
        if (typeof value === "string") expect(value.trim(), `${locale} ${path}`).not.toBe("");
        if (typeof value === "function") expect((value as (...a: string[]) => unknown).length, `${locale} ${path} arity`).toBe((english.get(path) as () => unknown).length);
      }
    }
  });

  it("the Japanese catalogue is Japanese", () => {
    expect(catalogues.ja.login.title).toBe("ログイン");
    expect(catalogues.ja.consent.allow).toBe("許可する");
    expect(String(catalogues.ja.login.lead("App"))).toContain("App");
  });

  it("sentences follow one another as each language writes them: a space in English, none after Japanese 。", () => {
    expect(joinSentences("en", "One.", "", "Two.")).toBe("One. Two.");
    expect(joinSentences("ja", "一つ。", "", "二つ。")).toBe("一つ。二つ。");
    const lang = (locale: (typeof locales)[number]) => ({ locale, t: catalogues[locale], timeZone: "Asia/Tokyo" });
    const paused = { attemptsLeft: 0, retryAfterSeconds: 300 };
    expect(wrongPasswordMessage(lang("ja"), paused)).toMatch(/^ユーザー名またはパスワードが正しくありません。[^ ]/);
    expect(wrongPasswordMessage(lang("ja"), paused)).not.toContain("。 ");
    expect(wrongPasswordMessage(lang("en"), paused)).toMatch(/^\S.*\. \S/);
  });
});
