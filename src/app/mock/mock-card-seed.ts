import { X509Certificate } from "node:crypto";
import type { Accounts } from "../../domain/accounts/accounts.ts";
import type { Oidc } from "../../domain/oidc/provider.ts";
import type { DemoData } from "./demo-seed.ts";
import type { MockCard } from "../../domain/mock/mock-card.ts";
import type { InstalledExtension } from "../extension.ts";
import { installedMock } from "./installed-mock.ts";
import { demoLogin } from "../../domain/mock/demo-names.ts";

export interface MockCardServices {
  accounts: Accounts;
  oidc: Oidc;
  extensions: readonly InstalledExtension[];
}

/**
 * Mock mode only: the demo end user's mock JPKI card. A signature
 * certificate (and its key) issued by the mock CA in the demo API account,
 * to the demo certificate user, so `SetMockCertificateStatus` with the demo
 * token revokes it; linked to the demo end user, so it earns `very_high` and
 * `jpki_verified`. Idempotent: the card is made once and kept (sealed).
 */
export async function seedMockCard(services: MockCardServices, demo: DemoData, login = demoLogin): Promise<MockCard> {
  const { oidc } = services;
  const { environment: mock, cards } = installedMock(services);
  const user = await oidc.users.findByLogin(login);
  if (!user) throw new TypeError(`no end user ${login} to give a mock card`);
  let card = await cards.find(user.id);
  if (!card) {
    const account = await services.accounts.get(demo.accountName);
    const issued = await mock.createCertificate(account.id, { type: "jpki_card_digital_signature", userId: demo.userId, commonName: "Demo User" });
    await cards.save(
      user.id,
      { accountName: account.name, certificateId: issued.certificate.id, certificatePem: issued.certificatePem, privateKeyPem: issued.privateKeyPem },
      Date.now(),
    );
    // Another instance may have saved its card first: the stored one is the card.
    card = (await cards.find(user.id))!;
    await oidc.jpki.linkByOperator(user.id, new Uint8Array(new X509Certificate(card.certificatePem).raw));
  }
  return card;
}
