import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { decodeJwt } from "jose";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { seedDemo, type DemoData } from "../../src/app/mock/demo-seed.ts";
import { seedMockCard } from "../../src/app/mock/mock-card-seed.ts";
import type { MockCard } from "../../src/domain/mock/mock-card.ts";
import { seedOidcDemo, type OidcDemo } from "../../src/app/mock/oidc-demo-seed.ts";
import { browserSuiteTitle, browserUnavailable, launchBrowser, pageWidths } from "../support/browser.ts";
import { basicAuthorization, getUserinfo, postToken } from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/*
 * JPKI step-up in Chromium with the mock environment's card: the page's own
 * script signs the challenge with WebCrypto, as a signing app would. Then the
 * card is revoked with SetMockCertificateStatus and the next step-up is refused.
 */
const unavailable = browserUnavailable();

describe.skipIf(unavailable !== undefined)(browserSuiteTitle("JPKI sign-in with the mock card in a real browser", unavailable), () => {
  let dataDir: string;
  let server: TestServer;
  let browser: Browser;
  let demo: DemoData;
  let oidcDemo: OidcDemo;
  let card: MockCard;
  let screenshotDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "shomei-jpki-browser-"));
    // Kept only when a directory is named, to look at; otherwise thrown away with the rest.
    screenshotDir = process.env.SHOMEI_SCREENSHOT_DIR ?? path.join(dataDir, "screenshots");
    mkdirSync(screenshotDir, { recursive: true });
    browser = await launchBrowser();
  });

  // A server and mock environment of each test's own: a test that revokes the card leaves no other a way to very_high.
  let servers = 0;
  beforeEach(async () => {
    const home = path.join(dataDir, `server-${++servers}`);
    mkdirSync(home);
    server = await startTestServer(`sqlite:${path.join(home, "shomei.db")}`, { dataDir: home });
    demo = await seedDemo(server.domain, home);
    oidcDemo = await seedOidcDemo(server.domain.oidc, home, Date.now());
    card = await seedMockCard(server.domain, demo);
  });

  afterEach(async () => {
    await server?.close();
  });

  afterAll(async () => {
    await browser?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** Where the tab is once the demo app's callback got a code; the code. */
  async function codeAtCallback(page: Page, state: string): Promise<string> {
    await page.waitForURL((url) => url.pathname === "/demo/callback");
    const url = new URL(page.url());
    expect(url.searchParams.get("error"), url.searchParams.get("error_description") ?? "").toBeNull();
    expect(url.searchParams.get("state")).toBe(state);
    return url.searchParams.get("code")!;
  }

  async function redeem(code: string) {
    const reply = await postToken(server, { grant_type: "authorization_code", code, redirect_uri: oidcDemo.redirectUri }, {
      authorization: basicAuthorization(oidcDemo.clientId, oidcDemo.clientSecret),
    });
    expect(reply.status, JSON.stringify(reply.json)).toBe(200);
    return { idToken: decodeJwt(reply.json!.id_token as string), accessToken: reply.json!.access_token as string };
  }

  it("in Japanese on a phone, chosen by the browser's language: the card pages fit a 360 px screen", async () => {
    const context = await browser.newContext({ viewport: { width: 360, height: 740 }, locale: "ja-JP" });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    const fits = async (name: string) => {
      expect(await page.locator("html").getAttribute("lang")).toBe("ja");
      const { scrollWidth, clientWidth, widest } = await pageWidths(page);
      expect(scrollWidth, `${name}: widest element ${widest}`).toBeLessThanOrEqual(clientWidth);
      await page.screenshot({ path: path.join(screenshotDir, `${name}.png`), fullPage: true });
    };
    await page.goto(`${oidcDemo.jpkiStepUpUrl}&max_age=0`);
    await page.waitForURL((url) => url.pathname === "/auth/login");
    await fits("jpki-ja-01-sign-in");
    await page.locator("#login").fill(oidcDemo.userLogin);
    await page.locator("#password").fill(oidcDemo.userPassword);
    await page.locator("button.primary").click();
    await page.waitForURL((url) => url.pathname === "/auth/reauth");
    await expect.poll(() => page.getByRole("heading", { level: 1 }).innerText()).toBe("マイナンバーカードで本人確認");
    expect(await page.getByRole("button", { name: "モックカードで署名" }).count()).toBe(1);
    await fits("jpki-ja-02-step-up");
    await page.goto(new URL("/account/jpki", page.url()).href);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).innerText()).toBe("マイナンバーカードの電子証明書");
    await fits("jpki-ja-03-linked-certificates");
    await context.close();
  });

  it("low → very_high with the mock card; revoked → the step-up is refused and jpki_verified turns false", async () => {
    const context = await browser.newContext({ viewport: { width: 1024, height: 900 } });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    const scriptErrors: string[] = [];
    page.on("pageerror", (error) => scriptErrors.push(error.message));
    // Content security policy violations and script exceptions; a refused step-up's 403 and a favicon's 404 are not.
    page.on("console", (message) => {
      if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) scriptErrors.push(message.text());
    });

    // Low: the password.
    await page.goto(oidcDemo.authorizationUrl);
    await page.getByLabel("Username", { exact: true }).fill(oidcDemo.userLogin);
    await page.getByLabel("Password", { exact: true }).fill(oidcDemo.userPassword);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.waitForURL((url) => url.pathname === "/auth/consent");
    await page.getByRole("button", { name: "Allow" }).click();
    const low = await redeem(await codeAtCallback(page, "demo-state"));
    expect(low.idToken).toMatchObject({ acr: "low", amr: ["pwd"], jpki_verified: true });

    // very_high: the JPKI page, signed in the page with the mock card.
    await page.goto(oidcDemo.jpkiStepUpUrl);
    await page.waitForURL((url) => url.pathname === "/auth/reauth");
    await expect.poll(() => page.getByRole("heading", { level: 1 }).innerText()).toBe("Confirm it's you with your My Number card");
    const response = await page.reload();
    const csp = response!.headers()["content-security-policy"]!;
    expect(csp.split(";").map((d) => d.trim())).toEqual(expect.arrayContaining(["default-src 'none'", "script-src 'self'"]));
    expect(await page.locator("#mock-openssl").innerText()).toMatch(/^printf '%s' 'shomei JPKI sign-in [A-Za-z0-9_-]{43}' \| openssl dgst -sha256 -sign mock-card\.key \| openssl base64 -A$/);
    await page.screenshot({ path: path.join(screenshotDir, "jpki-01-step-up.png"), fullPage: true });
    await page.getByRole("button", { name: "Sign with the mock card" }).click();
    const high = await redeem(await codeAtCallback(page, "demo-jpki"));
    expect(high.idToken).toMatchObject({ acr: "very_high", amr: ["jpki_sig", "hwk", "sc"], jpki_verified: true, sub: low.idToken.sub });
    expect((await getUserinfo(server, high.accessToken)).json.jpki_verified).toBe(true);

    // Revoked through the API, as a developer would with the demo token.
    const revoke = await fetch(`${server.url}/service.verify.v2.MockService/SetMockCertificateStatus`, {
      method: "POST",
      headers: { authorization: `Bearer ${demo.token}`, "content-type": "application/json" },
      body: JSON.stringify({ certificateId: card.certificateId, status: "STATUS_REVOKED", revokedReason: "CRL_REASON_KEY_COMPROMISE" }),
    });
    expect(revoke.status, await revoke.clone().text()).toBe(200);

    await page.goto(`${oidcDemo.jpkiStepUpUrl}&max_age=0`);
    await page.waitForURL((url) => url.pathname === "/auth/reauth");
    await page.getByRole("button", { name: "Sign with the mock card" }).click();
    // The card was the only way to very_high: a page says what happened and what to do, with no form that cannot succeed.
    await page.waitForURL((url) => url.pathname === "/auth/unreachable");
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("You can't confirm it's you at this level right now");
    const alert = page.getByRole("alert");
    expect(await alert.getAttribute("data-reason")).toBe("signature_revoked");
    expect(await alert.innerText()).toBe(
      "The signature certificate on your My Number card (署名用電子証明書) has been revoked. This happens when your name or address changes, or when the card is renewed.",
    );
    expect(await page.getByRole("link", { name: "Link your new certificate" }).getAttribute("href")).toBe("/account/jpki?ui_locales=en");
    expect(await page.locator("textarea, input:not([type=hidden])").count()).toBe(0);
    await page.screenshot({ path: path.join(screenshotDir, "jpki-02-revoked.png"), fullPage: true });
    expect((await getUserinfo(server, high.accessToken)).json.jpki_verified).toBe(false);

    // In Japanese on a phone, as the person may read it; Return to the app is the page's primary action, and the app gets the error.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${page.url()}&ui_locales=ja`);
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("このレベルの本人確認が今はできません");
    const { scrollWidth, clientWidth, widest } = await pageWidths(page);
    expect(scrollWidth, `widest element ${widest}`).toBeLessThanOrEqual(clientWidth);
    expect(await page.getByRole("alert").innerText()).toBe("マイナンバーカードの署名用電子証明書が失効しています。氏名や住所が変わったときや、カードを更新したときに失効します。");
    await page.screenshot({ path: path.join(screenshotDir, "jpki-03-revoked-ja.png"), fullPage: true });
    await page.getByRole("button", { name: "アプリに戻る" }).click();
    await page.waitForURL((url) => url.pathname === "/demo/callback");
    const back = new URL(page.url()).searchParams;
    expect(back.get("error")).toBe("unmet_authentication_requirements");
    expect(back.get("state")).toBe("demo-jpki");
    expect(back.get("code")).toBeNull();
    expect(scriptErrors).toEqual([]);
    await context.close();
  });
});
