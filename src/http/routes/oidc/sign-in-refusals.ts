import { formatsFor } from "../../i18n/format.ts";
import { joinSentences } from "../../i18n/locale.ts";
import type { PageLanguage } from "../../pages/layout.ts";

/** When a paused sign-in may be tried again, in the page's language and time zone: "21:21 日本標準時". */
export function retryTime(lang: PageLanguage, seconds: number): string {
  const formats = formatsFor(lang.locale, lang.timeZone);
  const at = Date.now() + seconds * 1000;
  // A time alone is clear within half a day; a longer window (a setting) names the date too.
  return seconds <= 12 * 3600 ? formats.time(at) : formats.dateTime(at);
}

/** A failed attempt's words: what was wrong, then the pause it started, or the warning that one attempt is left. */
export function failureMessage(
  lang: PageLanguage,
  wrong: string,
  attempt: { attemptsLeft: number; retryAfterSeconds?: number | undefined },
  words: { throttled: (until: string) => string; lastAttempt: string },
): string {
  const after = attempt.retryAfterSeconds !== undefined ? words.throttled(retryTime(lang, attempt.retryAfterSeconds)) : attempt.attemptsLeft === 1 ? words.lastAttempt : "";
  return joinSentences(lang.locale, wrong, after);
}

/** A wrong password on a sign-in page (an application's or the account pages'). */
export function wrongPasswordMessage(lang: PageLanguage, attempt: { attemptsLeft: number; retryAfterSeconds?: number | undefined }): string {
  return failureMessage(lang, lang.t.login.wrongCredentials, attempt, lang.t.login);
}
