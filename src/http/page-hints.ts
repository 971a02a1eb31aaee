import type { OidcUserRow } from "../domain/oidc/model.ts";
import type { Html } from "./pages/html.ts";
import type { PageLanguage } from "./pages/layout.ts";

/** A section a page shows beside its form, and the scripts (paths on this origin) it needs. */
export interface PageHint {
  section: Html;
  scripts: readonly string[];
}

/**
 * What an extension adds to the sign-in pages to let a person try them
 * without a card or an authenticator (the mock environment's card and
 * one-time code). Production has none: then the pages are exactly the same
 * without these parts.
 */
export interface PageHints {
  /** A section beside the JPKI form. signer: the signed-in user on step-up and linking; undefined on sign-in. */
  jpkiForm?(lang: PageLanguage, form: { signer: string | undefined; challengeText: string }): Promise<PageHint | undefined>;
  /** The one-time code to show on the re-authentication page of a user who needs one. */
  oneTimeCode?(user: OidcUserRow): string | undefined;
}

/** The hints of several extensions as one: the first that has something to say. */
export function combinedHints(all: readonly PageHints[]): PageHints {
  return {
    jpkiForm: async (lang, form) => {
      for (const hints of all) {
        const hint = await hints.jpkiForm?.(lang, form);
        if (hint) return hint;
      }
      return undefined;
    },
    oneTimeCode: (user) => {
      for (const hints of all) {
        const code = hints.oneTimeCode?.(user);
        if (code !== undefined) return code;
      }
      return undefined;
    },
  };
}
