/*
 * `npm run screenshots`: every page, in Japanese and English, on a desktop
 * and a phone, in the light and the dark scheme, as PNG files for review, in
 * ./screenshots (not committed) or SHOMEI_SCREENSHOT_DIR. It starts its own
 * server in mock mode on a temporary SQLite database and walks the pages as a
 * person does: each state of a page is reached by using the page before it.
 */
import { sign } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { loadConfig } from "../../src/config/load.ts";
import { seedDemo } from "../../src/app/mock/demo-seed.ts";
import { seedMockCard } from "../../src/app/mock/mock-card-seed.ts";
import { seedOidcDemo, type OidcDemo } from "../../src/app/mock/oidc-demo-seed.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { startServer, type RunningServer } from "../../src/server/server.ts";
import { launchBrowser } from "../support/browser.ts";
import { mockOf } from "../../src/app/mock/installed-mock.ts";

const outDir = path.resolve(process.env.SHOMEI_SCREENSHOT_DIR ?? "screenshots");
const languages = ["ja", "en"] as const;
const viewports = { desktop: { width: 1280, height: 860 }, phone: { width: 390, height: 844 } } as const;
const schemes = ["light", "dark"] as const;

type Language = (typeof languages)[number];

interface Walk {
  server: RunningServer;
  demo: OidcDemo;
  accountId: string;
  browser: Browser;
  origin: string;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "shomei-screenshots-"));
  mkdirSync(outDir, { recursive: true });
  const config = loadConfig({
    env: {},
    overrides: { host: "127.0.0.1", port: 0, databaseUrl: `sqlite:${path.join(dataDir, "shomei.db")}`, dataDir, mode: "mock", logLevel: "silent" },
  });
  const server = await startServer(config, createLogger("silent"));
  const browser = await launchBrowser();
  let taken = 0;
  try {
    const demo = await seedOidcDemo(server.domain.oidc, dataDir, Date.now());
    await seedMockCard(server.domain, await seedDemo(server.domain, dataDir));
    const accountId = (await server.domain.accounts.create("screenshot-cards", "active")).id;
    const walk: Walk = { server, demo, accountId, browser, origin: new URL(server.domain.oidc.issuer).origin };
    let person = 0;
    for (const language of languages) {
      for (const [size, viewport] of Object.entries(viewports)) {
        for (const scheme of schemes) {
          person += 1;
          taken += await walkPages(walk, language, `${language}-${size}-${scheme}`, person, {
            viewport,
            colorScheme: scheme,
            isMobile: size === "phone",
            // The other language in the browser: the pages must follow the flow's.
            locale: language === "ja" ? "en-US" : "ja-JP",
          });
        }
      }
    }
  } finally {
    await browser.close();
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(`${taken} screenshots in ${outDir}`);
}

