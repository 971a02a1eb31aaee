import type { Extension, ExtensionServices } from "../extension.ts";
import { mockBanner } from "./mock-banner.ts";
import { seedDemo } from "./demo-seed.ts";
import { InstalledMock } from "./installed-mock.ts";
import { seedMockCard } from "./mock-card-seed.ts";
import { seedOidcDemo } from "./oidc-demo-seed.ts";

/**
 * The mock environment as an extension of the server, installed in mock mode
 * only (see mode-extensions.ts): everything InstalledMock adds, and at
 * start-up the demo data `npm start` prints.
 */
export const mockExtension: Extension = {
  install: (context) => new MockWithDemoData(context),
};

class MockWithDemoData extends InstalledMock {
  /** The demo account, certificates, client, user and card, made once and kept; what to try with them. */
  async startUp(services: ExtensionServices, url: string): Promise<string[]> {
    const { config } = this.context;
    const { dataDir } = config;
    const demo = await seedDemo(services, dataDir);
    const oidcDemo = await seedOidcDemo(services.oidc, dataDir, Date.now());
    const card = await seedMockCard(services, demo);
    return mockBanner(config, url, demo, oidcDemo, card);
  }
}
