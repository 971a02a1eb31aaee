import { decodeJwt } from "jose";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/domain/oidc/flow/secrets.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import {
  authorizeUrl,
  basicAuthorization,
  Browser,
  createUser,
  csrfOf,
  expectCodeRedirect,
  expectPage,
  findCode,
  getUserinfo,
  postPar,
  postToken,
  registerClient,
  sessionCookie,
  signIn,
  type Reply,
  type TestUser,
} from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * The pages' language (ui_locales, the switch, Accept-Language, the default)
 * and claims_locales, end to end over HTTP, on every database target.
 */
const targets = await databaseTargets();

const clientId = "locale-app";
const secret = "locale-app-secret-0123456789";
const redirectUri = "https://locale.example/cb";
const japaneseNames = [
  { tag: "ja", value: "見本 花子" },
  { tag: "ja-Kana-JP", value: "ミホン ハナコ" },
];

/** The `lang` of the page's <html>, its <h1> and whether it offers a switch to the other language. */
function languageOf(reply: Reply): { lang: string | undefined; h1: string | undefined } {
  return {
    lang: /<html lang="([^"]*)">/.exec(reply.body)?.[1],
    h1: /<h1>(.*?)<\/h1>/s.exec(reply.body)?.[1]?.replace(/<[^>]+>/g, "").replace(/&#39;/g, "'"),
  };
}

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let database: ScratchDatabase | undefined;
    let server: TestServer;
    let japaneseDefault: TestServer;
    let user: TestUser;

    beforeAll(async () => {
      database = await target.create();
      server = await startTestServer(database.url);
      // A second instance on the same database, configured for Japanese by default.
      japaneseDefault = await startTestServer(database.url, { defaultLocale: "ja" });
      await registerClient(server, {
        client_id: clientId,
        token_endpoint_auth_method: "client_secret_basic",
        client_secret: secret,
        redirect_uris: [redirectUri],
        scope: "openid profile email offline_access",
      });
    });

    // A user of each test's own: a grant one test makes would skip the consent page another expects.
    beforeEach(async () => {
      user = await createUser(server);
      await server.domain.oidc.users.setLocalizedNames(user.row.id, japaneseNames);
    });

    afterAll(async () => {
      await japaneseDefault?.close();
      await server?.close();
      await database?.drop();
    });

    const request = (extra: Record<string, string | undefined> = {}) =>
      authorizeUrl({ client_id: clientId, redirect_uri: redirectUri, response_type: "code", scope: "openid profile", state: "s1", ...extra });

    async function loginPage(browser: Browser, extra: Record<string, string | undefined>, headers: Record<string, string> = {}): Promise<{ path: string; page: Reply }> {
      const start = await browser.get(request(extra), headers);
      const path = expectPage(start, "login");
      const page = await browser.get(path, headers);
      expect(page.status, page.body).toBe(200);
      return { path, page };
    }

    describe("a sign-in that has ended, reached again", () => {
      /** The way back the page offers, split: where it goes and its query. */
      function wayBack(reply: Reply): URL {
        const href = /<a class="button primary" href="([^"]+)" id="return-to-app">/.exec(reply.body)?.[1];
        expect(href, "the page offers the way back").toBeDefined();
        return new URL(href!.replace(/&amp;/g, "&"));
      }

      it("completed: the back button finds 'start again' with the way back to the app, in the interaction's language", async () => {
        const browser = new Browser(server.url);
        const { path, page } = await loginPage(browser, { ui_locales: "ja", state: "done-1" });
        const consent = expectPage(await browser.post(path, { csrf: csrfOf(page.body), login: user.login, password: user.password }), "consent");
        const consentPage = await browser.get(consent);
        expectCodeRedirect(await browser.post(consent, { csrf: csrfOf(consentPage.body), decision: "allow" }), { redirectUri, issuer: server.domain.oidc.issuer, state: "done-1" });
        for (const again of [consent, path]) {
          const ended = await browser.get(again, { "accept-language": "en" });
          expect(ended.status).toBe(400);
          expect(languageOf(ended)).toEqual({ lang: "ja", h1: "このログインの手続きは終了しています" });
          expect(ended.body).toContain('data-reason="completed"');
          expect(ended.body).toContain(">アプリに戻ってやり直す</a>");
          const back = wayBack(ended);
          expect(`${back.origin}${back.pathname}`).toBe(redirectUri);
          expect(Object.fromEntries(back.searchParams)).toMatchObject({ error: "access_denied", state: "done-1", iss: server.domain.oidc.issuer });
          expect(back.searchParams.has("code")).toBe(false);
        }
        // A second Allow is no second code: the same page.
        expect((await browser.post(consent, { csrf: csrfOf(consentPage.body), decision: "allow" })).body).toContain('data-reason="completed"');
      });

      it("expired: the same, in English; another browser learns nothing of it", async () => {
        const browser = new Browser(server.url);
        const { path } = await loginPage(browser, { state: "late-1" }, { "accept-language": "en" });
        const id = new URL(path, server.url).searchParams.get("interaction")!;
        await server.database.db.updateTable("oidc_interactions").set({ expires_at: Date.now() - 1000 }).where("id_hash", "=", sha256Hex(id)).execute();
        const ended = await browser.get(path, { "accept-language": "en" });
        expect(ended.status).toBe(400);
        expect(languageOf(ended)).toEqual({ lang: "en", h1: "This sign-in has ended" });
        expect(ended.body).toContain("It was left unfinished for too long, so it has expired.");
        expect(ended.body).toContain("Return to the app and start again</a>");
        expect(Object.fromEntries(wayBack(ended).searchParams)).toMatchObject({ error: "access_denied", state: "late-1" });
        // Its switch speaks Japanese on request.
        expect(languageOf(await browser.get(`${path}&ui_locales=ja`)).lang).toBe("ja");
        const stranger = await new Browser(server.url).get(path, { "accept-language": "en" });
        expect(stranger.status).toBe(400);
        expect(stranger.body).not.toContain("return-to-app");
        expect(stranger.body).not.toContain(redirectUri);
      });
    });

    describe("times on pages", () => {
      /** The step-up page after a password sign-in, for a user with a second factor; and when the session began. */
      async function stepUpPage(on: TestServer, uiLocales: string): Promise<{ page: Reply; authTime: number }> {
        const stepping = await createUser(on, { totp: true });
        const browser = new Browser(on.url);
        const start = await browser.get(request({ acr_values: "high", ui_locales: uiLocales }));
        const reauth = await signIn(browser, start, stepping.login, stepping.password);
        const page = await browser.get(expectPage(reauth, "reauth"));
        expect(page.status, page.body).toBe(200);
        const session = await on.domain.oidc.flow.session(browser.jar.get(sessionCookie));
        return { page, authTime: session!.authTime };
      }
      const shown = (locale: string, timeZone: string, at: number) =>
        new Intl.DateTimeFormat(locale, { year: "numeric", month: "long", day: "numeric", hour: "numeric", minute: "2-digit", timeZone, timeZoneName: "long" }).format(at);

      it("are in Japan time and say so, in both languages, whatever the server's zone", async () => {
        const ja = await stepUpPage(server, "ja");
        expect(ja.page.body).toContain(shown("ja", "Asia/Tokyo", ja.authTime));
        expect(ja.page.body).toContain("日本標準時");
        const en = await stepUpPage(server, "en");
        expect(en.page.body).toContain(shown("en", "Asia/Tokyo", en.authTime));
        expect(en.page.body).toContain("Japan Standard Time");
      });

      it("follow SHOMEI_TIME_ZONE when it is set", async () => {
        const berlin = await startTestServer(server.config.databaseUrl, { timeZone: "Europe/Berlin" });
        try {
          const { page, authTime } = await stepUpPage(berlin, "en");
          expect(page.body).toContain(shown("en", "Europe/Berlin", authTime));
          expect(page.body).toMatch(/Central European (Standard|Summer) Time/);
        } finally {
          await berlin.close();
        }
      });
    });

    it("discovery names the page languages and the claims languages", async () => {
      const metadata = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      expect(metadata.ui_locales_supported).toEqual(["en", "ja"]);
      expect(metadata.claims_locales_supported).toEqual(["en", "ja", "ja-Kana-JP"]);
    });

    it("ui_locales=ja: the sign-in page is Japanese, whatever the browser prefers", async () => {
      const { path, page } = await loginPage(new Browser(server.url), { ui_locales: "fr ja" }, { "accept-language": "en-US,en" });
      expect(languageOf(page)).toEqual({ lang: "ja", h1: "ログイン" });
      expect(page.body).toContain("<label for=\"login\">ユーザー名</label>");
      // The switch offers English as a link to the same page of the interaction, never as a button of its form.
      const interaction = new URL(path, server.url).searchParams.get("interaction")!;
      expect(page.body).toContain(`<a href="/auth/login?interaction=${interaction}&amp;ui_locales=en" lang="en" hreflang="en">English</a>`);
      expect(page.body).not.toContain("switch_locale");
    });

    it("ui_locales nobody supports, or malformed, is no error: the browser's language decides", async () => {
      for (const uiLocales of ["fr de", "<b> ja_JP", "x".repeat(300)]) {
        const { page } = await loginPage(new Browser(server.url), { ui_locales: uiLocales }, { "accept-language": "ja-JP" });
        expect(languageOf(page).lang, uiLocales).toBe("ja");
      }
    });

    it("ui_locales is kept through PAR and every page of the interaction", async () => {
      const pushed = await postPar(
        server,
        { redirect_uri: redirectUri, response_type: "code", scope: "openid profile", state: "par-state", ui_locales: "ja-JP" },
        { authorization: basicAuthorization(clientId, secret) },
      );
      expect(pushed.status, pushed.text).toBe(201);
      const browser = new Browser(server.url);
      const start = await browser.get(authorizeUrl({ client_id: clientId, request_uri: pushed.json!.request_uri as string }), { "accept-language": "en" });
      const path = expectPage(start, "login");
      const page = await browser.get(path, { "accept-language": "en" });
      expect(languageOf(page)).toEqual({ lang: "ja", h1: "ログイン" });
      // A failed attempt is explained in Japanese too.
      const failed = await browser.post(path, { csrf: csrfOf(page.body), login: user.login, password: "wrong password" }, { "accept-language": "en" });
      expect(failed.status).toBe(401);
      expect(failed.body).toContain("ユーザー名またはパスワードが正しくありません。");
      const signedIn = await browser.post(path, { csrf: csrfOf(page.body), login: user.login, password: user.password }, { "accept-language": "en" });
      const consent = await browser.get(expectPage(signedIn, "consent"), { "accept-language": "en" });
      expect(languageOf(consent).lang).toBe("ja");
      expect(consent.body).toContain("氏名とプロフィール");
      expect(consent.body).toContain(">許可する</button>");
    });

    it("the switch keeps the interaction and its CSRF token, and holds for the next pages", async () => {
      const browser = new Browser(server.url);
      const { path, page } = await loginPage(browser, { ui_locales: "ja" });
      const csrf = csrfOf(page.body);
      const switched = await browser.get(`${path}&ui_locales=en`);
      expect(switched.status).toBe(200);
      expect(languageOf(switched)).toEqual({ lang: "en", h1: "Sign in" });
      expect(csrfOf(switched.body)).toBe(csrf);
      expect(switched.body).toContain(`action="${path.replace(/&/g, "&amp;")}"`);
      // Reloading the page, and the pages after it, stay English although the request asked for Japanese.
      expect(languageOf(await browser.get(path)).lang).toBe("en");
      const signedIn = await browser.post(path, { csrf, login: user.login, password: user.password });
      const consentPath = expectPage(signedIn, "consent");
      const consent = await browser.get(consentPath);
      expect(languageOf(consent)).toEqual({ lang: "en", h1: "locale-app wants to access your account" });
      // A GET with ui_locales switches too; an unsupported language changes nothing.
      expect(languageOf(await browser.get(`${consentPath}&ui_locales=ja`)).lang).toBe("ja");
      const unsupported = await browser.get(`${consentPath}&ui_locales=fr`);
      expect(unsupported.status).toBe(200);
      expect(languageOf(unsupported).lang).toBe("ja");
      // The switch made no decision: the interaction still waits for Allow or Deny, and allowing completes it.
      expectCodeRedirect(await browser.post(consentPath, { csrf: csrfOf(consent.body), decision: "allow" }), {
        redirectUri,
        issuer: server.domain.oidc.issuer,
        state: "s1",
      });
    });

    it("a form without this interaction's CSRF token is refused and changes nothing", async () => {
      const browser = new Browser(server.url);
      const { path } = await loginPage(browser, { ui_locales: "ja" });
      const forged = await browser.post(path, { csrf: "forged", login: user.login, password: user.password });
      expect(forged.status).toBe(403);
      // The error page speaks the interaction's language.
      expect(languageOf(forged).lang).toBe("ja");
      expect(forged.body).toContain("フォームの有効期限が切れたか");
      expect(languageOf(await browser.get(path)).lang).toBe("ja");
    });

    it("sign-out speaks its ui_locales, through the confirmation", async () => {
      const browser = new Browser(server.url);
      const { path, page } = await loginPage(browser, {});
      await browser.post(path, { csrf: csrfOf(page.body), login: user.login, password: user.password });
      const confirm = await browser.get("/auth/logout?ui_locales=ja", { "accept-language": "en" });
      expect(confirm.status).toBe(200);
      expect(languageOf(confirm)).toEqual({ lang: "ja", h1: "ログアウト" });
      expect(confirm.body).toContain('<input type="hidden" name="ui_locales" value="ja">');
      // Its switch links to the same request in English.
      expect(confirm.body).toContain('href="/auth/logout?ui_locales=en"');
      const done = await browser.post("/auth/logout", { csrf: csrfOf(confirm.body), ui_locales: "ja", confirm: "yes" }, { "accept-language": "en" });
      expect(done.status).toBe(200);
      expect(languageOf(done)).toEqual({ lang: "ja", h1: "ログアウトしました" });
    });

    describe("Accept-Language", () => {
      it.each([
        ["ja", "ja"],
        
        ["ja-JP,ja;q=0.9,en-US;q=0.8,en;q=0.7", "ja"],
        ["en-US,en;q=0.9,ja;q=0.8", "en"],
        ["fr-FR, ja;q=0.5", "ja"],
        ["ja;q=0, *", "en"],
        ["en;q=0, *;q=0.1", "ja"],
        ["*", "en"],
        ["de", "en"],
        [";;q=,ja;q=1.5,=,", "en"],
        ["\u00e9\u00e8", "en"],
        ["ja,xxx…(5,000 characters)", "en"],
      ])("%s → %s, never an error", async (header, expected) => {
        if (header.endsWith("(5,000 characters)")) header = "ja," + "x".repeat(5000);
        const { page } = await loginPage(new Browser(server.url), {}, { "accept-language": header });
        expect(languageOf(page).lang).toBe(expected);
      });

      it("without a usable header the configured default speaks", async () => {
        for (const header of [undefined, "*", "q=0.5;;", "de"]) {
          const browser = new Browser(japaneseDefault.url);
          const start = await browser.get(request(), header === undefined ? {} : { "accept-language": header });
          const page = await browser.get(expectPage(start, "login"), header === undefined ? {} : { "accept-language": header });
          expect(page.status).toBe(200);
          expect(languageOf(page).lang, String(header)).toBe("ja");
        }
      });
    });

    it("error pages follow ui_locales or Accept-Language, and never repeat the refused request", async () => {
      const unknownClient = await new Browser(server.url).get(
        authorizeUrl({ client_id: "nobody", redirect_uri: "https://evil.example/cb", response_type: "code", scope: "openid", state: "s", ui_locales: "ja" }),
      );
      expect(unknownClient.status).toBe(400);
      expect(languageOf(unknownClient)).toEqual({ lang: "ja", h1: "このアプリではログインできません" });
      expect(unknownClient.body).toContain("このアプリはこのサービスに登録されていません。");
      expect(unknownClient.body).not.toContain("evil.example");
      const badRedirect = await new Browser(server.url).get(request({ redirect_uri: "https://evil.example/cb" }), { "accept-language": "ja" });
      expect(badRedirect.status).toBe(400);
      expect(badRedirect.body).toContain("戻り先（redirect_uri）が、このアプリに登録されたものではありません。");
      expect(badRedirect.body).not.toContain("evil.example");
      const english = await new Browser(server.url).get(request({ redirect_uri: "https://evil.example/cb" }));
      expect(languageOf(english)).toEqual({ lang: "en", h1: "This sign-in request can't be completed" });
      const expired = await new Browser(server.url).get("/auth/login?interaction=nothing-here", { "accept-language": "ja" });
      expect(expired.status).toBe(400);
      expect(expired.body).toContain("このログインの手続きは有効期限が切れているか");
      // There the switch links to the same address in English.
      expect(expired.body).toContain('href="/auth/login?interaction=nothing-here&amp;ui_locales=en"');
    });

    describe("claims_locales", () => {
      async function tokensFor(extra: Record<string, string | undefined>, scope = "openid profile") {
        const browser = new Browser(server.url);
        const start = await browser.get(request({ scope, ...extra }));
        let reply = await signIn(browser, start, user.login, user.password);
        if (reply.location?.startsWith("/auth/consent?")) {
          const consentPath = expectPage(reply, "consent");
          const consent = await browser.get(consentPath);
          reply = await browser.post(consentPath, { csrf: csrfOf(consent.body), decision: "allow" });
        }
        const code = expectCodeRedirect(reply, { redirectUri, issuer: server.domain.oidc.issuer, state: "s1" });
        const stored = await findCode(server, code);
        const answer = await postToken(
          server,
          { grant_type: "authorization_code", code, redirect_uri: redirectUri },
          { authorization: basicAuthorization(clientId, secret) },
        );
        expect(answer.status, answer.text).toBe(200);
        return { stored, json: answer.json!, idToken: decodeJwt(answer.json!.id_token as string) };
      }

      it("ja: the Japanese name and its reading in the ID token and from userinfo", async () => {
        const { stored, json, idToken } = await tokensFor({ claims_locales: "ja" });
        expect(stored?.payload.claimsLocales).toEqual(["ja"]);
        const names = { name: "見本 花子", "name#ja": "見本 花子", "name#ja-Kana-JP": "ミホン ハナコ" };
        expect(idToken).toMatchObject(names);
        const info = await getUserinfo(server, json.access_token as string);
        expect(info.status).toBe(200);
        expect(info.json).toEqual({ ...names, sub: user.row.id, preferred_username: user.login, auth_time: expect.any(Number), acr: expect.any(String), amr: ["pwd"], sid: expect.any(String), jpki_verified: false });
      });

      it("refreshed tokens keep the languages: the new ID token and userinfo answer in Japanese too", async () => {
        const first = await tokensFor({ claims_locales: "ja" }, "openid profile offline_access");
        expect(first.json.refresh_token, JSON.stringify(first.json)).toEqual(expect.any(String));
        const refreshed = await postToken(
          server,
          { grant_type: "refresh_token", refresh_token: first.json.refresh_token as string },
          { authorization: basicAuthorization(clientId, secret) },
        );
        expect(refreshed.status, refreshed.text).toBe(200);
        expect(decodeJwt(refreshed.json!.id_token as string)).toMatchObject({ name: "見本 花子", "name#ja-Kana-JP": "ミホン ハナコ" });
        expect((await getUserinfo(server, refreshed.json!.access_token as string)).json["name#ja-Kana-JP"]).toBe("ミホン ハナコ");
      });

      it("ja-Kana-JP: the reading alone; an unknown language: the plain name", async () => {
        const kana = await tokensFor({ claims_locales: "ja-Kana-JP" });
        expect(kana.idToken.name).toBe("ミホン ハナコ");
        expect(kana.idToken).not.toHaveProperty("name#ja");
        expect((await getUserinfo(server, kana.json.access_token as string)).json.name).toBe("ミホン ハナコ");
        const french = await tokensFor({ claims_locales: "fr en" });
        expect(french.idToken.name).toBe("Test User");
        expect((await getUserinfo(server, french.json.access_token as string)).json).not.toHaveProperty("name#ja");
      });

      it("without claims_locales, ID tokens carry no name and userinfo the plain one, as before", async () => {
        const { idToken, json } = await tokensFor({});
        expect(idToken).not.toHaveProperty("name");
        const info = await getUserinfo(server, json.access_token as string);
        expect(info.json.name).toBe("Test User");
        expect(Object.keys(info.json).filter((k) => k.startsWith("name#"))).toEqual([]);
      });

      it("without the profile scope, no name at all", async () => {
        const { idToken, json } = await tokensFor({ claims_locales: "ja" }, "openid email");
        expect(idToken).not.toHaveProperty("name");
        expect((await getUserinfo(server, json.access_token as string)).json).not.toHaveProperty("name");
      });
    });
  });
}