/** One person's walk through every page, one screenshot per page state; the number taken. */
async function walkPages(
  w: Walk,
  language: Language,
  prefix: string,
  n: number,
  options: Parameters<Browser["newContext"]>[0],
): Promise<number> {
  const oidc = w.server.domain.oidc;
  const login = `screenshot-${n}`;
  const password = `screenshot-password-${n}`;
  const row = await oidc.users.create({ login, password, name: `Screenshot ${n}`, email: `${login}@example.com` });
  await oidc.users.enrolTotp(row.id);
  const user = (await oidc.users.find(row.id))!;
  const card = await mockOf(w.server.domain).createCertificate(w.accountId, { type: "jpki_card_digital_signature", commonName: "Card Holder" });

  const context = await w.browser.newContext(options);
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  let count = 0;
  const shot = async (name: string) => {
    count += 1;
    await page.screenshot({ path: path.join(outDir, `${prefix}-${String(count).padStart(2, "0")}-${name}.png`), fullPage: true });
  };
  const at = (pathname: string) => page.waitForURL((url) => url.pathname === pathname);
  const type = async (selector: string, text: string) => {
    await page.locator(selector).fill("");
    await page.locator(selector).focus();
    await page.keyboard.insertText(text);
  };
  const signChallenge = async () => {
    const text = await page.locator("#challenge-text").inputValue();
    await type("#certificate", card.certificatePem);
    await type("#signature", sign("sha256", Buffer.from(text, "utf8"), card.privateKeyPem).toString("base64"));
  };
  const request = (state: string, extra: Record<string, string> = {}) =>
    `${oidc.endpoints.authorization}?${new URLSearchParams({
      client_id: w.demo.clientId,
      redirect_uri: w.demo.redirectUri,
      response_type: "code",
      scope: "openid profile email",
      state,
      ui_locales: language,
      ...extra,
    }).toString()}`;
  const payment = JSON.stringify([
    { type: "payment_initiation", actions: ["initiate"], instructedAmount: { currency: "JPY", amount: "1250" }, creditorName: "Example Shop" },
  ]);

  try {
    await page.goto(`${w.origin}/?ui_locales=${language}`);
    await shot("home");

    await page.goto(request("screenshots", { acr_values: "high", authorization_details: payment }));
    await at("/auth/login");
    const firstLogin = page.url();
    await shot("login");
    await type("#login", login);
    await type("#password", "not-the-password");
    await page.keyboard.press("Enter");
    await page.locator("[role=alert]").waitFor();
    await shot("login-wrong-password");
    await type("#password", password);
    await page.keyboard.press("Enter");
    await at("/auth/reauth");
    await shot("step-up-code");
    await type("#otp", String((Number(oidc.users.currentOtp(user)) + 1) % 1_000_000).padStart(6, "0"));
    await page.keyboard.press("Enter");
    await page.locator("[role=alert]").waitFor();
    await shot("step-up-wrong-code");
    await type("#otp", oidc.users.currentOtp(user)!);
    await page.keyboard.press("Enter");
    await at("/auth/consent");
    await shot("consent");
    await page.locator("button.primary").click();
    await page.waitForURL((url) => url.pathname === "/demo/callback");
    await shot("callback-code");

    await page.goto(`${w.origin}/`);
    await shot("home-signed-in");
    await page.goto(`${w.origin}/account/jpki`);
    await shot("account-no-certificate");
    await signChallenge();
    await page.keyboard.press("Enter");
    await page.locator("[data-notice]").waitFor();
    await shot("account-linked");

    await page.goto(request("screenshots-card", { acr_values: "very_high" }));
    await at("/auth/reauth");
    // The signature certificate's 基本4情報 notice, then the signing request it allows: QR code or app link.
    await shot("step-up-card");
    await page.locator("#basic-info-form button").click();
    await page.locator("#sign-request-form").waitFor();
    await shot("step-up-card-phone");
    await type("#certificate", "AAAA");
    await type("#signature", "AAAA");
    await page.keyboard.press("Enter");
    await page.locator("[role=alert]").waitFor();
    await shot("step-up-card-refused");
    await signChallenge();
    await page.keyboard.press("Enter");
    await page.waitForURL((url) => url.pathname === "/demo/callback");

    await page.goto(`${w.origin}/auth/logout`);
    await shot("sign-out");
    await page.locator("button.primary").click();
    await page.locator("h1").waitFor();
    await shot("signed-out");
    await page.goto(`${w.origin}/account/jpki`);
    await shot("account-signed-out");
    await page.locator("#sign-in").click();
    await at("/account/login");
    await shot("account-sign-in");
    await type("#login", login);
    await type("#password", password);
    await page.keyboard.press("Enter");
    await at("/account/jpki");

    // The card is revoked: the card's step-up is refused, and the level is then out of reach.
    await mockOf(w.server.domain).setStatus(w.accountId, card.certificate.id, { status: "revoked", revokedReason: 1 });
    await page.goto(request("screenshots-revoked", { acr_values: "very_high" }));
    await at("/auth/reauth");
    await signChallenge();
    await page.keyboard.press("Enter");
    await at("/auth/unreachable");
    await shot("level-out-of-reach");

    // An address of a sign-in that already ended.
    await page.goto(firstLogin);
    await shot("sign-in-ended");
    await page.goto(`${w.origin}/auth/logout`);
    await page.locator("button.primary").click();
    await page.locator("h1").waitFor();

    await page.goto(request("screenshots-cancel"));
    await at("/auth/login");
    await page.locator("#jpki-sign-in").click();
    await at("/auth/login/jpki");
    await shot("card-sign-in");
    await page.locator("#cancel-form button").click();
    await page.waitForURL((url) => url.pathname === "/demo/callback");
    await shot("callback-cancelled");

    // The demo user's card pages in mock mode: the mock card's section, its openssl command and key shown.
    await page.goto(`${w.demo.jpkiStepUpUrl}&ui_locales=${language}&prompt=login`);
    await at("/auth/login");
    await type("#login", w.demo.userLogin);
    await type("#password", w.demo.userPassword);
    await page.keyboard.press("Enter");
    await at("/auth/reauth");
    await page.locator("#mock-card summary").click();
    await shot("step-up-mock-card");

    await page.goto(`${oidc.endpoints.authorization}?client_id=nobody&response_type=code`);
    await shot("error-unknown-client");
    await page.goto(`${w.origin}/no-such-page`);
    await shot("error-not-found");
  } catch (error) {
    await shot("FAILED");
    throw new Error(`${prefix}: stopped at ${page.url()}`, { cause: error });
  } finally {
    await context.close();
  }
  return count;
}

await main();
