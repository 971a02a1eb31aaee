import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { providerAccountName } from "../../src/domain/oidc/jpki/provider-account.ts";
import { sha256Hex } from "../../src/domain/oidc/flow/secrets.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { challengeOf, derOf, expectJpkiRefusal, foreignCard, mockCard, signChallenge, type TestCard } from "../support/jpki.ts";
import {
  authorizeUrl,
  basicAuthorization,
  Browser,
  createUser,
  csrfOf,
  expectCodeRedirect,
  expectErrorRedirect,
  expectPage,
  findRecord,
  getUserinfo,
  obtainCode,
  pkce,
  postToken,
  registerClient,
  sessionCookie,
  signIn,
  type Reply,
  type TestUser,
} from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { mockOf } from "../../src/app/mock/installed-mock.ts";

/**
 * JPKI sign-in through real requests on each database: step-up to very_high
 * with a linked card, each way a signature is refused (with its exact error,
 * and the session, links and challenges as they were), sign-in with the card,
 * linking a certificate on the page, and revocation turning jpki_verified false.
 */
const redirectUri = "https://jpki-app.example/cb";
const secret = "jpki-app-secret-0123456789";

for (const target of await databaseTargets()) {
  describe.skipIf(target.unavailable !== undefined)(`JPKI sign-in on ${targetTitle(target)}`, () => {
    let database: ScratchDatabase;
    let dataDir: string;
    let server: TestServer;
    let accountId: string;
    let alice: TestUser;
    let bob: TestUser;
    let aliceCard: TestCard;
    let bobCard: TestCard;
    const issuer = () => server.domain.oidc.issuer;

    beforeAll(async () => {
      database = await target.create();
      dataDir = mkdtempSync(path.join(tmpdir(), "shomei-jpki-"));
      server = await startTestServer(database.url, { dataDir });
      await registerClient(server, { client_id: "jpki-app", client_secret: secret, redirect_uris: [redirectUri], scope: "openid profile" });
      accountId = (await server.domain.accounts.create("jpki-cards", "active")).id;
      alice = await createUser(server);
      bob = await createUser(server);
      aliceCard = await mockCard(server, accountId);
      bobCard = await mockCard(server, accountId);
      await server.domain.oidc.jpki.linkByOperator(alice.row.id, derOf(aliceCard));
      await server.domain.oidc.jpki.linkByOperator(bob.row.id, derOf(bobCard));
    });

    afterAll(async () => {
      await server?.close();
      await database?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    const params = (extra: Record<string, string> = {}) => ({
      client_id: "jpki-app",
      redirect_uri: redirectUri,
      response_type: "code",
      scope: "openid",
      state: "s1",
      ...extra,
    });

    /** Signs `user` in with the password for a very_high request; returns the browser and the step-up page's path. */
    async function atStepUp(user: TestUser, b = new Browser(server.url)): Promise<{ b: Browser; path: string }> {
      let reply = await b.get(authorizeUrl(params({ acr_values: "very_high", max_age: "0" })));
      if (reply.location?.startsWith("/auth/login?")) reply = await signIn(b, reply, user.login, user.password);
      return { b, path: expectPage(reply, "reauth") };
    }

    async function openPage(b: Browser, path: string): Promise<{ csrf: string; challenge: string; body: string }> {
      const page = await b.get(path);
      expect(page.status, page.body).toBe(200);
      return { csrf: csrfOf(page.body), challenge: challengeOf(page.body), body: page.body };
    }

    function submit(b: Browser, path: string, fields: { csrf: string; challenge: string; card: TestCard; signature?: string }): Promise<Reply> {
      return b.post(path, {
        csrf: fields.csrf,
        method: "jpki",
        challenge: fields.challenge,
        certificate: fields.card.certificatePem,
        signature: fields.signature ?? signChallenge(fields.card, fields.challenge),
      });
    }

    /** Past the consent page when it comes (the first time a user meets the client). */
    async function pastConsent(b: Browser, reply: Reply): Promise<Reply> {
      if (!reply.location?.startsWith("/auth/consent?")) return reply;
      const page = await b.get(reply.location);
      return b.post(reply.location, { csrf: csrfOf(page.body), decision: "allow" });
    }

    async function session(b: Browser) {
      return server.domain.oidc.flow.session(b.jar.get(sessionCookie));
    }

    async function redeem(code: string): Promise<{ idToken: Record<string, unknown>; accessToken: string }> {
      const reply = await postToken(server, { grant_type: "authorization_code", code, redirect_uri: redirectUri }, { authorization: basicAuthorization("jpki-app", secret) });
      expect(reply.status, JSON.stringify(reply.json)).toBe(200);
      return { idToken: decodeJwt(reply.json!.id_token as string) as Record<string, unknown>, accessToken: reply.json!.access_token as string };
    }

    const providerVerifications = async () => {
      const account = await server.domain.accounts.get(providerAccountName);
      return (await server.domain.verifications.list(account.id, {}, 100, "")).verifications;
    };

    it("a password session steps up to very_high with the linked signature certificate: acr, amr, jpki_verified", async () => {
      const { b, path } = await atStepUp(alice);
      const before = await session(b);
      expect(before).toMatchObject({ acr: "low", amr: ["pwd"] });
      const { csrf, challenge, body } = await openPage(b, path);
      expect(body).toContain("signature certificate");
      // Production never hands a key to the page; the mock does only for a user with a mock card, and alice has none.
      expect(body).not.toContain("mock-card");
      const code = expectCodeRedirect(await pastConsent(b, await submit(b, path, { csrf, challenge, card: aliceCard })), { redirectUri, issuer: issuer(), state: "s1" });
      const { idToken, accessToken } = await redeem(code);
      expect(idToken).toMatchObject({ acr: "very_high", amr: ["jpki_sig", "hwk", "sc"], jpki_verified: true, sub: alice.row.id });
      // Nothing of the certificate travels in the token.
      expect(Object.keys(idToken).sort()).toEqual(["acr", "amr", "at_hash", "aud", "auth_time", "azp", "exp", "iat", "iss", "jpki_verified", "sid", "sub"]);
      const info = await getUserinfo(server, accessToken);
      expect(info.json).toMatchObject({ acr: "very_high", amr: ["jpki_sig", "hwk", "sc"], jpki_verified: true });
      expect(await session(b)).toMatchObject({ acr: "very_high", amr: ["jpki_sig", "hwk", "sc"] });
      // The verification is recorded in the provider's certificate account, as the API records one.
      expect((await providerVerifications())[0]).toMatchObject({ result: "ok", hashAlgorithm: "sha256" });
    });

    it("a replayed challenge is refused as already used, and the session stays as it was", async () => {
      const { b, path } = await atStepUp(bob);
      const { csrf, challenge } = await openPage(b, path);
      // The first use fails (a signature over other text) and uses the challenge up.
      const first = await submit(b, path, { csrf, challenge, card: bobCard, signature: signChallenge(bobCard, challenge, "something else") });
      expectJpkiRefusal(first, 401, "signature_mismatch", /does not match this challenge/);
      const replay = await submit(b, path, { csrf, challenge, card: bobCard });
      expectJpkiRefusal(replay, 400, "challenge_invalid", /^The challenge was already used\./);
      expect(await session(b)).toMatchObject({ acr: "low", amr: ["pwd"] });
    });

    it("speaks the request's language: the page and its refusals in Japanese with ui_locales=ja, the same codes", async () => {
      const b = new Browser(server.url);
      let reply = await b.get(authorizeUrl(params({ acr_values: "very_high", max_age: "0", ui_locales: "ja" })));
      if (reply.location?.startsWith("/auth/login?")) reply = await signIn(b, reply, bob.login, bob.password);
      const path = expectPage(reply, "reauth");
      const { csrf, challenge, body } = await openPage(b, path);
      expect(body).toContain('<html lang="ja">');
      expect(body).toContain("マイナンバーカードで本人確認");
      expect(body).toContain("署名用電子証明書を使ってください。");
      const refused = await submit(b, path, { csrf, challenge, card: bobCard, signature: signChallenge(bobCard, challenge, "something else") });
      expectJpkiRefusal(refused, 401, "signature_mismatch", /^署名がこの文字列と電子証明書に一致しません。/);
      expect(await session(b)).toMatchObject({ acr: "low", amr: ["pwd"] });
    });

    it("a card sign-in form without its CSRF token is refused with 403 in the interaction's language, nothing signed in", async () => {
      const b = new Browser(server.url);
      const reply = await b.get(authorizeUrl(params({ ui_locales: "ja" })));
      const loginPath = expectPage(reply, "login");
      const refused = await b.post(loginPath.replace("/auth/login?", "/auth/login/jpki?"), { csrf: "not-this-one", method: "jpki", challenge: "x", certificate: "", signature: "" });
      expect(refused.status).toBe(403);
      expect(refused.body).toContain('<html lang="ja">');
      expect(await session(b)).toBeUndefined();
    });

    it("a challenge of another interaction is refused like an unknown one and left unused for its own", async () => {
      const b = new Browser(server.url);
      const one = await atStepUp(bob, b);
      const two = await atStepUp(bob, b);
      const first = await openPage(b, one.path);
      const second = await openPage(b, two.path);
      const foreign = await submit(b, two.path, { csrf: second.csrf, challenge: first.challenge, card: bobCard });
      expectJpkiRefusal(foreign, 400, "challenge_invalid", /^The challenge is not one this page issued\./);
      expect(await session(b)).toMatchObject({ acr: "low", amr: ["pwd"] });
      expect((await findRecord(server, "jpki_challenge", first.challenge))?.consumedAt).toBeNull();
      // Its own interaction can still use it.
      expectCodeRedirect(await pastConsent(b, await submit(b, one.path, { csrf: first.csrf, challenge: first.challenge, card: bobCard })), { redirectUri, issuer: issuer(), state: "s1" });
    });

    it("a certificate linked to another user is refused; no session or link changes", async () => {
      const { b, path } = await atStepUp(alice);
      const { csrf, challenge } = await openPage(b, path);
      const linksBefore = await server.domain.oidc.jpki.linksOf(bob.row.id);
      const reply = await submit(b, path, { csrf, challenge, card: bobCard });
      expectJpkiRefusal(reply, 403, "certificate_not_linked", /^This certificate is not linked to your account\./);
      expect(await session(b)).toMatchObject({ acr: "low", amr: ["pwd"] });
      expect(await server.domain.oidc.jpki.linksOf(bob.row.id)).toEqual(linksBefore);
    });

    it("a certificate no trust anchor vouches for is refused and not registered", async () => {
      const { b, path } = await atStepUp(alice);
      const { csrf, challenge } = await openPage(b, path);
      const stranger = await foreignCard();
      const verificationsBefore = (await providerVerifications()).length;
      const reply = await submit(b, path, { csrf, challenge, card: stranger });
      expectJpkiRefusal(reply, 400, "certificate_untrusted", /^This certificate was not issued by a JPKI certification authority this service trusts\./);
      expect(await session(b)).toMatchObject({ acr: "low", amr: ["pwd"] });
      expect(await providerVerifications()).toHaveLength(verificationsBefore);
      const account = await server.domain.accounts.get(providerAccountName);
      await expect(server.domain.statusChecks.checkCertificateContent(account.id, derOf(stranger))).rejects.toMatchObject({ code: "unsupported_certificate" });
    });

    it("a signature over the wrong digest is refused as a mismatch; the session stays low", async () => {
      const { b, path } = await atStepUp(alice);
      const { csrf, challenge } = await openPage(b, path);
      const other = await openPage(b, path);
      // Signed over another challenge's text: a valid signature, but not over this challenge's digest.
      const reply = await submit(b, path, { csrf, challenge, card: aliceCard, signature: signChallenge(aliceCard, other.challenge) });
      expectJpkiRefusal(reply, 401, "signature_mismatch", /^The signature does not match this challenge and certificate\./);
      expect(await session(b)).toMatchObject({ acr: "low", amr: ["pwd"] });
      expect((await providerVerifications())[0]).toMatchObject({ result: "signature_mismatch" });
      expect((await server.domain.oidc.jpki.linksOf(alice.row.id))[0]).toMatchObject({ status: "good" });
    });

    it("malformed fields are refused with their own errors", async () => {
      const { b, path } = await atStepUp(alice);
      const { csrf, challenge } = await openPage(b, path);
      expectJpkiRefusal(await b.post(path, { csrf, method: "jpki", challenge, certificate: "not a certificate!", signature: "AAAA" }), 400, "certificate_invalid", /not PEM or base64/);
      expectJpkiRefusal(await b.post(path, { csrf, method: "jpki", challenge, certificate: "AAAA", signature: "AAAA" }), 400, "certificate_invalid", /^What was pasted is not a certificate\./);
      expectJpkiRefusal(await b.post(path, { csrf, method: "jpki", challenge: "x", certificate: aliceCard.certificatePem, signature: "" }), 400, "signature_invalid", /signature is missing/);
      expect(await session(b)).toMatchObject({ acr: "low", amr: ["pwd"] });
    });

    it("signing in with the card, without a password, earns very_high", async () => {
      const b = new Browser(server.url);
      const login = expectPage(await b.get(authorizeUrl(params({ acr_values: "very_high" }))), "login");
      const loginPage = await b.get(login);
      expect(loginPage.body).toContain('id="jpki-sign-in"');
      const path = login.replace("/auth/login?", "/auth/login/jpki?");
      const { csrf, challenge } = await openPage(b, path);
      const code = expectCodeRedirect(await pastConsent(b, await submit(b, path, { csrf, challenge, card: aliceCard })), { redirectUri, issuer: issuer(), state: "s1" });
      expect((await redeem(code)).idToken).toMatchObject({ sub: alice.row.id, acr: "very_high", amr: ["jpki_sig", "hwk", "sc"], jpki_verified: true });
    });

    it("signing in with a card linked to nobody: the page says so truly, in the page's language; only a good signature learns it", async () => {
      const stray = await mockCard(server, accountId);
      for (const [uiLocales, words] of [
        ["en", /^This certificate is not linked to any account yet\. Sign in with your username and password, then link it/],
        ["ja", /^この電子証明書は、まだどのアカウントにも登録されていません。ユーザー名とパスワードでログインしてから/],
      ] as const) {
        const b = new Browser(server.url);
        const login = expectPage(await b.get(authorizeUrl(params({ ui_locales: uiLocales }))), "login");
        const path = login.replace("/auth/login?", "/auth/login/jpki?");
        const page = await openPage(b, path);
        const refused = await submit(b, path, { csrf: page.csrf, challenge: page.challenge, card: stray });
        expectJpkiRefusal(refused, 403, "certificate_not_linked", words);
        expect(refused.body).not.toMatch(/your account|あなたのアカウント/);
        expect(await session(b)).toBeUndefined();
        // Someone holding only the certificate (not the card's key) learns nothing about links.
        const again = await openPage(b, path);
        const forged = await submit(b, path, { csrf: again.csrf, challenge: again.challenge, card: stray, signature: signChallenge(stray, again.challenge, "other text") });
        expect(forged.body).toContain('data-error="signature_mismatch"');
      }
      expect(await server.domain.oidc.jpki.linksOf(alice.row.id)).toHaveLength(1);
    });

    it("linking on the account page: a new card is linked after its signature; a card of another user is not", async () => {
      const carol = await createUser(server);
      const b = new Browser(server.url);
      expect((await b.get("/account/jpki")).status).toBe(401);
      expectCodeRedirect(await pastConsent(b, await signIn(b, await b.get(authorizeUrl(params())), carol.login, carol.password)), { redirectUri, issuer: issuer(), state: "s1" });
      const carolCard = await mockCard(server, accountId, "jpki_card_user_authentication");

      const taken = await openPage(b, "/account/jpki");
      expectJpkiRefusal(await submit(b, "/account/jpki", { csrf: taken.csrf, challenge: taken.challenge, card: bobCard }), 409, "certificate_linked_elsewhere", /already linked to another account/);
      expect(await server.domain.oidc.jpki.linksOf(carol.row.id)).toEqual([]);

      const page = await openPage(b, "/account/jpki");
      const linked = await submit(b, "/account/jpki", { csrf: page.csrf, challenge: page.challenge, card: carolCard });
      expect(linked.status, linked.body).toBe(200);
      expect(linked.body).toContain("The certificate is linked to your account.");
      expect(linked.body).toContain("User authentication certificate (card)");
      expect(await server.domain.oidc.jpki.linksOf(carol.row.id)).toMatchObject([{ type: "jpki_card_user_authentication", status: "good", fingerprintSha256: carolCard.fingerprint }]);
      // A user authentication certificate earns high, not very_high: very_high stays out of reach, and a page says what would reach it.
      expect(await server.domain.oidc.jpki.methodsOf(carol.row.id)).toEqual(["jpki_auth"]);
      const unreachable = await b.get(expectPage(await b.get(authorizeUrl(params({ acr_values: "very_high" }))), "unreachable"));
      expect(unreachable.body).toContain('data-reason="no_certificate"');
    });

    it("two concurrent submits of one challenge: exactly one is linked, the other finds the challenge used", async () => {
      const erin = await createUser(server);
      const b = new Browser(server.url);
      expectCodeRedirect(await pastConsent(b, await signIn(b, await b.get(authorizeUrl(params())), erin.login, erin.password)), { redirectUri, issuer: issuer(), state: "s1" });
      const card = await mockCard(server, accountId);
      const page = await openPage(b, "/account/jpki");
      const replies = await Promise.all([1, 2].map(() => submit(b, "/account/jpki", { csrf: page.csrf, challenge: page.challenge, card })));
      expect(replies.map((r) => r.status).sort()).toEqual([200, 400]);
      expectJpkiRefusal(replies.find((r) => r.status === 400)!, 400, "challenge_invalid", /^The challenge was already used\./);
      expect(await server.domain.oidc.jpki.linksOf(erin.row.id)).toHaveLength(1);
    });

    it("a revoked certificate refuses the step-up and jpki_verified turns false; a page says why, and Return gives the app the error", async () => {
      const dave = await createUser(server);
      const card = await mockCard(server, accountId);
      await server.domain.oidc.jpki.linkByOperator(dave.row.id, derOf(card));
      const { b, path } = await atStepUp(dave);
      const first = await openPage(b, path);
      const code = expectCodeRedirect(await pastConsent(b, await submit(b, path, { csrf: first.csrf, challenge: first.challenge, card })), { redirectUri, issuer: issuer(), state: "s1" });
      const { accessToken } = await redeem(code);
      expect((await getUserinfo(server, accessToken)).json.jpki_verified).toBe(true);

      await mockOf(server.domain).setStatus(accountId, card.certificateId!, { status: "revoked", revokedReason: 1 });
      const again = await atStepUp(dave, b);
      const page = await openPage(b, again.path);
      const refused = await submit(b, again.path, { csrf: page.csrf, challenge: page.challenge, card });
      // The card was the only way to very_high: not the form again (it cannot succeed), but a page that says why.
      const unreachablePath = expectPage(refused, "unreachable");
      expect(await session(b)).toMatchObject({ acr: "very_high" });
      expect((await server.domain.oidc.jpki.linksOf(dave.row.id))[0]).toMatchObject({ status: "revoked" });
      expect((await getUserinfo(server, accessToken)).json.jpki_verified).toBe(false);
      const shown = await b.get(unreachablePath);
      expect(shown.status, shown.body).toBe(200);
      expect(shown.body).toContain('data-reason="signature_revoked"');
      expect(shown.body).toMatch(/signature certificate on your My Number card .* has been revoked\. This happens when your name or address changes/);
      expect(shown.body).toContain('href="/account/jpki?ui_locales=en"');
      expect(shown.body).not.toMatch(/<textarea|name="password"|name="signature"/);
      expect(shown.body.match(/<form /g)).toHaveLength(1);

      // Return to the app: the client gets the decision flow's error, through the registered redirect_uri.
      const back = await b.post(unreachablePath, { csrf: csrfOf(shown.body), return: "yes" });
      expectErrorRedirect(back, { redirectUri, error: "unmet_authentication_requirements", issuer: issuer(), state: "s1" });
      expect((await b.get(unreachablePath)).status).toBe(400);

      // A new request, signed in already, in Japanese: the same page, not a bounce.
      const ja = await b.get(authorizeUrl(params({ acr_values: "very_high", max_age: "0", ui_locales: "ja", state: "s2" })));
      const jaPage = await b.get(expectPage(ja, "unreachable"));
      expect(jaPage.body).toContain('<html lang="ja">');
      expect(jaPage.body).toContain("マイナンバーカードの署名用電子証明書が失効しています。氏名や住所が変わったときや、カードを更新したときに失効します。");
      expect(jaPage.body).toContain(">アプリに戻る</button>");

      // A new card, linked: "try again" leads on to the step-up page, which the new card passes.
      const renewed = await mockCard(server, accountId);
      await server.domain.oidc.jpki.linkByOperator(dave.row.id, derOf(renewed));
      const stepUp = expectPage(await b.get(expectPage(ja, "unreachable")), "reauth");
      const fresh = await openPage(b, stepUp);
      expectCodeRedirect(await submit(b, stepUp, { csrf: fresh.csrf, challenge: fresh.challenge, card: renewed }), { redirectUri, issuer: issuer(), state: "s2" });
    });

    it("a refreshed ID token says jpki_verified as the links are at the refresh: true with a good one, false once it is not", async () => {
      await registerClient(server, {
        client_id: "jpki-refresh-app",
        client_secret: secret,
        redirect_uris: [redirectUri],
        scope: "openid offline_access",
        grant_types: ["authorization_code", "refresh_token"],
      });
      const frank = await createUser(server);
      const card = await mockCard(server, accountId);
      await server.domain.oidc.jpki.linkByOperator(frank.row.id, derOf(card));
      const { verifier, challenge } = pkce();
      const code = await obtainCode(server, new Browser(server.url), frank, { clientId: "jpki-refresh-app", redirectUri, scope: "openid offline_access", codeChallenge: challenge });
      const auth = { authorization: basicAuthorization("jpki-refresh-app", secret) };
      const issued = await postToken(server, { grant_type: "authorization_code", code, redirect_uri: redirectUri, code_verifier: verifier }, auth);
      expect(issued.status, JSON.stringify(issued.json)).toBe(200);
      const refresh = async (token: string) => {
        const reply = await postToken(server, { grant_type: "refresh_token", refresh_token: token }, auth);
        expect(reply.status, JSON.stringify(reply.json)).toBe(200);
        return { refreshToken: reply.json!.refresh_token as string, idToken: decodeJwt(reply.json!.id_token as string) };
      };
      const first = await refresh(issued.json!.refresh_token as string);
      expect(first.idToken).toMatchObject({ sub: frank.row.id, jpki_verified: true });
      // The link found revoked since (as a refused step-up records it): the next refresh says so.
      await server.database.db.updateTable("oidc_jpki_links").set({ status: "revoked" }).where("user_id", "=", frank.row.id).execute();
      const second = await refresh(first.refreshToken);
      expect(second.idToken).toMatchObject({ sub: frank.row.id, jpki_verified: false });
      // Found good again, but expired: still false; valid again: true.
      const now = Date.now();
      await server.database.db.updateTable("oidc_jpki_links").set({ status: "good", not_after: now - 1000 }).where("user_id", "=", frank.row.id).execute();
      const third = await refresh(second.refreshToken);
      expect(third.idToken).toMatchObject({ sub: frank.row.id, jpki_verified: false });
      await server.database.db.updateTable("oidc_jpki_links").set({ not_after: now + 3_600_000 }).where("user_id", "=", frank.row.id).execute();
      expect((await refresh(third.refreshToken)).idToken).toMatchObject({ sub: frank.row.id, jpki_verified: true });
    });

    it("the challenge is stored only as a hash", async () => {
      const { b, path } = await atStepUp(alice);
      const { challenge } = await openPage(b, path);
      const record = await findRecord(server, "jpki_challenge", challenge);
      expect(record?.keyHash).toBe(sha256Hex(challenge));
      expect(JSON.stringify(record)).not.toContain(challenge);
    });
  });
}

describe("JPKI sign-in in production mode", () => {
  let database: ScratchDatabase;
  let server: TestServer;

  beforeAll(async () => {
    database = await (await databaseTargets())[0]!.create();
    server = await startTestServer(database.url, { mode: "production" });
  });

  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  it("holds no mock cards and serves no mock card script: no key ever reaches a page", async () => {
    expect(server.domain.extensions).toEqual([]);
    const script = await fetch(`${server.url}/assets/mock-card.js`);
    expect(script.status).toBe(404);
    expect(script.headers.get("content-security-policy")).toBe("default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
  });
});
