import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, BrowserContext, BrowserContextOptions, Locator, Page, Response } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { OidcUserRow } from "../../src/domain/oidc/model.ts";
import { seedOidcDemo, type OidcDemo } from "../../src/app/mock/oidc-demo-seed.ts";
import { browserSuiteTitle, browserUnavailable, launchBrowser } from "../support/browser.ts";
import { registerClient } from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/*
 * The authorization endpoint and its pages driven by Chromium as a person would
 * use them. Screenshots of each page type go to a temporary directory removed
 * afterwards; set SHOMEI_SCREENSHOT_DIR to keep them somewhere to look at.
 */
const unavailable = browserUnavailable();

/** A code, session or interaction id: 256 random bits, base64url. */
const tokenPattern = /^[A-Za-z0-9_-]{43}$/;

/** What the demo application's callback page received, read both from the page and from its URL. */
interface CallbackResult {
  url: URL;
  heading: string;
  /** The table's value for each response parameter, "not returned" when absent. */
  shown: { code: string; state: string; iss: string; error: string; description: string };
}

describe.skipIf(unavailable !== undefined)(browserSuiteTitle("authorization flow in a real browser", unavailable), () => {
  let dataDir: string;
  let screenshotDir: string;
  let server: TestServer;
  let browser: Browser;
  let demo: OidcDemo;
  let issuer: string;
  let authorizeEndpoint: string;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "shomei-browser-"));
    // Kept only when a directory is named, to look at; otherwise thrown away with the rest.
    screenshotDir = process.env.SHOMEI_SCREENSHOT_DIR ?? path.join(dataDir, "screenshots");
    mkdirSync(screenshotDir, { recursive: true });
    server = await startTestServer(`sqlite:${path.join(dataDir, "shomei.db")}`, { dataDir });
    demo = await seedOidcDemo(server.domain.oidc, dataDir, Date.now());
    issuer = server.domain.oidc.issuer;
    authorizeEndpoint = server.domain.oidc.endpoints.authorization;
    browser = await launchBrowser();
  });

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** A fresh browser profile (no cookies) with one tab. */
  async function newPage(options: BrowserContextOptions = {}): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1024, height: 800 }, ...options });
    contexts.push(context);
    // A failing step then reports where it stood, well within the test's own time limit.
    context.setDefaultTimeout(10_000);
    return context.newPage();
  }

  /** Waits until the tab shows a URL the predicate accepts; on failure says where the tab is instead. */
  async function arrive(page: Page, at: (url: URL) => boolean, what: string): Promise<void> {
    try {
      await page.waitForURL(at);
    } catch (error) {
      const heading = await page.getByRole("heading", { level: 1 }).first().innerText().catch(() => "(none)");
      throw new Error(`expected to arrive at ${what}, but the tab shows ${page.url()} (heading: ${heading})`, { cause: error });
    }
  }

  async function createUser(login: string, password: string): Promise<OidcUserRow> {
    return server.domain.oidc.users.create({ login, password, name: `${login} person`, email: `${login}@example.com` });
  }

  function authorizeUrl(params: Record<string, string>): string {
    return `${authorizeEndpoint}?${new URLSearchParams(params).toString()}`;
  }

  function demoRequest(state: string, extra: Record<string, string> = {}): string {
    return authorizeUrl({
      client_id: demo.clientId,
      redirect_uri: demo.redirectUri,
      response_type: "code",
      scope: "openid profile email",
      state,
      ...extra,
    });
  }

  async function screenshot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: path.join(screenshotDir, `${name}.png`), fullPage: true });
  }

  /** The document response the tab is showing, after any redirects. */
  function trackDocuments(page: Page): () => Response {
    let last: Response | undefined;
    page.on("response", (response) => {
      if (response.request().isNavigationRequest() && response.frame() === page.mainFrame()) last = response;
    });
    return () => {
      if (!last) throw new Error("no document loaded yet");
      return last;
    };
  }

  /** Every URL the tab navigated to, redirects included. */
  function trackNavigations(page: Page): string[] {
    const urls: string[] = [];
    page.on("request", (request) => {
      if (request.isNavigationRequest() && request.frame() === page.mainFrame()) urls.push(request.url());
    });
    return urls;
  }

  function pagePath(name: "login" | "reauth" | "consent"): (url: URL) => boolean {
    return (url) => url.origin === new URL(issuer).origin && url.pathname === `/auth/${name}` && tokenPattern.test(url.searchParams.get("interaction") ?? "");
  }

  const atCallback = (url: URL) => url.href.startsWith(`${demo.redirectUri}?`);

  async function expectNotFramable(response: Response): Promise<void> {
    const headers = await response.allHeaders();
    expect(headers["x-frame-options"]).toBe("DENY");
    expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(headers["content-security-policy"]).toContain("default-src 'none'");
    expect(headers["cache-control"]).toBe("no-store");
  }

  function text(locator: Locator): Promise<string> {
    return locator.innerText().then((t) => t.replace(/\s+/g, " ").trim());
  }

  async function fillLogin(page: Page, login: string, password: string): Promise<void> {
    await page.getByLabel("Username", { exact: true }).fill(login);
    await page.getByLabel("Password", { exact: true }).fill(password);
  }

  /** Clicks a form's button and waits for the answer to its POST (the form again with an error, or a 303 onwards). */
  async function submit(page: Page, button: string, pathname: string): Promise<Response> {
    const answered = page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === pathname);
    await page.getByRole("button", { name: button, exact: true }).click();
    return answered;
  }

  async function readCallback(page: Page): Promise<CallbackResult> {
    await arrive(page, atCallback, "the demo callback");
    const cell = (label: RegExp) =>
      text(page.getByRole("row").filter({ has: page.getByRole("rowheader", { name: label }) }).getByRole("cell"));
    const table = page.getByRole("table", { name: "Response parameters" });
    await table.waitFor();
    const failed = (await text(page.getByRole("heading", { level: 1 }))) === "Authorization failed";
    return {
      url: new URL(page.url()),
      heading: await text(page.getByRole("heading", { level: 1 })),
      shown: {
        code: failed ? "not returned" : await cell(/^Authorization code/),
        state: await cell(/^State/),
        iss: await cell(/^Issuer/),
        error: failed ? await cell(/^Error/) : "not returned",
        description: failed ? await cell(/^Description/) : "not returned",
      },
    };
  }

  function expectCode(result: CallbackResult, state: string): string {
    expect(result.heading).toBe("Authorization succeeded");
    const code = result.url.searchParams.get("code") ?? "";
    expect(code).toMatch(/^[A-Za-z0-9_-]{51}$/);
    expect([...result.url.searchParams.keys()].sort()).toEqual(["code", "iss", "state"]);
    expect(result.url.searchParams.get("state")).toBe(state);
    expect(result.url.searchParams.get("iss")).toBe(issuer);
    expect(result.shown).toEqual({ code, state, iss: issuer, error: "not returned", description: "not returned" });
    return code;
  }

  function expectError(result: CallbackResult, error: string, description: string, state: string): void {
    expect(result.heading).toBe("Authorization failed");
    expect(Object.fromEntries(result.url.searchParams)).toEqual({ error, error_description: description, state, iss: issuer });
    expect(result.shown).toEqual({ code: "not returned", state, iss: issuer, error, description });
  }

  async function expectConsentScopes(page: Page, words: string[]): Promise<void> {
    const list = page.getByRole("list", { name: "It asks for" });
    expect((await list.getByRole("listitem").allInnerTexts()).map((t) => t.trim())).toEqual(words);
  }

  /** The entries of an authorization_details member shown as a labelled list (Actions, Locations, …). */
  function memberItems(section: Locator, label: string): Promise<string[]> {
    return section.locator("dt", { hasText: label }).locator("xpath=following-sibling::dd[1]").getByRole("listitem").allInnerTexts();
  }

  describe("signing in, consent and a code (demo user, JavaScript on)", () => {
    let page: Page;
    let documentResponse: () => Response;
    const state = "plain <state> & ü/ä?=#1";
    const details = [
      { type: "account_information", actions: ["list_accounts", "read_balances"], locations: ["https://bank.example/accounts"] },
    ];

    // A browser of each test's own: a test that needs the demo user signed in signs in itself.
    beforeEach(async () => {
      page = await newPage();
      documentResponse = trackDocuments(page);
    });

    /** The demo user signs in in this tab and allows the demo app, unless a grant of theirs lets it through; the code. */
    async function signInAndAllow(state: string): Promise<string> {
      await page.goto(demoRequest(state, { authorization_details: JSON.stringify(details) }));
      await arrive(page, pagePath("login"), "the login page");
      await fillLogin(page, demo.userLogin, demo.userPassword);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await arrive(page, (url) => pagePath("consent")(url) || atCallback(url), "the consent page or the demo callback");
      if (pagePath("consent")(new URL(page.url()))) await page.getByRole("button", { name: "Allow", exact: true }).click();
      return expectCode(await readCallback(page), state);
    }

    it("authorize → login page → a wrong password is shown on the page → the right one → consent in words → Allow → code", async () => {
      // The demo user has not allowed the demo app yet: another test's sign-in may have.
      const demoUser = (await server.domain.oidc.users.findByLogin(demo.userLogin))!;
      const grants = await server.database.db
        .selectFrom("oidc_grants")
        .select("id")
        .where("user_id", "=", demoUser.id)
        .where("client_id", "=", demo.clientId)
        .where("revoked_at", "is", null)
        .execute();
      for (const { id } of grants) await server.domain.oidc.grants.revoke(id);

      await page.goto(demoRequest(state, { authorization_details: JSON.stringify(details) }));
      await arrive(page, pagePath("login"), "the login page");
      expect(documentResponse().status()).toBe(200);
      await expectNotFramable(documentResponse());
      expect(await page.title()).toBe("Sign in · shomei");
      expect(await text(page.getByRole("heading", { level: 1 }))).toBe("Sign in");
      expect(await text(page.locator("p.lead"))).toBe("Sign in to continue to shomei demo app");
      expect(await page.getByRole("alert").count()).toBe(0);
      await screenshot(page, "01-login");
      const loginUrl = page.url();

      await fillLogin(page, demo.userLogin, "not-the-password");
      const refused = await submit(page, "Sign in", "/auth/login");
      expect(refused.status()).toBe(401);
      await expectNotFramable(refused);
      expect(await text(page.getByRole("alert"))).toBe("The username or password is not correct.");
      expect(page.url()).toBe(loginUrl);
      // The name typed stays, the password does not; both fields are marked invalid.
      expect(await page.getByLabel("Username", { exact: true }).inputValue()).toBe(demo.userLogin);
      expect(await page.getByLabel("Password", { exact: true }).inputValue()).toBe("");
      expect(await page.getByLabel("Username", { exact: true }).getAttribute("aria-invalid")).toBe("true");
      expect(await page.getByLabel("Password", { exact: true }).getAttribute("aria-invalid")).toBe("true");
      await screenshot(page, "02-login-error");

      await page.getByLabel("Password", { exact: true }).fill(demo.userPassword);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await arrive(page, pagePath("consent"), "the consent page");
      expect(new URL(page.url()).searchParams.get("interaction")).toBe(new URL(loginUrl).searchParams.get("interaction"));
      await expectNotFramable(documentResponse());
      expect(await page.title()).toBe("Allow access · shomei");
      expect(await text(page.getByRole("heading", { level: 1 }))).toBe("shomei demo app wants to access your account");
      expect(await text(page.getByText("Signed in as"))).toBe(`Signed in as ${demo.userLogin}`);
      await expectConsentScopes(page, ["Confirm your identity", "Your name and profile", "Your email address"]);
      expect(await text(page.getByRole("heading", { level: 2 }).nth(1))).toBe("And this specific access");
      const section = page.locator("section.detail");
      expect(await section.count()).toBe(1);
      expect(await text(section.getByRole("heading", { level: 3 }))).toBe("Account information account_information");
      expect(await memberItems(section, "Actions")).toEqual(["List your accounts", "See your balances"]);
      expect(await memberItems(section, "Locations")).toEqual(["https://bank.example/accounts"]);
      await screenshot(page, "03-consent");

      await page.getByRole("button", { name: "Allow", exact: true }).click();
      const result = await readCallback(page);
      await expectNotFramable(documentResponse());
      expectCode(result, state);
      await screenshot(page, "04-callback-success");
    });

    it("the same request again skips the consent page: straight back with a new code", async () => {
      const firstCode = await signInAndAllow("first");
      const navigations = trackNavigations(page);
      const request = demoRequest("again", { authorization_details: JSON.stringify(details) });
      await page.goto(request);
      const code = expectCode(await readCallback(page), "again");
      expect(code).not.toBe(firstCode);
      expect(navigations.map((url) => url.split("?")[0])).toEqual([authorizeEndpoint, demo.redirectUri]);
      expect(navigations[0]).toBe(request);
    });

    it("step-up: acr_values=high asks the signed-in user for a one-time code; a wrong one is refused, the right one gives a code", async () => {
      const user = (await server.domain.oidc.users.findByLogin(demo.userLogin))!;
      await signInAndAllow("before-step-up");
      await page.goto(demo.stepUpUrl);
      await arrive(page, pagePath("reauth"), "the re-authentication page");
      await expectNotFramable(documentResponse());
      expect(await page.title()).toBe("Confirm it's you · shomei");
      // The password typed at sign-in a moment ago still counts (docs/oidc-decisions.md): only the code is asked.
      expect(await text(page.locator("p.lead"))).toBe(
        "shomei demo app asks you to confirm it's you with a one-time code from your authenticator app (level: High).",
      );
      expect(await page.getByLabel("Password", { exact: true }).count()).toBe(0);
      expect(await text(page.getByText("Signed in as"))).toBe(`Signed in as ${demo.userLogin}`);
      expect((await page.locator("ul.reasons").getByRole("listitem").allInnerTexts()).map((t) => t.trim())).toEqual([
        "the application needs a stronger sign-in than your current one",
      ]);
      expect(await text(page.getByRole("note"))).toMatch(/^Mock environment: the current code is \d{6}$/);
      expect(await text(page.getByRole("note").locator("strong"))).toMatch(/^\d{6}$/);
      expect(await text(page.locator("#otp-hint"))).toBe("The 6-digit code shown in your authenticator app.");
      await screenshot(page, "05-reauth");

      const current = server.domain.oidc.users.currentOtp(user)!;
      expect(current).toMatch(/^\d{6}$/);
      const wrong = String((Number(current) + 500_000) % 1_000_000).padStart(6, "0");
      await page.getByLabel("One-time code", { exact: true }).fill(wrong);
      const refused = await submit(page, "Continue", "/auth/reauth");
      expect(refused.status()).toBe(401);
      await expectNotFramable(refused);
      expect(await text(page.getByRole("alert"))).toBe("The one-time code is not correct or was already used.");
      // The code field is marked invalid and has the focus, for the next try.
      const otp = page.getByLabel("One-time code", { exact: true });
      expect(await otp.getAttribute("aria-invalid")).toBe("true");
      expect(await otp.evaluate((element) => element === (element.ownerDocument as { activeElement: unknown }).activeElement)).toBe(true);
      await screenshot(page, "06-reauth-error");

      await otp.fill(server.domain.oidc.users.currentOtp(user)!);
      await page.getByRole("button", { name: "Continue", exact: true }).click();
      expectCode(await readCallback(page), "demo-step-up");
    });
  });

  describe("pushed authorization request (PAR)", () => {
    const state = "par-state-1";
    const payees = Array.from({ length: 30 }, (_, i) => ({
      name: `Payee ${i + 1}`,
      iban: `DE89370400440532${String(13000 + i).padStart(6, "0")}`,
      reference: `Invoice 2024-${String(i + 1).padStart(4, "0")} for services rendered in the period`,
    }));
    const details = [
      {
        type: "payment_initiation",
        actions: ["initiate", "status", "cancel"],
        locations: ["https://payments.bank.example/v1/payments"],
        instructedAmount: { currency: "EUR", amount: "123.50" },
        creditorName: "Merchant <b>A</b> & Co",
        creditorAccount: { iban: "DE02100100109307118603" },
        remittanceInformationUnstructured: "Ref Merchant A order 4711 ".repeat(12).trim(),
      },
      {
        type: "account_information",
        actions: ["list_accounts", "read_balances", "read_transactions"],
        locations: ["https://accounts.bank.example/v1"],
        datatypes: ["balances", "transactions", "standing_orders"],
        identifier: "account-DE02100100109307118603",
        privileges: ["read"],
      },
      { type: "payment_initiation", actions: ["initiate"], bulk: { payees } },
    ];
    let requestUri = "";
    let page: Page;

    beforeAll(async () => {
      await createUser("par-user", "par-user-password");
    });

    // A request pushed for each test, and a browser of its own.
    beforeEach(async () => {
      const body = new URLSearchParams({
        client_id: demo.clientId,
        redirect_uri: demo.redirectUri,
        response_type: "code",
        scope: "openid profile email",
        state,
        authorization_details: JSON.stringify(details),
      });
      expect(body.get("authorization_details")!.length).toBeGreaterThan(4000);
      const credentials = `${encodeURIComponent(demo.clientId)}:${encodeURIComponent(demo.clientSecret)}`;
      const response = await fetch(server.domain.oidc.endpoints.par, {
        method: "POST",
        headers: { Authorization: `Basic ${Buffer.from(credentials).toString("base64")}`, "Content-Type": "application/x-www-form-urlencoded" },
        body,
      });
      expect(response.status).toBe(201);
      const answer = (await response.json()) as { request_uri: string; expires_in: number };
      expect(answer.expires_in).toBe(60);
      expect(answer.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{51}$/);
      requestUri = answer.request_uri;
      // A phone-sized window: the long details must wrap, not widen the page.
      page = await newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    });

    it("the browser opens authorize with request_uri, reloads the login page, signs in, sees the pushed details and gets a code", async () => {
      const documentResponse = trackDocuments(page);
      const start = authorizeUrl({ client_id: demo.clientId, request_uri: requestUri });
      await page.goto(start);
      await arrive(page, pagePath("login"), "the login page");
      const loginUrl = page.url();

      // The request_uri is spent; the interaction carries the flow, so a reload shows the same form.
      await page.reload();
      expect(page.url()).toBe(loginUrl);
      expect(documentResponse().status()).toBe(200);
      expect(await text(page.getByRole("heading", { level: 1 }))).toBe("Sign in");
      expect(await page.getByRole("alert").count()).toBe(0);

      await fillLogin(page, "par-user", "par-user-password");
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await arrive(page, pagePath("consent"), "the consent page");
      await page.reload();
      await arrive(page, pagePath("consent"), "the consent page");
      await expectConsentScopes(page, ["Confirm your identity", "Your name and profile", "Your email address"]);

      const sections = page.locator("section.detail");
      expect(await sections.count()).toBe(3);
      expect(await sections.getByRole("heading", { level: 3 }).allInnerTexts()).toEqual([
        "Payment initiation payment_initiation",
        "Account information account_information",
        "Payment initiation payment_initiation",
      ]);
      const payment = sections.nth(0);
      expect(await memberItems(payment, "Actions")).toEqual(["Start a payment", "Check the payment's status", "Cancel the payment"]);
      expect(await memberItems(payment, "Locations")).toEqual(["https://payments.bank.example/v1/payments"]);
      expect(await text(payment.locator("ul.kv > li", { hasText: "Amount:" }))).toBe("Amount: €123.50");
      // Client-supplied text is shown as text, never as markup.
      expect(await text(payment.locator("ul.kv > li", { hasText: "Payee:" }))).toBe("Payee: Merchant <b>A</b> & Co");
      expect(await page.locator("main b").count()).toBe(0);
      const accounts = sections.nth(1);
      expect(await memberItems(accounts, "Data types")).toEqual(["balances", "transactions", "standing_orders"]);
      expect(await text(accounts.locator("dt", { hasText: "Identifier" }).locator("xpath=following-sibling::dd[1]"))).toBe(
        "account-DE02100100109307118603",
      );
      expect(await memberItems(accounts, "Privileges")).toEqual(["read"]);
      const bulk = sections.nth(2);
      const lastPayee = bulk.getByRole("listitem").filter({ hasText: /^Name: Payee 30$/ });
      expect(await lastPayee.count()).toBe(1);
      expect(await lastPayee.isVisible()).toBe(true);
      expect(await bulk.getByRole("listitem").filter({ hasText: new RegExp(`^IBAN: ${payees[29]!.iban}$`) }).count()).toBe(1);
      const widths = await page.evaluate<{ scroll: number; client: number }>(
        "({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })",
      );
      expect(widths.scroll).toBeLessThanOrEqual(widths.client);
      await screenshot(page, "07-consent-par-phone");

      await page.getByRole("button", { name: "Allow", exact: true }).click();
      expectCode(await readCallback(page), state);
    });

    /** The browser opens authorize with the request_uri: the login page, and the request_uri is spent. */
    async function useRequestUri(): Promise<void> {
      await page.goto(authorizeUrl({ client_id: demo.clientId, request_uri: requestUri }));
      await arrive(page, pagePath("login"), "the login page");
    }

    it("the same authorize URL again: the request_uri was used, an error page (no redirect, no redirect_uri to trust)", async () => {
      await useRequestUri();
      const navigations = trackNavigations(page);
      const again = authorizeUrl({ client_id: demo.clientId, request_uri: requestUri });
      const response = (await page.goto(again))!;
      expect(response.status()).toBe(400);
      expect(page.url()).toBe(again);
      expect(navigations).toEqual([again]);
      await expectNotFramable(response);
      expect(await page.title()).toBe("This sign-in request can't be completed · shomei");
      expect(await text(page.getByRole("alert"))).toBe(
        "This sign-in has already been used, for example by opening the same page again. Return to the app and start again.",
      );
      expect(await text(page.getByText("Error code:"))).toBe("Error code: invalid_request_uri");
    });

    it("with a registered redirect_uri in the query, the used request_uri is reported to the client instead", async () => {
      await useRequestUri();
      await page.goto(authorizeUrl({ client_id: demo.clientId, request_uri: requestUri, redirect_uri: demo.redirectUri, state: "retry" }));
      expectError(await readCallback(page), "invalid_request_uri", "request_uri has already been used", "retry");
    });
  });

  describe("errors a user can cause", () => {
    it("Deny on the consent page: back to the application with access_denied", async () => {
      await createUser("deny-user", "deny-user-password");
      const page = await newPage();
      await page.goto(demoRequest("deny-state"));
      await arrive(page, pagePath("login"), "the login page");
      await fillLogin(page, "deny-user", "deny-user-password");
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await arrive(page, pagePath("consent"), "the consent page");
      await page.getByRole("button", { name: "Deny", exact: true }).click();
      expectError(await readCallback(page), "access_denied", "the user refused consent", "deny-state");
      expect(await text(page.getByRole("alert"))).toBe("The provider answered with the error access_denied.");
      await screenshot(page, "08-callback-failure");
    });

    it("an unknown client: an error page at the provider, nothing sent to the redirect_uri", async () => {
      const page = await newPage();
      const navigations = trackNavigations(page);
      const request = authorizeUrl({ client_id: "no-such-client", redirect_uri: demo.redirectUri, response_type: "code", scope: "openid", state: "s" });
      const response = (await page.goto(request))!;
      expect(response.status()).toBe(400);
      expect(response.headers()["content-type"]).toMatch(/^text\/html/);
      await expectNotFramable(response);
      expect(page.url()).toBe(request);
      expect(navigations).toEqual([request]);
      expect(await page.title()).toBe("This application can't sign you in · shomei");
      expect(await text(page.getByRole("heading", { level: 1 }))).toBe("This application can't sign you in");
      expect(await text(page.getByRole("alert"))).toBe("The application is not registered with this provider.");
      expect(await text(page.getByText("Error code:"))).toBe("Error code: invalid_client");
      await screenshot(page, "09-error-page");
    });

    it("a redirect_uri the client did not register: an error page, the foreign site is never contacted", async () => {
      const page = await newPage();
      const contacted: string[] = [];
      await page.context().route("https://attacker.example/**", (route) => {
        contacted.push(route.request().url());
        return route.abort();
      });
      for (const redirectUri of ["https://attacker.example/cb", `${demo.redirectUri}/`, `${demo.redirectUri}?next=1`]) {
        const request = authorizeUrl({ client_id: demo.clientId, redirect_uri: redirectUri, response_type: "code", scope: "openid", state: "s" });
        const response = (await page.goto(request))!;
        expect(response.status()).toBe(400);
        expect(page.url()).toBe(request);
        expect(await page.title()).toBe("This sign-in request can't be completed · shomei");
        expect(await text(page.getByRole("alert"))).toBe("The return address (redirect_uri) is not one registered for this application.");
        expect(await text(page.getByText("Error code:"))).toBe("Error code: invalid_request");
      }
      expect(contacted).toEqual([]);
    });

    it("prompt=none without a session: back to the application with login_required, no page shown", async () => {
      const page = await newPage();
      const navigations = trackNavigations(page);
      await page.goto(demoRequest("silent", { prompt: "none" }));
      expectError(await readCallback(page), "login_required", "the user is not signed in and prompt=none forbids the login page", "silent");
      expect(navigations.map((url) => url.split("?")[0])).toEqual([authorizeEndpoint, demo.redirectUri]);
    });

    it("too many wrong passwords: a warning before the last, then when to try again in Japan time, and the card's way stays", async () => {
      await createUser("throttled-user", "throttled-user-password");
      const page = await newPage();
      await page.goto(demoRequest("throttle"));
      await arrive(page, pagePath("login"), "the login page");
      const loginUrl = page.url();
      const wrong = "The username or password is not correct.";
      const paused = /Too many failed sign-in attempts\. You can try again after \d{1,2}:\d{2} [AP]M Japan Standard Time\. You can still sign in with your My Number card, if you have linked it\.$/;
      for (let attempt = 1; attempt <= 5; attempt++) {
        await fillLogin(page, "throttled-user", `wrong-password-${attempt}`);
        const refused = await submit(page, "Sign in", "/auth/login");
        expect(refused.status()).toBe(401);
        const alert = await text(page.getByRole("alert"));
        if (attempt < 4) expect(alert).toBe(wrong);
        if (attempt === 4) expect(alert).toBe(`${wrong} One more failed attempt will pause sign-in with a password for a while.`);
        if (attempt === 5) expect(alert).toMatch(new RegExp(`^${wrong.replace(/\./g, "\\.")} ${paused.source}`));
      }
      await fillLogin(page, "throttled-user", "throttled-user-password");
      const throttled = await submit(page, "Sign in", "/auth/login");
      expect(throttled.status()).toBe(429);
      expect(Number(throttled.headers()["retry-after"])).toBeGreaterThan(0);
      expect(await text(page.getByRole("alert"))).toMatch(new RegExp(`^${paused.source}`));
      expect(await page.locator("#jpki-sign-in").count()).toBe(1);
      expect(page.url()).toBe(loginUrl);
      expect((await page.context().cookies()).map((c) => c.name)).not.toContain("shomei_session");
      await screenshot(page, "10-login-throttled");
    });
  });

  describe("without JavaScript", () => {
    it("the whole plain flow works with scripts disabled: login, wrong password, consent, Allow, code", async () => {
      await createUser("nojs-user", "nojs-user-password");
      const page = await newPage({ javaScriptEnabled: false });
      const documentResponse = trackDocuments(page);
      await page.goto(demoRequest("no-js", { authorization_details: JSON.stringify([{ type: "account_information", actions: ["read_balances"] }]) }));
      await arrive(page, pagePath("login"), "the login page");
      await fillLogin(page, "nojs-user", "wrong-password");
      expect((await submit(page, "Sign in", "/auth/login")).status()).toBe(401);
      expect(await text(page.getByRole("alert"))).toBe("The username or password is not correct.");
      await page.getByLabel("Password", { exact: true }).fill("nojs-user-password");
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await arrive(page, pagePath("consent"), "the consent page");
      await expectNotFramable(documentResponse());
      await expectConsentScopes(page, ["Confirm your identity", "Your name and profile", "Your email address"]);
      expect(await memberItems(page.locator("section.detail"), "Actions")).toEqual(["See your balances"]);
      await page.getByRole("button", { name: "Allow", exact: true }).click();
      expectCode(await readCallback(page), "no-js");
    });
  });

  describe("forms post to this origin only (CSP form-action)", () => {
    let application: Server;
    let applicationOrigin: string;

    beforeAll(async () => {
      // The application on another origin (localhost, the provider being 127.0.0.1): its callback page says what came back.
      application = createServer((req, res) => res.writeHead(200, { "content-type": "text/html" }).end(`<!doctype html><title>app</title><h1>Back at the application</h1>`));
      await new Promise<void>((resolve) => application.listen(0, resolve));
      applicationOrigin = `http://localhost:${(application.address() as AddressInfo).port}`;
      await registerClient(server, {
        client_id: "other-origin-app",
        token_endpoint_auth_method: "client_secret_basic",
        client_secret: "other-origin-app-secret-0123456789",
        redirect_uris: [`${applicationOrigin}/callback`],
        scope: "openid profile",
      });
    });

    afterAll(() => {
      application?.closeAllConnections();
      application?.close();
    });

    it("the pages name the client's redirect origin, and sign-in then Allow redirects there (Chromium applies form-action to the redirect)", async () => {
      await createUser("elsewhere-user", "elsewhere-user-password");
      const page = await newPage();
      const documentResponse = trackDocuments(page);
      const violations: string[] = [];
      page.on("console", (message) => {
        if (message.text().includes("Content Security Policy")) violations.push(message.text());
      });
      await page.goto(authorizeUrl({ client_id: "other-origin-app", redirect_uri: `${applicationOrigin}/callback`, response_type: "code", scope: "openid profile", state: "elsewhere", ui_locales: "en" }));
      await arrive(page, pagePath("login"), "the login page");
      const policy = (await documentResponse().allHeaders())["content-security-policy"]!.split(";").map((d) => d.trim());
      expect(policy).toEqual(expect.arrayContaining([`form-action 'self' ${applicationOrigin}`, "base-uri 'none'"]));
      await fillLogin(page, "elsewhere-user", "elsewhere-user-password");
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await arrive(page, pagePath("consent"), "the consent page");
      await page.getByRole("button", { name: "Allow", exact: true }).click();
      await arrive(page, (url) => url.origin === applicationOrigin && url.pathname === "/callback", "the application's callback");
      expect(new URL(page.url()).searchParams.get("state")).toBe("elsewhere");
      expect(await text(page.getByRole("heading", { level: 1 }))).toBe("Back at the application");
      expect(violations).toEqual([]);
    });

    it("a page whose form would post to another origin is stopped by the browser", async () => {
      const page = await newPage();
      await page.goto(demoRequest("foreign-form"));
      await arrive(page, pagePath("login"), "the login page");
      const loginUrl = page.url();
      // A form injected into the page (as markup injection would) that posts elsewhere.
      const posted: string[] = [];
      application.on("request", (req: { method?: string }) => posted.push(req.method ?? ""));
      const script = `const f = document.createElement("form"); f.method = "post"; f.action = ${JSON.stringify(`${applicationOrigin}/collect`)}; document.body.append(f); f.submit();`;
      await page.evaluate(script).catch(() => undefined);
      await page.waitForTimeout(500);
      expect(page.url()).toBe(loginUrl);
      expect(posted).toEqual([]);
    });
  });

  describe("framing", () => {
    it("the login page cannot be shown in a frame, not even by a page of the same site", async () => {
      const page = await newPage();
      await page.goto(demoRequest("framed"));
      await arrive(page, pagePath("login"), "the login page");
      const loginUrl = page.url();
      // A page on the provider's own origin is the strictest case: its requests carry the cookies,
      // so only the response headers (X-Frame-Options, CSP frame-ancestors) keep the form out of the frame.
      const framerUrl = `${issuer}/framing-test-page`;
      await page.context().route(framerUrl, (route) =>
        route.fulfill({
          contentType: "text/html",
          body: `<!doctype html><title>framer</title><iframe src="${loginUrl}" title="framed" width="600" height="400"></iframe>`,
        }),
      );
      const framer = await page.context().newPage();
      await framer.goto(framerUrl);
      const frame = framer.frames().find((f) => f !== framer.mainFrame());
      expect(frame).toBeDefined();
      expect(frame!.url()).toBe("chrome-error://chromewebdata/");
      expect(await frame!.getByLabel("Password").count()).toBe(0);
      // The same URL opened as a page of its own still works.
      await framer.goto(loginUrl);
      expect(await framer.getByLabel("Password", { exact: true }).count()).toBe(1);
    });
  });
});
