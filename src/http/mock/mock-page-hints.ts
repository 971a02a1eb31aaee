import type { MockCard, MockCards } from "../../domain/mock/mock-card.ts";
import { demoLogin } from "../../domain/mock/demo-names.ts";
import type { OidcUsers } from "../../domain/oidc/users.ts";
import { sentenceGap, type Locale } from "../i18n/locale.ts";
import type { Messages } from "../i18n/messages/en.ts";
import type { PageHints } from "../page-hints.ts";
import { html, type Html } from "../pages/html.ts";
import { mockCardScriptPath } from "./mock-card-script.ts";

/**
 * The mock environment's hints on the sign-in pages: the mock card beside
 * the JPKI form (its key handed to the page's script, never in production),
 * and the current one-time code on the re-authentication page.
 */
export function mockPageHints(cards: MockCards, users: Pick<OidcUsers, "findByLogin" | "currentOtp">): PageHints {
  return {
    async jpkiForm(lang, { signer, challengeText }) {
      // Sign-in: the card of the demo user, the one person whose card the mock environment holds.
      const userId = signer ?? (await users.findByLogin(demoLogin))?.id;
      const card = userId === undefined ? undefined : await cards.find(userId);
      return card && { section: mockCardSection(lang.t.jpki, lang.locale, card, challengeText), scripts: [mockCardScriptPath] };
    },
    oneTimeCode: (user) => users.currentOtp(user),
  };
}

function mockCardSection(s: Messages["jpki"], locale: Locale, card: MockCard, challengeText: string): Html {
  const command = `printf '%s' '${challengeText}' | openssl dgst -sha256 -sign mock-card.key | openssl base64 -A`;
  return html`<div class="mock" role="note" id="mock-card" data-certificate="${card.certificatePem}" data-key="${card.privateKeyPem}" data-challenge-text="${challengeText}">
<p><strong>${s.mockTitle}</strong>${sentenceGap(locale)}${s.mockIntro}</p>
<div class="actions"><button type="button" class="button secondary" id="mock-card-sign" hidden>${s.mockSign}</button></div>
<p id="mock-card-failed" hidden>${s.mockFailed}</p>
<p>${s.mockOpensslIntro}</p>
<pre id="mock-openssl">${command}</pre>
<details><summary>${s.mockKeySummary}</summary>
<pre id="mock-card-key">${card.privateKeyPem}</pre>
<pre id="mock-card-certificate">${card.certificatePem}</pre>
<p>${s.mockCertificateIdentity(card.certificateId, card.accountName)}</p>
</details>
</div>`;
}
