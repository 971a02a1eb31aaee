import { mkdtempSync, rmSync } from "node:fs";
import { sign } from "node:crypto";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../src/app/mock/demo-seed.ts";
import { seedMockCard } from "../../src/app/mock/mock-card-seed.ts";
import { seedOidcDemo, type OidcDemo } from "../../src/app/mock/oidc-demo-seed.ts";
import { browserSuiteTitle, browserUnavailable, launchBrowser, pageWidths } from "../support/browser.ts";
import { mockCard, type TestCard } from "../support/jpki.ts";
import { contrastFailures, misLabelledLanguage, tabOrder } from "../support/page-audit.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { mockOf } from "../../src/app/mock/installed-mock.ts";

/*
 * Every page and every form as a person uses them, in Chromium, on a 390 px
 * phone in dark mode: typing and pressing Enter (never clicking the primary
 * button), Tab through every control, nothing wider than the screen, every
 * text at 4.5:1 and every control's edge at 3:1 in the dark and the light
 * scheme as rendered, and Japanese marked as Japanese. Once in Japanese with
 * an English browser, once in English with a Japanese one: the pages after
 * the flow (callback, account, sign-out) must follow the flow's language.
 */
const unavailable = browserUnavailable();

const words = {
  ja: {
    login: "ログイン",
    reauth: "本人確認",
    cardStepUp: "マイナンバーカードで本人確認",
    cardSignIn: "マイナンバーカードでログイン",
    consentAllow: "許可する",
    account: "マイナンバーカードの電子証明書",
    signOut: "ログアウト",
    signedOut: "ログアウトしました",
    signIn: "ログインする",
    cardLink: "マイナンバーカードでログインする",
    cancel: "キャンセルしてアプリに戻る",
    remove: "登録を解除",
    missingFields: "ユーザー名とパスワードを入力してください。",
    browserLocale: "en-US",
  },
  en: {
    login: "Sign in",
    reauth: "Confirm it's you",
    cardStepUp: "Confirm it's you with your My Number card",
    cardSignIn: "Sign in with your My Number card",
    consentAllow: "Allow",
    account: "Your My Number card certificates",
    signOut: "Sign out",
    signedOut: "You are signed out",
    signIn: "Sign in",
    cardLink: "Sign in with your My Number card instead",
    cancel: "Cancel and return to the app",
    remove: "Remove",
    missingFields: "Enter your username and password.",
    browserLocale: "ja-JP",
  },
} as const;

type Language = keyof typeof words;

