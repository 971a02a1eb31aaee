import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import jsQRModule from "jsqr";
import type { Browser, BrowserContextOptions, Page } from "playwright-core";
import { PNG } from "pngjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../src/app/mock/demo-seed.ts";
import { seedMockCard } from "../../src/app/mock/mock-card-seed.ts";
import { seedOidcDemo, type OidcDemo } from "../../src/app/mock/oidc-demo-seed.ts";
import type { MockCard } from "../../src/domain/mock/mock-card.ts";
import { browserSuiteTitle, browserUnavailable, launchBrowser, pageWidths } from "../support/browser.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/*
 * Signing with a phone, in Chromium: the page's QR code is read back from a
 * screenshot with a real decoder and must hold the request's URL; the
 * reference signer (`shomei card sign`, run as a command) answers it; the
 * page goes on by itself. On a phone's width the app link replaces the QR
 * code; without scripts the continue button does the page's work.
 */
const unavailable = browserUnavailable();
/** jsQR is a UMD bundle: its function is the default export under one module loader and the module under another. */
const jsQR = ((jsQRModule as unknown as { default?: unknown }).default ?? jsQRModule) as (data: Uint8ClampedArray, width: number, height: number) => { data: string } | null;
const root = fileURLToPath(new URL("../..", import.meta.url));

