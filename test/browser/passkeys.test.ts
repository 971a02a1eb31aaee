import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { browserSuiteTitle, browserUnavailable, launchBrowser, pageWidths } from "../support/browser.ts";
import { allowIfAsked, idTokenAtCallback, startPasskeyServer, type PasskeyServer } from "../support/passkey-server.ts";
import { addVirtualAuthenticator, withoutConditionalRequests } from "../support/virtual-authenticator.ts";

/*
 * Passkeys in Chromium with a virtual authenticator (DevTools protocol
 * WebAuthn domain): added on the security page, then signing in with no
 * password, stepping up to high, removed and refused; in English on a
 * computer and in Japanese on a 390 px phone in dark mode.
 */
const unavailable = browserUnavailable();

describe.skipIf(unavailable !== undefined)(browserSuiteTitle("Passkeys in a real browser", unavailable), () => {
  let dataDir: string;
  let browser: Browser;
  let s: PasskeyServer;
  let context: BrowserContext | undefined;
  let screenshotDir: string;
  let servers = 0;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "shomei-passkeys-browser-"));
    screenshotDir = process.env.SHOMEI_SCREENSHOT_DIR ?? path.join(dataDir, "screenshots");
    mkdirSync(screenshotDir, { recursive: true });
    browser = await launchBrowser();
  });

  beforeEach(async () => {
    s = await startPasskeyServer(path.join(dataDir, `server-${++servers}`));
  });

  afterEach(async () => {
    await context?.close();
    context = undefined;
    await s?.server.close();
  });

  afterAll(async () => {
    await browser?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** A page whose script errors and CSP violations fail the test. */
  async function newPage(options: Parameters<Browser["newContext"]>[0] = {}): Promise<{ page: Page; errors: string[] }> {
    context = await browser.newContext({ viewport: { width: 1024, height: 900 }, ...options });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) errors.push(message.text());
    });
    return { page, errors };
  }

  async function signInToSecurityPage(page: Page, locale: "en" | "ja"): Promise<void> {
    await page.goto(`${s.base}/account/login?next=security&ui_locales=${locale}`);
    await page.locator("#login").fill(s.login);
    await page.locator("#password").fill(s.password);
    await page.locator("#password").press("Enter");
    await page.waitForURL((url) => url.pathname === "/account/security");
  }

  async function addPasskey(page: Page, name: string): Promise<void> {
    await page.locator("#passkey-name").fill(name);
    await page.locator("#passkey-name").press("Enter");
    await expect.poll(() => page.locator("#passkeys th").first().innerText()).toContain(name);
  }

  async function fits(page: Page, name: string): Promise<void> {
    const { scrollWidth, clientWidth, widest } = await pageWidths(page);
    expect(scrollWidth, `${name}: widest element ${widest}`).toBeLessThanOrEqual(clientWidth);
    await page.screenshot({ path: path.join(screenshotDir, `${name}.png`), fullPage: true });
  }

  it("adds a passkey, signs in with it (no password), steps up to high with it, and is refused once it is removed", async () => {
    const { page, errors } = await newPage();
    await addVirtualAuthenticator(page);
    await signInToSecurityPage(page, "en");
    expect(await page.locator("#no-passkeys").innerText()).toBe("You have no passkeys yet.");
    await addPasskey(page, "Work laptop");
    expect(await page.locator("[role=status]").first().innerText()).toContain("The passkey “Work laptop” was added.");
    await fits(page, "passkeys-en-01-security");
    const stored = await s.server.domain.oidc.passkeys.list((await s.server.domain.oidc.users.findByLogin(s.login))!.id);
    expect(stored.map((p) => ({ name: p.name, backupEligible: p.backupEligible }))).toEqual([{ name: "Work laptop", backupEligible: false }]);

    // Sign in with the passkey alone, in a browser that forgot its session: the login page's conditional
    // request, started as it loads, is answered by the virtual authenticator at once (a person picks it from the
    // username field's suggestions), and the page sends it.
    await context!.clearCookies();
    await page.goto(s.demo.authorizationUrl);
    await allowIfAsked(page);
    const signedIn = await idTokenAtCallback(page, s);
    expect(signedIn.amr).toEqual(["passkey", "hwk", "user"]);
    expect(signedIn.acr).toBe("high");

    // A password session stepping up to high: the passkey is the way offered. (From here the browser offers no
    // passkeys in the username field, or the virtual authenticator would answer the login page's request again.)
    await page.addInitScript(withoutConditionalRequests);
    await context!.clearCookies();
    await page.goto(s.demo.stepUpUrl);
    await page.locator("#login").fill(s.login);
    await page.locator("#password").fill(s.password);
    await page.locator("#password").press("Enter");
    await page.waitForURL((url) => url.pathname === "/auth/reauth");
    expect(await page.locator("#reauth-form").count()).toBe(0);
    await expect.poll(() => page.locator("#passkey-step-up").isVisible()).toBe(true);
    await fits(page, "passkeys-en-03-step-up");
    await page.getByRole("button", { name: "Use a passkey" }).click();
    await allowIfAsked(page);
    const steppedUp = await idTokenAtCallback(page, s);
    expect(steppedUp.acr).toBe("high");
    expect(steppedUp.amr).toEqual(["passkey", "hwk", "user"]);

    // Removed: the authenticator still has it, the server refuses it.
    await page.goto(`${s.base}/account/security?ui_locales=en`);
    await page.getByRole("button", { name: "Remove the passkey Work laptop" }).click();
    await expect.poll(() => page.locator("#no-passkeys").count()).toBe(1);
    await context!.clearCookies();
    await page.goto(s.demo.authorizationUrl);
    await page.getByRole("button", { name: "Sign in with a passkey" }).click();
    await expect.poll(() => page.locator("#passkey-error").getAttribute("data-error")).toBe("passkey_unknown");
    expect(await page.locator("#passkey-error").innerText()).toContain("This passkey is not registered");
    // Still the sign-in page (the answer to its passkey form), with the password form there to use.
    expect(await page.locator("#login").isVisible()).toBe(true);
    expect(errors).toEqual([]);
  });

  it("in Japanese on a 390 px phone in dark mode, in a browser without conditional requests: adds, signs in with the button, steps up", async () => {
    const { page, errors } = await newPage({ viewport: { width: 390, height: 844 }, locale: "ja-JP", colorScheme: "dark" });
    await page.addInitScript(withoutConditionalRequests);
    await addVirtualAuthenticator(page);
    await signInToSecurityPage(page, "ja");
    expect(await page.locator("html").getAttribute("lang")).toBe("ja");
    expect(await page.locator("#no-passkeys").innerText()).toBe("パスキーはまだ登録されていません。");
    await fits(page, "passkeys-ja-01-security-empty");
    await addPasskey(page, "仕事用ノートPC");
    expect(await page.locator("[role=status]").first().innerText()).toContain("パスキー「仕事用ノートPC」を登録しました。");
    await fits(page, "passkeys-ja-02-security");

    await context!.clearCookies();
    await page.goto(`${s.demo.authorizationUrl}&ui_locales=ja`);
    await page.waitForURL((url) => url.pathname === "/auth/login");
    expect(await page.locator("#login").getAttribute("autocomplete")).toBe("username webauthn");
    await fits(page, "passkeys-ja-03-login");
    await page.getByRole("button", { name: "パスキーでログイン" }).click();
    await allowIfAsked(page);
    expect((await idTokenAtCallback(page, s)).amr).toEqual(["passkey", "hwk", "user"]);

    await context!.clearCookies();
    await page.goto(`${s.demo.stepUpUrl}&ui_locales=ja`);
    await page.locator("#login").fill(s.login);
    await page.locator("#password").fill(s.password);
    await page.locator("#password").press("Enter");
    await page.waitForURL((url) => url.pathname === "/auth/reauth");
    await expect.poll(() => page.getByRole("button", { name: "パスキーを使う" }).isVisible()).toBe(true);
    await fits(page, "passkeys-ja-04-step-up");
    await page.getByRole("button", { name: "パスキーを使う" }).click();
    await allowIfAsked(page);
    const token = await idTokenAtCallback(page, s);
    expect(token.acr).toBe("high");
    expect(errors).toEqual([]);
  });
});
