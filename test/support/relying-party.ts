import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";

/**
 * The web side of a relying party: an HTTP server on 127.0.0.1 whose callback
 * receives the authorization responses the browser is redirected to, as a
 * real application's would. It only records them; redeeming the code is the
 * test's business.
 */
export interface RelyingParty {
  /** The redirect_uri to register: http://127.0.0.1:<port>/cb */
  redirectUri: string;
  /** Every request that reached the callback, full URL, in arrival order. */
  received: URL[];
  /** The authorization response that carried this state; throws when none did. */
  responseFor(state: string): URL;
  close(): Promise<void>;
}

export async function startRelyingParty(): Promise<RelyingParty> {
  const received: URL[] = [];
  let origin = "";
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", origin);
    if (req.method === "GET" && url.pathname === "/cb") {
      received.push(url);
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
      res.end("<!doctype html><title>Relying party</title><h1>Authorization response received</h1>");
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" }).end("not found");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    redirectUri: `${origin}/cb`,
    received,
    responseFor(state) {
      const matching = received.filter((url) => url.searchParams.get("state") === state);
      if (matching.length !== 1) throw new Error(`expected one authorization response with state ${state}, got ${matching.length}`);
      return matching[0]!;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An interaction page of the provider the browser went through. */
export type InteractionPage = "login" | "consent" | "reauth";

/**
 * Opens an authorization URL in the tab and does what a person would until the
 * browser lands on the relying party's callback: signs in on the login page,
 * clicks Allow on the consent page. Returns the pages seen, in order. A
 * re-authentication page fails the flow unless the user can answer it
 * (`otp` gives the current one-time code): then the code is entered, and the
 * password too when the page asks for it (not within minutes of signing in).
 */
export async function authorizeInBrowser(
  page: Page,
  authorizationUrl: URL,
  redirectUri: string,
  user: { login: string; password: string; otp?: () => string },
): Promise<InteractionPage[]> {
  const provider = authorizationUrl.origin;
  const where = (url: URL): InteractionPage | "callback" | undefined => {
    if (url.href.startsWith(`${redirectUri}?`)) return "callback";
    const match = /^\/auth\/(login|consent|reauth)$/.exec(url.pathname);
    return url.origin === provider && match ? (match[1] as InteractionPage) : undefined;
  };
  const settle = async (previous: string | undefined): Promise<InteractionPage | "callback"> => {
    try {
      await page.waitForURL((url) => url.href !== previous && where(url) !== undefined);
    } catch (error) {
      const heading = await page.locator("h1").first().innerText().catch(() => "(none)");
      const alert = await page.getByRole("alert").first().innerText({ timeout: 500 }).catch(() => "(none)");
      throw new Error(`the browser stopped at ${page.url()} (heading: ${heading}; alert: ${alert})`, { cause: error });
    }
    return where(new URL(page.url()))!;
  };

  const seen: InteractionPage[] = [];
  await page.goto(authorizationUrl.href);
  let at = await settle(undefined);
  while (at !== "callback") {
    seen.push(at);
    if (at === "reauth" && !user.otp) throw new Error(`unexpected re-authentication page at ${page.url()}`);
    const before = page.url();
    if (at === "reauth") {
      const password = page.getByLabel("Password", { exact: true });
      if ((await password.count()) > 0) await password.fill(user.password);
      await page.getByLabel("One-time code", { exact: true }).fill(user.otp!());
      await page.getByRole("button", { name: "Continue", exact: true }).click();
    } else if (at === "login") {
      await page.getByLabel("Username", { exact: true }).fill(user.login);
      await page.getByLabel("Password", { exact: true }).fill(user.password);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
    } else {
      await page.getByRole("button", { name: "Allow", exact: true }).click();
    }
    at = await settle(before);
  }
  return seen;
}