describe.skipIf(unavailable !== undefined)(browserSuiteTitle("JPKI signing with a phone in a real browser", unavailable), () => {
  let dataDir: string;
  let server: TestServer;
  let browser: Browser;
  let oidcDemo: OidcDemo;
  let card: MockCard;
  let keyFile: string;
  let certificateFile: string;
  let screenshotDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "shomei-phone-browser-"));
    screenshotDir = process.env.SHOMEI_SCREENSHOT_DIR ?? path.join(dataDir, "screenshots");
    mkdirSync(screenshotDir, { recursive: true });
    server = await startTestServer(`sqlite:${path.join(dataDir, "shomei.db")}`, { dataDir });
    const demo = await seedDemo(server.domain, dataDir);
    oidcDemo = await seedOidcDemo(server.domain.oidc, dataDir, Date.now());
    card = await seedMockCard(server.domain, demo);
    keyFile = path.join(dataDir, "card.key");
    certificateFile = path.join(dataDir, "card.pem");
    writeFileSync(keyFile, card.privateKeyPem, { mode: 0o600 });
    writeFileSync(certificateFile, card.certificatePem);
    browser = await launchBrowser();
    // The demo app's grant, once, so that the card's sign-in goes straight back to it.
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(oidcDemo.authorizationUrl);
    await page.locator("#login").fill(oidcDemo.userLogin);
    await page.locator("#password").fill(oidcDemo.userPassword);
    await page.keyboard.press("Enter");
    await page.waitForURL((url) => url.pathname === "/auth/consent");
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForURL((url) => url.pathname === "/demo/callback");
    await context.close();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** `shomei card sign`, as a developer runs it: its exit code and what it printed. */
  function cardSign(requestUrl: string, code: string, extra: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ["bin/shomei.js", "card", "sign", requestUrl, "--key", keyFile, "--certificate", certificateFile, "--code", code, ...extra], {
        cwd: root,
        env: { PATH: process.env.PATH ?? "", HOME: dataDir, SHOMEI_DATA_DIR: path.join(dataDir, "cli") },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
      child.on("error", reject);
      child.on("close", (exit) => resolve({ code: exit, stdout, stderr }));
    });
  }

  async function newPage(options: BrowserContextOptions): Promise<{ page: Page; close: () => Promise<void>; errors: string[] }> {
    const context = await browser.newContext(options);
    context.setDefaultTimeout(15_000);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) errors.push(message.text());
    });
    return { page, close: () => context.close(), errors };
  }

  /** The card's sign-in page of a new authorization request, in `language`. */
  async function atCardSignIn(page: Page, language: "en" | "ja"): Promise<void> {
    await page.goto(`${oidcDemo.authorizationUrl}&prompt=login&ui_locales=${language}`);
    await page.waitForURL((url) => url.pathname === "/auth/login");
    await page.locator("#jpki-sign-in").click();
    await page.waitForURL((url) => url.pathname === "/auth/login/jpki");
  }

  /** What the QR code on the screen says, read from a screenshot of it by a real decoder. */
  async function qrContent(page: Page): Promise<string | undefined> {
    const png = PNG.sync.read(await page.locator("#sign-request-qr").screenshot());
    return jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data;
  }

  const requestUrlPattern = () => new RegExp(`^${server.domain.oidc.issuer.replace(/[.]/g, "\\.")}/api/jpki/v1/sign-requests/[A-Za-z0-9_-]{43}$`);

  for (const [language, heading, answered, lastAttempt] of [
    ["en", "Sign with the app on your phone", "Answered: the page continues by itself.", /one PIN attempt left/],
    ["ja", "スマートフォンのアプリで署名", "Answered: the page continues by itself.", /暗証番号の入力はあと1回/],
  ] as const) {
    it(`on a computer in ${language}: the QR code holds the request's URL, the reference signer answers, the page continues by itself`, async () => {
      const { page, close, errors } = await newPage({ viewport: { width: 1280, height: 900 }, locale: language === "ja" ? "ja-JP" : "en-US" });
      await atCardSignIn(page, language);
      expect(await page.getByRole("heading", { level: 2, name: heading }).count()).toBe(1);
      const requestUrl = await qrContent(page);
      expect(requestUrl).toMatch(requestUrlPattern());
      expect(await page.locator("#sign-request-qr").getAttribute("data-content")).toBe(requestUrl);
      expect(await page.locator("#sign-request-app-link").isVisible()).toBe(false);
      const code = (await page.locator("#binding-code").innerText()).trim();
      expect(code).toMatch(/^\d{6}$/);
      await expect.poll(() => page.locator("#sign-request-status").innerText()).not.toBe("");
      await page.screenshot({ path: path.join(screenshotDir, `phone-${language}-01-computer.png`), fullPage: true });

      // A wrong PIN with one attempt left: the app says so, and the page warns before the last try.
      expect((await cardSign(requestUrl!, code, ["--pin-attempts-left", "1"])).code).toBe(0);
      await expect.poll(() => page.locator("#sign-request-status").innerText(), { timeout: 10_000 }).toMatch(lastAttempt);

      const signed = await cardSign(requestUrl!, code);
      expect(signed.stderr).toBe("");
      expect(signed.code).toBe(0);
      expect(signed.stdout).toContain("with the user authentication certificate");
      expect(signed.stdout).toContain(answered);
      // No click: the page's script learns the answer and continues to the app.
      await page.waitForURL((url) => url.pathname === "/demo/callback");
      expect(new URL(page.url()).searchParams.get("code")).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(errors).toEqual([]);
      await close();
    });
  }

  it("a refusal reaches the page by itself too: a wrong binding code, told in Japanese", async () => {
    const { page, close, errors } = await newPage({ viewport: { width: 1280, height: 900 }, locale: "ja-JP" });
    await atCardSignIn(page, "ja");
    const requestUrl = await qrContent(page);
    const code = (await page.locator("#binding-code").innerText()).trim();
    const wrong = await cardSign(requestUrl!, code === "000000" ? "000001" : "000000");
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^shomei card: binding_code_mismatch: The binding code does not match/);
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.getAttribute("data-error")).toBe("binding_code_mismatch");
    expect(await alert.innerText()).toContain("照合コードがこのページのコードと一致しなかった");
    // A new request to start again, with a code of its own.
    expect(await qrContent(page)).not.toBe(requestUrl);
    expect(errors).toEqual([]);
    await close();
  });

  for (const [language, openApp] of [
    ["ja", "署名アプリを開く"],
    ["en", "Open the signing app"],
  ] as const) {
    it(`on a phone in ${language}, dark: the app link instead of the QR code, and the page fits`, async () => {
      const { page, close } = await newPage({ viewport: { width: 390, height: 844 }, colorScheme: "dark", locale: language === "ja" ? "ja-JP" : "en-US", isMobile: true, hasTouch: true });
      await atCardSignIn(page, language);
      expect(await page.locator("#sign-request-qr").isVisible()).toBe(false);
      const link = page.getByRole("link", { name: openApp });
      expect(await link.isVisible()).toBe(true);
      const href = (await link.getAttribute("href"))!;
      expect(href).toMatch(/^shomei-jpki:\/\/sign\?request=/);
      expect(new URL(href).searchParams.get("request")).toMatch(requestUrlPattern());
      expect(await page.locator("#binding-code").isVisible()).toBe(true);
      const { scrollWidth, clientWidth, widest } = await pageWidths(page);
      expect(scrollWidth, `widest element ${widest}`).toBeLessThanOrEqual(clientWidth);
      await page.screenshot({ path: path.join(screenshotDir, `phone-${language}-02-phone-dark.png`), fullPage: true });
      await close();
    });
  }

  it("without scripts: the continue button takes the answer", async () => {
    const { page, close } = await newPage({ viewport: { width: 1280, height: 900 }, javaScriptEnabled: false });
    await atCardSignIn(page, "en");
    const requestUrl = await page.locator("#sign-request-qr").getAttribute("data-content");
    const code = (await page.locator("#binding-code").innerText()).trim();
    // Pressed too early: the same request again, and the page says the app has not answered.
    await page.locator("#sign-request-form button").click();
    await page.getByRole("alert").waitFor();
    expect(await page.getByRole("alert").getAttribute("data-error")).toBe("sign_request_pending");
    expect(await page.locator("#sign-request-qr").getAttribute("data-content")).toBe(requestUrl);
    expect((await cardSign(requestUrl!, code)).code).toBe(0);
    await page.getByRole("button", { name: "Continue" }).first().click();
    await page.waitForURL((url) => url.pathname === "/demo/callback");
    await close();
  });

  it("step-up to very_high: the 基本4情報 notice first, then the request, answered, and on by itself", async () => {
    const { page, close, errors } = await newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${oidcDemo.jpkiStepUpUrl}&prompt=login`);
    await page.waitForURL((url) => url.pathname === "/auth/login");
    await page.locator("#login").fill(oidcDemo.userLogin);
    await page.locator("#password").fill(oidcDemo.userPassword);
    await page.keyboard.press("Enter");
    await page.waitForURL((url) => url.pathname === "/auth/reauth");
    expect(await page.locator("#basic-info-consent").innerText()).toContain("name, address, date of birth and gender");
    expect(await page.locator("#sign-request-qr").count()).toBe(0);
    await page.screenshot({ path: path.join(screenshotDir, "phone-en-03-basic-info.png"), fullPage: true });
    await page.getByRole("button", { name: "Agree and sign with the app" }).click();
    await page.locator("#sign-request-qr").waitFor();
    const requestUrl = await qrContent(page);
    expect(requestUrl).toMatch(requestUrlPattern());
    const signed = await cardSign(requestUrl!, (await page.locator("#binding-code").innerText()).trim());
    expect(signed.stdout).toContain("with the signature certificate");
    await page.waitForURL((url) => url.pathname === "/demo/callback");
    expect(errors).toEqual([]);
    await close();
  });
});
