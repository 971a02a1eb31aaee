import { mkdirSync } from "node:fs";
import path from "node:path";
import { decodeJwt } from "jose";
import type { Page } from "playwright-core";
import { expect } from "vitest";
import { seedOidcDemo, type OidcDemo } from "../../src/app/mock/oidc-demo-seed.ts";
import { freePort } from "./openssl-ocsp.ts";
import { basicAuthorization, postToken } from "./oidc.ts";
import { startTestServer, type TestServer } from "./server.ts";

/**
 * A server for passkey tests in a browser: WebAuthn refuses IP addresses as
 * RP IDs, so the issuer is http://localhost:<port> (Chromium takes localhost
 * to the loopback address the server listens on), with the demo client and
 * a password-only user of the test's own.
 */
export interface PasskeyServer {
  server: TestServer;
  demo: OidcDemo;
  base: string;
  login: string;
  password: string;
}

let users = 0;

export async function startPasskeyServer(home: string, settings: Record<string, unknown> = {}): Promise<PasskeyServer> {
  mkdirSync(home, { recursive: true });
  const port = await freePort();
  const base = `http://localhost:${port}`;
  const server = await startTestServer(`sqlite:${path.join(home, "shomei.db")}`, { dataDir: home, port, baseUrl: base, ...settings });
  const demo = await seedOidcDemo(server.domain.oidc, home, Date.now());
  const login = `passkey-user-${process.pid}-${++users}`;
  const password = "correct horse battery";
  await server.domain.oidc.users.create({ login, password, name: "Passkey User" });
  return { server, demo, base, login, password };
}

/** The code at the demo callback, redeemed: the ID token's claims. */
export async function idTokenAtCallback(page: Page, s: PasskeyServer): Promise<Record<string, unknown>> {
  await page.waitForURL((url) => url.pathname === "/demo/callback");
  const url = new URL(page.url());
  expect(url.searchParams.get("error"), url.searchParams.get("error_description") ?? "").toBeNull();
  const reply = await postToken(s.server, { grant_type: "authorization_code", code: url.searchParams.get("code")!, redirect_uri: s.demo.redirectUri }, {
    authorization: basicAuthorization(s.demo.clientId, s.demo.clientSecret),
  });
  expect(reply.status, JSON.stringify(reply.json)).toBe(200);
  return decodeJwt(reply.json!.id_token as string);
}

/** Through the consent page when it comes (a first grant), to the callback. */
export async function allowIfAsked(page: Page): Promise<void> {
  await page.waitForURL((url) => url.pathname === "/auth/consent" || url.pathname === "/demo/callback");
  if (new URL(page.url()).pathname === "/auth/consent") await page.locator("button[name=decision][value=allow]").click();
}
