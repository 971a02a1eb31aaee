import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { browserSuiteTitle, browserUnavailable, launchBrowser } from "../support/browser.ts";
import { allowIfAsked, idTokenAtCallback, startPasskeyServer, type PasskeyServer } from "../support/passkey-server.ts";
import { addVirtualAuthenticator, craftAssertion, withoutConditionalRequests, type VirtualAuthenticator } from "../support/virtual-authenticator.ts";

/*
 * What is refused, in Chromium with a virtual authenticator: a replayed
 * answer, an assertion for another origin or RP ID, a cloned authenticator
 * (its signature counter went back), a cancelled ceremony; and the keyboard
 * (Enter submits the password form, Tab reaches the passkey button).
 */
const unavailable = browserUnavailable();

describe.skipIf(unavailable !== undefined)(browserSuiteTitle("Passkey refusals and the keyboard in a real browser", unavailable), () => {
  let dataDir: string;
  let browser: Browser;
  let s: PasskeyServer;
  let context: BrowserContext | undefined;
  let servers = 0;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "shomei-passkey-refusals-"));
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

  /** A page with a virtual authenticator holding a passkey added on the security page; signed out again. */
  async function withPasskey(options: Record<string, unknown> = {}): Promise<{ page: Page; authenticator: VirtualAuthenticator }> {
    context = await browser.newContext({ viewport: { width: 1024, height: 900 } });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await page.addInitScript(withoutConditionalRequests);
    const authenticator = await addVirtualAuthenticator(page, options);
    await page.goto(`${s.base}/account/login?next=security&ui_locales=en`);
    await page.locator("#login").fill(s.login);
    await page.locator("#password").fill(s.password);
    await page.locator("#password").press("Enter");
    await page.waitForURL((url) => url.pathname === "/account/security");
    await page.locator("#passkey-name").fill("Key");
    await page.getByRole("button", { name: "Add a passkey" }).click();
    await expect.poll(() => page.locator("#passkeys").count()).toBe(1);
    await context.clearCookies();
    return { page, authenticator };
  }

  /** The login page of a new authorization request; its passkey form's challenge. */
  async function loginPage(page: Page): Promise<string> {
    await page.goto(s.demo.authorizationUrl);
    await page.waitForURL((url) => url.pathname === "/auth/login");
    const options = JSON.parse((await page.locator("#passkey-form").getAttribute("data-options"))!) as { challenge: string };
    return options.challenge;
  }

  /** Posts an answer to the login page's passkey form, as the page would, with the browser's cookies. */
  async function postAnswer(page: Page, response: string) {
    const form = page.locator("#passkey-form");
    const action = new URL((await form.getAttribute("action"))!, page.url()).href;
    const csrf = (await form.locator("input[name=csrf]").getAttribute("value"))!;
    return page.request.post(action, { form: { csrf, response }, maxRedirects: 0 });
  }

  it("a replayed answer is refused: its challenge was used up by the sign-in it made", async () => {
    const { page } = await withPasskey();
    await loginPage(page);
    const sent = page.waitForRequest((request) => request.url().includes("/auth/login/passkey") && request.method() === "POST");
    await page.getByRole("button", { name: "Sign in with a passkey" }).click();
    const body = new URLSearchParams((await sent).postData()!);
    await allowIfAsked(page);
    await idTokenAtCallback(page, s);

    await context!.clearCookies();
    await loginPage(page);
    const replay = await postAnswer(page, body.get("response")!);
    expect(replay.status()).toBe(400);
    expect(await replay.text()).toContain('data-error="challenge_invalid"');
    expect(replay.headers()["set-cookie"] ?? "").not.toContain("session");
  });

  it("an assertion for another origin or another RP ID is refused, though signed with the passkey's own key", async () => {
    const { page, authenticator } = await withPasskey();
    const [credential] = await authenticator.credentials();
    for (const [origin, rpId] of [["https://evil.example", "localhost"], [s.base, "evil.example"]] as const) {
      const challenge = await loginPage(page);
      const reply = await postAnswer(page, craftAssertion(credential!, { challenge, origin, rpId, signCount: credential!.signCount + 10 }));
      expect(reply.status(), `${origin} ${rpId}`).toBe(401);
      expect(await reply.text()).toContain('data-error="verification_failed"');
    }
    // The same crafted answer with the right origin and RP ID passes: the refusals were for what they name.
    const challenge = await loginPage(page);
    const good = await postAnswer(page, craftAssertion(credential!, { challenge, origin: s.base, rpId: "localhost", signCount: credential!.signCount + 10 }));
    expect(good.status()).toBe(303);
  });

  it("a cloned authenticator is refused: its signature counter went back, and the log says so without key material", async () => {
    const { page, authenticator } = await withPasskey();
    await loginPage(page);
    await page.getByRole("button", { name: "Sign in with a passkey" }).click();
    await allowIfAsked(page);
    await idTokenAtCallback(page, s);
    const [used] = await authenticator.credentials();
    expect(used!.signCount).toBeGreaterThan(0);

    // The copy: the same key and credential, with an older counter.
    await authenticator.cdp.send("WebAuthn.removeCredential", { authenticatorId: authenticator.authenticatorId, credentialId: used!.credentialId });
    await authenticator.cdp.send("WebAuthn.addCredential", { authenticatorId: authenticator.authenticatorId, credential: { ...used!, signCount: 0 } });
    await context!.clearCookies();
    await loginPage(page);
    await page.getByRole("button", { name: "Sign in with a passkey" }).click();
    await expect.poll(() => page.locator("#passkey-error").getAttribute("data-error")).toBe("counter_went_back");
    const warnings = s.server.logs.filter((line) => line.event === "passkey_counter_went_back");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.level).toBe("warn");
    expect(s.server.rawLogs()).not.toContain(used!.privateKey);
  });

  it("a cancelled ceremony leaves the person on the same page with a message", async () => {
    const { page, authenticator } = await withPasskey();
    // The authenticator now fails user verification: the browser answers as when the person cancels its dialog.
    await authenticator.cdp.send("WebAuthn.setUserVerified", { authenticatorId: authenticator.authenticatorId, isUserVerified: false });
    await loginPage(page);
    const before = page.url();
    await page.getByRole("button", { name: "Sign in with a passkey" }).click();
    await expect.poll(() => page.locator("#passkey-status").innerText()).toContain("No passkey was used");
    expect(page.url()).toBe(before);
    expect(await page.locator("#passkey-sign-in").isEnabled()).toBe(true);
  });

  it("keyboard: Enter in the password field signs in with the password, and Tab reaches the passkey button, which Enter presses", async () => {
    const { page } = await withPasskey();
    await loginPage(page);
    await page.locator("#login").fill(s.login);
    await page.locator("#password").fill(s.password);
    await page.locator("#password").press("Enter");
    await allowIfAsked(page);
    expect((await idTokenAtCallback(page, s)).amr).toEqual(["pwd"]);

    await context!.clearCookies();
    await loginPage(page);
    await page.locator("#password").focus();
    let focused = "";
    for (let i = 0; i < 5 && focused !== "passkey-sign-in"; i++) {
      await page.keyboard.press("Tab");
      focused = await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } } }).document.activeElement.id);
    }
    expect(focused).toBe("passkey-sign-in");
    await page.keyboard.press("Enter");
    await allowIfAsked(page);
    expect((await idTokenAtCallback(page, s)).amr).toEqual(["passkey", "hwk", "user"]);
  });

});
