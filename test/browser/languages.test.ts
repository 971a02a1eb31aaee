import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, BrowserContext, BrowserContextOptions, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OidcUserRow } from "../../src/domain/oidc/model.ts";
import { seedOidcDemo, type OidcDemo } from "../../src/app/mock/oidc-demo-seed.ts";
import { browserSuiteTitle, browserUnavailable, launchBrowser, pageWidths } from "../support/browser.ts";
import { contrastFailures, misLabelledLanguage } from "../support/page-audit.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/*
 * Sign-in, step-up and consent in Japanese (through ui_locales and through
 * the browser's language) and in English, in Chromium, on a phone-sized and a
 * desktop window: each page must fit its width (no horizontal scrolling).
 * Screenshots go to SHOMEI_SCREENSHOT_DIR when set, else to a temporary
 * directory removed afterwards.
 */
const unavailable = browserUnavailable();

/** What each page says in each language, as a person reads it. */
const words = {
  ja: {
    login: { title: "ログイン", username: "ユーザー名", password: "パスワード", submit: "ログイン" },
    reauth: { title: "本人確認", password: "パスワード", otp: "ワンタイムコード", submit: "続ける" },
    consent: { heading: "shomei demo app があなたのアカウントへのアクセスを求めています", allow: "許可する", scopes: ["本人であることの確認", "氏名とプロフィール"] },
    switchTo: "English",
  },
  en: {
    login: { title: "Sign in", username: "Username", password: "Password", submit: "Sign in" },
    reauth: { title: "Confirm it's you", password: "Password", otp: "One-time code", submit: "Continue" },
    consent: { heading: "shomei demo app wants to access your account", allow: "Allow", scopes: ["Confirm your identity", "Your name and profile"] },
    switchTo: "日本語",
  },
} as const;

type Language = keyof typeof words;

const viewports = {
  phone: { width: 360, height: 740 },
  desktop: { width: 1280, height: 800 },
} as const;

describe.skipIf(unavailable !== undefined)(browserSuiteTitle("pages in Japanese and English in a real browser", unavailable), () => {
  let dataDir: string;
  let screenshotDir: string;
  let server: TestServer;
  let browser: Browser;
  let demo: OidcDemo;
  const contexts: BrowserContext[] = [];
  let users = 0;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "shomei-languages-"));
    screenshotDir = process.env.SHOMEI_SCREENSHOT_DIR ?? path.join(dataDir, "screenshots");
    mkdirSync(screenshotDir, { recursive: true });
    server = await startTestServer(`sqlite:${path.join(dataDir, "shomei.db")}`, { dataDir });
    demo = await seedOidcDemo(server.domain.oidc, dataDir, Date.now());
    browser = await launchBrowser();
  });

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  async function newPage(options: BrowserContextOptions): Promise<Page> {
    const context = await browser.newContext(options);
    contexts.push(context);
    context.setDefaultTimeout(10_000);
    return context.newPage();
  }

  /** A user of its own per walk, with TOTP: a one-time code is accepted once, so walks must not share one. */
  async function newUser(): Promise<{ row: OidcUserRow; login: string; password: string }> {
    users += 1;
    const login = `walker-${users}`;
    const password = `walker-password-${users}`;
    const row = await server.domain.oidc.users.create({ login, password, name: `Walker ${users}` });
    await server.domain.oidc.users.enrolTotp(row.id);
    return { row: (await server.domain.oidc.users.find(row.id))!, login, password };
  }

  /** A step-up request of the demo client: acr_values=high makes the user confirm with a one-time code after signing in. */
  function stepUpRequest(state: string, extra: Record<string, string> = {}): string {
    const query = new URLSearchParams({
      client_id: demo.clientId,
      redirect_uri: demo.redirectUri,
      response_type: "code",
      scope: "openid profile",
      state,
      acr_values: "high",
      ...extra,
    });
    return `${server.domain.oidc.endpoints.authorization}?${query.toString()}`;
  }

  async function arriveAt(page: Page, pathname: string): Promise<void> {
    await page.waitForURL((url) => url.pathname === pathname);
  }

  /** The page's language, and that nothing is wider than the window. */
  async function expectFits(page: Page, language: Language, name: string): Promise<void> {
    expect(await page.locator("html").getAttribute("lang")).toBe(language);
    const { scrollWidth, clientWidth, widest } = await pageWidths(page);
    expect(scrollWidth, `${name}: widest element ${widest}`).toBeLessThanOrEqual(clientWidth);
    await page.screenshot({ path: path.join(screenshotDir, `${name}.png`), fullPage: true });
  }

  /** Sign in, step up with password and one-time code, allow: every page in `language`, every page fitting. */
  async function walk(page: Page, language: Language, request: string, label: string): Promise<void> {
    const w = words[language];
    const user = await newUser();
    await page.goto(request);

    await arriveAt(page, "/auth/login");
    expect(await page.title()).toBe(`${w.login.title} · shomei`);
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe(w.login.title);
    await expectFits(page, language, `${label}-1-login`);
    await page.getByLabel(w.login.username, { exact: true }).fill(user.login);
    await page.getByLabel(w.login.password, { exact: true }).fill(user.password);
    await page.getByRole("button", { name: w.login.submit, exact: true }).click();

    await arriveAt(page, "/auth/reauth");
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe(w.reauth.title);
    await expectFits(page, language, `${label}-2-reauth`);
    // The password was typed a moment ago in this sign-in: the step-up asks for the code alone.
    expect(await page.getByLabel(w.reauth.password, { exact: true }).count()).toBe(0);
    await page.getByLabel(w.reauth.otp, { exact: true }).fill(server.domain.oidc.users.currentOtp(user.row)!);
    await page.getByRole("button", { name: w.reauth.submit, exact: true }).click();

    await arriveAt(page, "/auth/consent");
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe(w.consent.heading);
    const scopes = await page.locator("ul.scopes").getByRole("listitem").allInnerTexts();
    expect(scopes.map((s) => s.trim())).toEqual(w.consent.scopes);
    await expectFits(page, language, `${label}-3-consent`);
    await page.getByRole("button", { name: w.consent.allow, exact: true }).click();

    await page.waitForURL((url) => url.href.startsWith(`${demo.redirectUri}?`));
    const callback = new URL(page.url());
    expect(callback.searchParams.get("error")).toBeNull();
    expect(callback.searchParams.get("code")).toMatch(/^[A-Za-z0-9_-]{51}$/);
  }

  for (const [size, viewport] of Object.entries(viewports)) {
    describe(`${size} (${viewport.width}px)`, () => {
      it("ui_locales=ja: Japanese throughout, although the browser prefers English", async () => {
        const page = await newPage({ viewport, locale: "en-US" });
        await walk(page, "ja", stepUpRequest("ui-ja", { ui_locales: "ja" }), `${size}-ui_locales-ja`);
      });

      it("Accept-Language: ja (the browser's language): Japanese throughout", async () => {
        const page = await newPage({ viewport, locale: "ja-JP" });
        await walk(page, "ja", stepUpRequest("accept-ja"), `${size}-accept-language-ja`);
      });

      it("Accept-Language: ja through a header alone", async () => {
        const page = await newPage({ viewport, extraHTTPHeaders: { "Accept-Language": "ja,en;q=0.5" } });
        await walk(page, "ja", stepUpRequest("header-ja"), `${size}-header-ja`);
      });

      it("otherwise English throughout", async () => {
        const page = await newPage({ viewport, locale: "en-US" });
        await walk(page, "en", stepUpRequest("en"), `${size}-en`);
      });
    });
  }

  it("the switch changes the language in place: the interaction goes on in the new language", async () => {
    const page = await newPage({ viewport: viewports.phone, locale: "en-US" });
    const user = await newUser();
    await page.goto(stepUpRequest("switch", { ui_locales: "ja" }));
    await arriveAt(page, "/auth/login");
    const interaction = new URL(page.url()).searchParams.get("interaction");
    // A link to the same page of the interaction, not a button of its form.
    await page.getByRole("link", { name: words.ja.switchTo, exact: true }).click();
    await page.waitForURL((url) => url.searchParams.get("ui_locales") === "en");
    expect(await page.locator("html").getAttribute("lang")).toBe("en");
    expect(new URL(page.url()).searchParams.get("interaction")).toBe(interaction);
    await expectFits(page, "en", "switch-1-login-en");
    await page.getByLabel("Username", { exact: true }).fill(user.login);
    await page.getByLabel("Password", { exact: true }).fill(user.password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await arriveAt(page, "/auth/reauth");
    expect(await page.locator("html").getAttribute("lang")).toBe("en");
    // And back to Japanese on the next page; the step-up form then works in Japanese.
    await page.getByRole("link", { name: words.en.switchTo, exact: true }).click();
    await page.waitForURL((url) => url.searchParams.get("ui_locales") === "ja");
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe(words.ja.reauth.title);
    await page.getByLabel(words.ja.reauth.otp, { exact: true }).fill(server.domain.oidc.users.currentOtp(user.row)!);
    await page.getByRole("button", { name: words.ja.reauth.submit, exact: true }).click();
    await arriveAt(page, "/auth/consent");
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe(words.ja.consent.heading);
    await expectFits(page, "ja", "switch-2-consent-ja");
  });

  it("consent with authorization_details in Japanese fits a phone, long values included", async () => {
    const page = await newPage({ viewport: viewports.phone, locale: "ja-JP" });
    const user = await newUser();
    const details = [
      {
        type: "payment_initiation",
        actions: ["initiate", "status"],
        locations: ["https://payments.bank.example/v1/very/long/path/that/does/not/break/by/itself/accounts/123456789"],
        instructedAmount: { currency: "JPY", amount: "123456789" },
        creditorAccount: { iban: "DE89370400440532013000DE89370400440532013000" },
        remittanceInformationUnstructured: "請求書番号2026-0001から2026-0099までの業務委託費のお支払い(源泉徴収税を差し引いた金額)",
      },
      { type: "account_information", actions: ["list_accounts", "read_balances"], datatypes: ["残高", "取引明細"] },
    ];
    const query = new URLSearchParams({
      client_id: demo.clientId,
      redirect_uri: demo.redirectUri,
      response_type: "code",
      scope: "openid profile email offline_access",
      state: "details-ja",
      authorization_details: JSON.stringify(details),
    });
    await page.goto(`${server.domain.oidc.endpoints.authorization}?${query.toString()}`);
    await arriveAt(page, "/auth/login");
    await page.getByLabel(words.ja.login.username, { exact: true }).fill(user.login);
    await page.getByLabel(words.ja.login.password, { exact: true }).fill(user.password);
    await page.getByRole("button", { name: words.ja.login.submit, exact: true }).click();
    await arriveAt(page, "/auth/consent");
    expect(await page.locator("section.detail h3").allInnerTexts()).toEqual(["支払いの開始 payment_initiation", "口座情報 account_information"]);
    expect(await page.locator("dl.members dt").allInnerTexts()).toEqual(["操作", "対象", "操作", "データの種類"]);
    // For people: the amount as money, the actions in words, no member names of the API.
    const payment = page.locator("section.detail").first();
    expect(await payment.locator("dt", { hasText: "操作" }).locator("xpath=following-sibling::dd[1]//li").allInnerTexts()).toEqual(["支払いの開始", "支払い状況の確認"]);
    expect(await payment.locator("ul.kv > li", { hasText: /^金額：/ }).innerText()).toBe("金額：123,456,789円");
    expect(await payment.locator("ul.kv > li", { hasText: /^支払先の口座：/ }).innerText()).toMatch(/^支払先の口座：\s*IBAN：DE89370400440532013000DE89370400440532013000$/);
    expect(await payment.innerText()).not.toMatch(/instructedAmount|currency|initiate/);
    await expectFits(page, "ja", "phone-consent-details-ja");
  });

  it("error and demo pages speak Japanese too and fit a phone", async () => {
    const page = await newPage({ viewport: viewports.phone, locale: "ja-JP" });
    const response = await page.goto(`${server.domain.oidc.endpoints.authorization}?client_id=nobody&response_type=code`);
    expect(response?.status()).toBe(400);
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("このアプリではログインできません");
    await expectFits(page, "ja", "error-ja");
    await page.goto(`${demo.redirectUri}?error=access_denied&error_description=the+user+denied&state=s`);
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("認可に失敗しました");
    await expectFits(page, "ja", "demo-callback-ja");
  });

  it("the mock environment's webhook receiver page speaks both languages, fits a phone, and reads in the dark scheme", async () => {
    // One request that does not verify, so the page shows a received item.
    const posted = await fetch(`${server.url}/demo/webhooks`, {
      method: "POST",
      headers: { "content-type": "application/cloudevents+json", "webhook-id": "msg_demo", "webhook-timestamp": "1", "webhook-signature": "v1,AAAA" },
      body: JSON.stringify({ specversion: "1.0", id: "msg_demo", type: "webhook.test", data: { long: "x".repeat(300) } }),
    });
    expect(posted.status).toBe(401);
    for (const [language, locale, heading, reload] of [["ja", "ja-JP", "受信したWebhook", "再読み込み"], ["en", "en-US", "Webhooks received", "Reload"]] as const) {
      const page = await newPage({ viewport: { width: 390, height: 800 }, locale, colorScheme: "dark" });
      await page.goto(`${server.url}/demo/webhooks`);
      expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe(heading);
      expect(await page.locator("section.received").count()).toBeGreaterThan(0);
      expect(await misLabelledLanguage(page)).toEqual([]);
      expect(await contrastFailures(page)).toEqual([]);
      await expectFits(page, language, `demo-webhooks-${language}-dark`);
      // The page's one action, first in Tab order after the language switch.
      await page.getByRole("link", { name: reload, exact: true }).focus();
      await page.keyboard.press("Enter");
      await page.waitForLoadState();
      expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe(heading);
    }
  });
});