describe.skipIf(unavailable !== undefined)(browserSuiteTitle("every page as a person uses it", unavailable), () => {
  let dataDir: string;
  let server: TestServer;
  let browser: Browser;
  let demo: OidcDemo;
  let cardAccountId: string;
  const contexts: BrowserContext[] = [];
  let people = 0;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "shomei-person-"));
    server = await startTestServer(`sqlite:${path.join(dataDir, "shomei.db")}`, { dataDir });
    demo = await seedOidcDemo(server.domain.oidc, dataDir, Date.now());
    // The demo user's mock card: the mock environment's section of the card pages (openssl command, key).
    await seedMockCard(server.domain, await seedDemo(server.domain, dataDir));
    cardAccountId = (await server.domain.accounts.create("person-cards", "active")).id;
    browser = await launchBrowser();
  });

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** Script errors and content security policy violations of every page (a page's own 4xx status is not one). */
  const pageErrors: string[] = [];

  /** A phone in dark mode whose browser prefers the other language. */
  async function phone(language: Language): Promise<Page> {
    const context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
      colorScheme: "dark",
      locale: words[language].browserLocale,
    });
    contexts.push(context);
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    page.on("pageerror", (error) => pageErrors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) pageErrors.push(message.text());
    });
    return page;
  }

  /** A person with a password, an authenticator app and a My Number card (not linked yet). */
  async function newPerson() {
    people += 1;
    const login = `person-${people}`;
    const password = `person-password-${people}`;
    const row = await server.domain.oidc.users.create({ login, password, name: `Person ${people}` });
    await server.domain.oidc.users.enrolTotp(row.id);
    const user = (await server.domain.oidc.users.find(row.id))!;
    const card = await mockCard(server, cardAccountId);
    return { login, password, code: () => server.domain.oidc.users.currentOtp(user)!, card };
  }

  function request(state: string, language: Language, extra: Record<string, string> = {}): string {
    const query = new URLSearchParams({
      client_id: demo.clientId,
      redirect_uri: demo.redirectUri,
      response_type: "code",
      scope: "openid profile",
      state,
      ui_locales: language,
      ...extra,
    });
    return `${server.domain.oidc.endpoints.authorization}?${query.toString()}`;
  }

  /** The provider's own origin (its cookies' host), where the pages are. */
  const origin = () => new URL(server.domain.oidc.issuer).origin;

  const heading = (page: Page) => page.getByRole("heading", { level: 1 }).innerText();

  async function arrive(page: Page, pathname: string, title?: string): Promise<void> {
    await page.waitForURL((url) => url.pathname === pathname);
    if (title !== undefined) await expect.poll(() => heading(page)).toBe(title);
  }

  /**
   * What must hold on every page: its language, nothing wider than the
   * phone, contrast in dark and light as rendered, the other language marked,
   * and Tab reaching every control in order.
   */
  async function audit(page: Page, language: Language, name: string): Promise<void> {
    expect(await page.locator("html").getAttribute("lang"), `${name}: page language`).toBe(language);
    const { scrollWidth, clientWidth, widest } = await pageWidths(page);
    expect(scrollWidth, `${name}: widest element ${widest}`).toBeLessThanOrEqual(clientWidth);
    expect(await contrastFailures(page), `${name}: contrast in the dark scheme`).toEqual([]);
    await scheme(page, "light");
    expect(await contrastFailures(page), `${name}: contrast in the light scheme`).toEqual([]);
    await scheme(page, "dark");
    expect(await misLabelledLanguage(page), `${name}: text of the other language`).toEqual([]);
    const { expected, reached } = await tabOrder(page);
    expect(reached, `${name}: Tab order`).toEqual(expected);
  }

  /** Switches the colour scheme and lets the fields' colour transitions finish before anything is measured. */
  async function scheme(page: Page, colorScheme: "light" | "dark"): Promise<void> {
    await page.emulateMedia({ colorScheme });
    await page.evaluate("Promise.all(document.getAnimations().map((a) => a.finished))");
  }

  /** Types into a field as a person does (focus, keys), not by setting its value. */
  async function type(page: Page, selector: string, text: string): Promise<void> {
    await page.locator(selector).click();
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.insertText(text);
  }

  /** The card's signature of the text the page shows, as a signing app makes it. */
  async function pasteSignedChallenge(page: Page, card: TestCard): Promise<void> {
    const text = await page.locator("#challenge-text").inputValue();
    await type(page, "#certificate", card.certificatePem);
    await type(page, "#signature", sign("sha256", Buffer.from(text, "utf8"), card.privateKeyPem).toString("base64"));
  }

  /** Tab until the named button has the focus, then Enter: what a keyboard user does on a page without fields. */
  async function tabToAndPress(page: Page, name: string): Promise<void> {
    for (let i = 0; i < 30; i++) {
      await page.keyboard.press("Tab");
      const focused = await page.evaluate<string>("(document.activeElement?.innerText ?? '').trim()");
      if (focused === name) {
        await page.keyboard.press("Enter");
        return;
      }
    }
    throw new Error(`Tab never reached ${name}`);
  }

  async function callback(page: Page, language: Language, state: string): Promise<URL> {
    await page.waitForURL((url) => url.href.startsWith(`${demo.redirectUri}?`));
    const url = new URL(page.url());
    expect(url.searchParams.get("error"), url.searchParams.get("error_description") ?? "").toBeNull();
    expect(url.searchParams.get("state")).toBe(state);
    // The demo application's page speaks the flow's language, not the browser's.
    await audit(page, language, "callback");
    return url;
  }

  for (const language of ["ja", "en"] as const) {
    it(`${language}: every form is sent with Enter and lands where its primary button goes`, async () => {
      const w = words[language];
      const page = await phone(language);
      const person = await newPerson();

      await page.goto(`${origin()}/?ui_locales=${language}`);
      await audit(page, language, "home, signed out");
      // The icon every page names is served, under the pages' policy.
      const icon = await page.request.get(new URL((await page.locator('link[rel="icon"]').getAttribute("href"))!, origin()).href);
      expect(icon.status()).toBe(200);
      expect(icon.headers()["content-type"]).toMatch(/^image\/svg\+xml/);

      // Sign-in: type the name and the password, Enter in the password field.
      await page.goto(request(`${language}-high`, language, { acr_values: "high" }));
      await arrive(page, "/auth/login", w.login);
      const firstSignIn = page.url();
      await audit(page, language, "sign-in");
      // Enter with nothing typed: the page says what is missing, in its own language (not the browser's words).
      await page.locator("#login").focus();
      await page.keyboard.press("Enter");
      await expect.poll(() => page.getByRole("alert").innerText()).toBe(w.missingFields);
      await type(page, "#login", person.login);
      await type(page, "#password", person.password);
      await page.keyboard.press("Enter");

      // Step-up with the code: the password was typed a moment ago, so only the code; Enter in it.
      await arrive(page, "/auth/reauth", w.reauth);
      expect(await page.locator("#password").count()).toBe(0);
      await audit(page, language, "step-up with a code");
      await type(page, "#otp", person.code());
      await page.keyboard.press("Enter");

      // Consent: Tab to Allow, Enter.
      await arrive(page, "/auth/consent");
      await audit(page, language, "consent");
      await tabToAndPress(page, w.consentAllow);
      await callback(page, language, `${language}-high`);

      // Linking the card on the account page (signed in now): Enter in the signature field.
      await page.goto(`${origin()}/account/jpki`);
      await arrive(page, "/account/jpki", w.account);
      await audit(page, language, "account, nothing linked");
      await pasteSignedChallenge(page, person.card);
      await page.keyboard.press("Enter");
      await expect.poll(() => page.locator("[data-notice]").getAttribute("data-notice")).toBe("linked");
      expect(await page.locator("#links tbody tr").count()).toBe(1);
      await audit(page, language, "account, one linked");
      // The same card again is said to be linked already, not linked anew.
      await pasteSignedChallenge(page, person.card);
      await page.keyboard.press("Enter");
      await expect.poll(() => page.locator("[data-notice]").getAttribute("data-notice")).toBe("alreadyLinked");
      expect(await page.locator("#links tbody tr").count()).toBe(1);

      // Step-up with the card to very_high: Enter in the signature field.
      await page.goto(request(`${language}-card`, language, { acr_values: "very_high" }));
      await arrive(page, "/auth/reauth", w.cardStepUp);
      await audit(page, language, "step-up with the card");
      await pasteSignedChallenge(page, person.card);
      await page.keyboard.press("Enter");
      await callback(page, language, `${language}-card`);

      // Sign-out says who is signed in; Tab to its button, Enter.
      await page.goto(`${origin()}/auth/logout`);
      await arrive(page, "/auth/logout", w.signOut);
      expect(await page.locator("main").innerText()).toContain(person.login);
      await audit(page, language, "sign-out");
      await tabToAndPress(page, w.signOut);
      await expect.poll(() => heading(page)).toBe(w.signedOut);
      await audit(page, language, "signed out");

      // Card sign-in from the sign-in page's link: Enter in the signature field.
      await page.goto(request(`${language}-card-sign-in`, language));
      await arrive(page, "/auth/login", w.login);
      await page.getByRole("link", { name: w.cardLink, exact: true }).click();
      await arrive(page, "/auth/login/jpki", w.cardSignIn);
      await audit(page, language, "card sign-in");
      await pasteSignedChallenge(page, person.card);
      await page.keyboard.press("Enter");
      await callback(page, language, `${language}-card-sign-in`);

      // Signed out again, the account page offers a way to sign in; Enter in the password field; then remove the card.
      await page.goto(`${origin()}/auth/logout`);
      await tabToAndPress(page, w.signOut);
      await expect.poll(() => heading(page)).toBe(w.signedOut);
      await page.goto(`${origin()}/account/jpki`);
      await audit(page, language, "account, signed out");
      await page.getByRole("link", { name: w.signIn, exact: true }).click();
      await arrive(page, "/account/login", w.login);
      await audit(page, language, "account sign-in");
      await type(page, "#login", person.login);
      await type(page, "#password", person.password);
      await page.keyboard.press("Enter");
      await arrive(page, "/account/jpki", w.account);

      // The card revoked: its step-up is refused, and the page that says the level is out of reach follows.
      await mockOf(server.domain).setStatus(cardAccountId, person.card.certificateId!, { status: "revoked", revokedReason: 1 });
      await page.goto(request(`${language}-revoked`, language, { acr_values: "very_high" }));
      await arrive(page, "/auth/reauth", w.cardStepUp);
      await pasteSignedChallenge(page, person.card);
      await page.keyboard.press("Enter");
      await arrive(page, "/auth/unreachable");
      await audit(page, language, "level out of reach");
      // The first sign-in's address again: it has ended.
      await page.goto(firstSignIn);
      await audit(page, language, "ended sign-in");

      await page.goto(`${origin()}/account/jpki`);
      await page.getByRole("button", { name: w.remove }).click();
      await expect.poll(() => page.locator("[data-notice]").getAttribute("data-notice")).toBe("removed");
      expect(await page.locator("#links").count()).toBe(0);

      // An error page: its request id, in the flow's language.
      const response = await page.goto(`${server.domain.oidc.endpoints.authorization}?client_id=nobody&response_type=code`);
      expect(await page.locator("#request-id code").innerText()).toBe(response!.headers()["x-request-id"]);
      await audit(page, language, "error page");
      expect(pageErrors).toEqual([]);
    });
  }

  for (const language of ["ja", "en"] as const) {
    it(`${language}: the mock card's section (its openssl command and key) reads in the dark too, and its button signs`, async () => {
      const page = await phone(language);
      await page.goto(`${demo.jpkiStepUpUrl}&ui_locales=${language}`);
      await arrive(page, "/auth/login", words[language].login);
      await type(page, "#login", demo.userLogin);
      await type(page, "#password", demo.userPassword);
      await page.keyboard.press("Enter");
      await arrive(page, "/auth/reauth", words[language].cardStepUp);
      // Its title and first sentence follow each other as the language writes them: no space after 「：」.
      expect(await page.locator("#mock-card p").first().innerText()).toMatch(language === "ja" ? /^モック環境：[^\s]/ : /^Mock environment\. [^\s]/);
      await page.locator("#mock-card summary").click();
      expect(await page.locator("#mock-openssl").isVisible()).toBe(true);
      expect(await page.locator("#mock-card-key").isVisible()).toBe(true);
      await audit(page, language, "step-up with the mock card");
      await page.locator("#mock-card-sign").click();
      // The demo user's first grant to the demo app asks for consent; a later one does not.
      await page.waitForURL((url) => url.pathname === "/auth/consent" || url.pathname === "/demo/callback");
      if (new URL(page.url()).pathname === "/auth/consent") await tabToAndPress(page, words[language].consentAllow);
      await callback(page, language, "demo-jpki");
      expect(pageErrors).toEqual([]);
    });
  }

  it("cancel on the sign-in and step-up pages: back to the application with access_denied", async () => {
    const page = await phone("ja");
    const person = await newPerson();
    await page.goto(request("cancel-login", "ja"));
    await arrive(page, "/auth/login", words.ja.login);
    await page.getByRole("button", { name: words.ja.cancel, exact: true }).click();
    await page.waitForURL((url) => url.href.startsWith(`${demo.redirectUri}?`));
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toMatchObject({ error: "access_denied", state: "cancel-login" });
    // The demo application's page in Japanese, the protocol's English description marked as English.
    expect(await page.locator("html").getAttribute("lang")).toBe("ja");
    expect(await page.locator('td [lang="en"]').innerText()).toBe("the user cancelled the request");
    // Back from the application: the sign-in has ended, and the page does not claim it was completed.
    await page.goBack();
    await expect.poll(() => page.locator("[data-reason]").innerText()).toBe("このログインの手続きはすでに終わり、アプリに戻っています。");

    await page.goto(request("cancel-reauth", "ja", { acr_values: "high" }));
    await type(page, "#login", person.login);
    await type(page, "#password", person.password);
    await page.keyboard.press("Enter");
    await arrive(page, "/auth/reauth", words.ja.reauth);
    await page.getByRole("button", { name: words.ja.cancel, exact: true }).click();
    await page.waitForURL((url) => url.href.startsWith(`${demo.redirectUri}?`));
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toMatchObject({ error: "access_denied", state: "cancel-reauth" });
  });

  it("a wrong code: the page keeps the password done, marks the code invalid and puts the focus on it", async () => {
    const page = await phone("en");
    const person = await newPerson();
    // A first sign-in at the lowest level, then prompt=login with a higher level: the password and the code are asked.
    await page.goto(request("wrong-code", "en"));
    await type(page, "#login", person.login);
    await type(page, "#password", person.password);
    await page.keyboard.press("Enter");
    await arrive(page, "/auth/consent");
    await tabToAndPress(page, words.en.consentAllow);
    await page.waitForURL((url) => url.href.startsWith(`${demo.redirectUri}?`));
    await page.goto(request("wrong-code-2", "en", { acr_values: "high", prompt: "login" }));
    await arrive(page, "/auth/reauth", words.en.reauth);
    expect(await page.locator("#password").count()).toBe(1);
    await type(page, "#password", person.password);
    const right = person.code();
    await type(page, "#otp", String((Number(right) + 1) % 1_000_000).padStart(6, "0"));
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator("#otp").getAttribute("aria-invalid")).toBe("true");
    // The password was right: it is not asked again; the focus is in the code field.
    expect(await page.locator("#password").count()).toBe(0);
    expect(await page.evaluate<string>("document.activeElement.id")).toBe("otp");
    // A code in the wrong shape is explained in the page's words, before anything is checked.
    await page.keyboard.insertText("12ab");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.getByRole("alert").innerText()).toBe("Enter the one-time code as 6 digits.");
    await type(page, "#otp", person.code());
    await page.keyboard.press("Enter");
    await page.waitForURL((url) => url.href.startsWith(`${demo.redirectUri}?`));
    expect(new URL(page.url()).searchParams.get("state")).toBe("wrong-code-2");
  });

  /** Whether the page's alert and the focused field both lie within the window as it is scrolled. */
  const inSight = (page: Page) =>
    page.evaluate<boolean>(`[document.querySelector("[role=alert]"), document.activeElement].every((element) => {
      const box = element?.getBoundingClientRect();
      return box !== undefined && box.top >= 0 && box.bottom <= window.innerHeight;
    })`);

  it("after a card refusal the pasted certificate stays and the field is marked invalid", async () => {
    const page = await phone("en");
    const person = await newPerson();
    await page.goto(request("refused-card", "en"));
    await page.getByRole("link", { name: words.en.cardLink, exact: true }).click();
    await arrive(page, "/auth/login/jpki", words.en.cardSignIn);
    // The copy button (a script of our own origin, allowed by the page's policy) copies the text to sign.
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: origin() });
    await page.getByRole("button", { name: "Copy the text", exact: true }).click();
    await expect.poll(() => page.locator("#copy-status").innerText()).toBe("Copied.");
    expect(await page.evaluate<string>("navigator.clipboard.readText()")).toBe(await page.locator("#challenge-text").inputValue());
    // Not linked to anyone: refused, and the certificate is still there to correct or reuse.
    await pasteSignedChallenge(page, person.card);
    await page.keyboard.press("Enter");
    await expect.poll(() => page.getByRole("alert").getAttribute("data-error")).toBe("certificate_not_linked");
    expect(await page.locator("#certificate").inputValue()).toBe(person.card.certificatePem);
    expect(await page.locator("#certificate").getAttribute("aria-invalid")).toBe("true");
    expect(await page.locator("#certificate").getAttribute("aria-describedby")).toContain("form-error");
    // The field takes the focus far down the phone's page: the words of the refusal are in sight with it.
    await expect.poll(() => inSight(page)).toBe(true);
    // Text that is not a certificate: said in words.
    await type(page, "#certificate", "AAAA");
    await type(page, "#signature", "AAAA");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.getByRole("alert").innerText()).toMatch(/^What was pasted is not a certificate\./);
    await expect.poll(() => inSight(page)).toBe(true);
    // The way back to password sign-in.
    await page.getByRole("link", { name: "Sign in with your password instead", exact: true }).click();
    await arrive(page, "/auth/login", words.en.login);
  });
});
