import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerSignRequest } from "../../src/cli/card-sign.ts";
import { sha256Hex } from "../../src/domain/oidc/flow/secrets.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { derOf, mockCard, type TestCard } from "../support/jpki.ts";
import {
  authorizeUrl,
  basicAuthorization,
  Browser,
  createUser,
  csrfOf,
  expectCodeRedirect,
  expectPage,
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
 * Signing with a phone through real requests on each database: the page
 * makes a signing request, the reference signer (the code behind `shomei
 * card sign`) answers it over the app protocol, and the continue button
 * takes the answer once. Each refusal shows its own words on the page; the
 * 基本4情報 consent comes before any signature-certificate request and is
 * kept with the session.
 */
const redirectUri = "https://phone-app.example/cb";
const secret = "phone-app-secret-0123456789";

/** What a phone section shows: the request's URL (the QR code's content), the binding code, the continue form. */
interface Shown {
  requestUrl: string;
  requestId: string;
  bindingCode: string;
  csrf: string;
  body: string;
}

function shownOf(page: Reply): Shown {
  const requestUrl = /id="sign-request-qr" data-content="([^"]+)"/.exec(page.body)?.[1];
  expect(requestUrl, page.body).toBeDefined();
  return {
    requestUrl: requestUrl!,
    requestId: /name="sign_request" value="([A-Za-z0-9_-]{43})"/.exec(page.body)![1]!,
    bindingCode: /id="binding-code"[^>]*>(\d{6})</.exec(page.body)![1]!,
    csrf: csrfOf(page.body),
    body: page.body,
  };
}

/** Asserts the page's refusal of a phone answer: its code and its words. */
function expectRefusal(reply: Reply, code: string, words: RegExp): void {
  expect(reply.location, reply.body).toBeUndefined();
  const match = /data-error="([a-z_]+)"><p>(.*?)<\/p>/.exec(reply.body);
  expect(match, reply.body).not.toBeNull();
  expect(match![1]).toBe(code);
  expect(match![2]).toMatch(words);
}

for (const target of await databaseTargets()) {
  describe.skipIf(target.unavailable !== undefined)(`JPKI signing requests answered by a phone on ${targetTitle(target)}`, () => {
    let database: ScratchDatabase;
    let dataDir: string;
    let server: TestServer;
    let accountId: string;
    let alice: TestUser;
    let aliceCard: TestCard;
    let aliceAuthCard: TestCard;
    let otherCard: TestCard;
    const issuer = () => server.domain.oidc.issuer;

    beforeAll(async () => {
      database = await target.create();
      dataDir = mkdtempSync(path.join(tmpdir(), "shomei-phone-"));
      server = await startTestServer(database.url, { dataDir });
      await registerClient(server, { client_id: "phone-app", client_secret: secret, redirect_uris: [redirectUri], scope: "openid profile" });
      accountId = (await server.domain.accounts.create("phone-cards", "active")).id;
      alice = await createUser(server);
      aliceCard = await mockCard(server, accountId);
      aliceAuthCard = await mockCard(server, accountId, "jpki_card_user_authentication");
      otherCard = await mockCard(server, accountId);
      await server.domain.oidc.jpki.linkByOperator(alice.row.id, derOf(aliceCard));
      await server.domain.oidc.jpki.linkByOperator(alice.row.id, derOf(aliceAuthCard));
    });

    afterAll(async () => {
      await server?.close();
      await database?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    const params = (extra: Record<string, string> = {}) => ({ client_id: "phone-app", redirect_uri: redirectUri, response_type: "code", scope: "openid", state: "s1", ...extra });

    /** A card-sign-in page of a new interaction in browser `b`: its path and what it shows. */
    async function atCardSignIn(b = new Browser(server.url), extra: Record<string, string> = {}): Promise<{ b: Browser; path: string; shown: Shown }> {
      const login = expectPage(await b.get(authorizeUrl(params(extra))), "login");
      const path = login.replace("/auth/login?", "/auth/login/jpki?");
      const page = await b.get(path);
      expect(page.status, page.body).toBe(200);
      return { b, path, shown: shownOf(page) };
    }

    const answer = (shown: Shown, card: TestCard, extra: { key?: string; code?: string; stop?: "pin_locked" | "cancelled" } = {}) =>
      answerSignRequest({ requestUrl: shown.requestUrl, keyPem: extra.key ?? card.privateKeyPem, certificatePem: card.certificatePem, bindingCode: extra.code ?? shown.bindingCode, stop: extra.stop });

    const continueWith = (b: Browser, path: string, shown: Shown) => b.post(path, { csrf: shown.csrf, sign_request: shown.requestId });

    async function pastConsent(b: Browser, reply: Reply): Promise<Reply> {
      if (!reply.location?.startsWith("/auth/consent?")) return reply;
      const page = await b.get(reply.location);
      return b.post(reply.location, { csrf: csrfOf(page.body), decision: "allow" });
    }

    async function redeem(code: string) {
      const reply = await postToken(server, { grant_type: "authorization_code", code, redirect_uri: redirectUri }, { authorization: basicAuthorization("phone-app", secret) });
      expect(reply.status, JSON.stringify(reply.json)).toBe(200);
      return decodeJwt(reply.json!.id_token as string);
    }

    const row = (shown: Shown) =>
      server.database.db.selectFrom("oidc_jpki_sign_requests").selectAll().where("id_hash", "=", sha256Hex(shown.requestId)).executeTakeFirstOrThrow();

    it("sign-in: the page's request is read and answered by the reference signer, and continue signs in", async () => {
      const { b, path, shown } = await atCardSignIn();
      expect(shown.requestUrl).toBe(`${issuer()}/api/jpki/v1/sign-requests/${shown.requestId}`);
      expect(shown.body).toContain(`href="shomei-jpki://sign?request=${encodeURIComponent(shown.requestUrl)}"`);
      // Nothing the app can read is in the database as it was shown: the id by hash, the code sealed.
      const stored = await row(shown);
      expect(JSON.stringify(stored)).not.toContain(shown.requestId);
      expect(stored.binding_code_sealed).not.toContain(shown.bindingCode);

      const read = (await (await fetch(shown.requestUrl)).json()) as Record<string, unknown>;
      expect(read).toMatchObject({ request: shown.requestUrl, purpose: "sign_in", client_name: expect.any(String), certificate: "user_authentication", digest_algorithm: "sha256", binding_code_length: 6 });
      expect(read.text).toMatch(/^shomei JPKI sign-in [A-Za-z0-9_-]{43}$/);

      expect((await b.get(`/auth/jpki/sign-requests/${shown.requestId}`, { accept: "application/json" })).body).toBe('{"state":"pending"}');
      expect((await answer(shown, aliceCard)).state).toBe("answered");
      expect((await b.get(`/auth/jpki/sign-requests/${shown.requestId}`)).body).toBe('{"state":"answered"}');
      // The certificate the app sent is sealed at rest.
      expect((await row(shown)).answer_sealed).not.toContain(new (await import("node:crypto")).X509Certificate(aliceCard.certificatePem).raw.toString("base64").slice(0, 40));

      const code = expectCodeRedirect(await pastConsent(b, await continueWith(b, path, shown)), { redirectUri, issuer: issuer(), state: "s1" });
      expect(await redeem(code)).toMatchObject({ sub: alice.row.id, amr: ["jpki_sig", "hwk", "sc"] });
      // Taken: the answer is gone from the row.
      expect(await row(shown)).toMatchObject({ state: "used", answer_sealed: null });
      // The id is the app's capability: request lines name the route, never the path that carries it.
      expect(server.logs.some((line) => line.route === "/api/jpki/v1/sign-requests/:id" && line.path === "/api/jpki/v1/sign-requests/:id")).toBe(true);
      expect(server.rawLogs()).not.toContain(shown.requestId);
    });

    it("linking on the account page by phone; a certificate in its renewal window is flagged", async () => {
      const { b, path, shown } = await atCardSignIn();
      await answer(shown, aliceCard);
      expectCodeRedirect(await pastConsent(b, await continueWith(b, path, shown)), { redirectUri, issuer: issuer(), state: "s1" });
      const newCard = await mockCard(server, accountId, "jpki_card_user_authentication");
      const accountPage = await b.get("/account/jpki?ui_locales=en");
      const linking = shownOf(accountPage);
      expect(((await (await fetch(linking.requestUrl)).json()) as { purpose: string }).purpose).toBe("link");
      await answer(linking, newCard);
      const linked = await continueWith(b, "/account/jpki?ui_locales=en", linking);
      expect(linked.body).toContain('data-notice="linked"');
      expect((await server.domain.oidc.jpki.linksOf(alice.row.id)).map((l) => l.fingerprintSha256)).toContain(newCard.fingerprint);
      // Within three months of its end: renewal has opened, and the page says so.
      await server.database.db.updateTable("oidc_jpki_links").set({ not_after: Date.now() + 30 * 24 * 3600 * 1000 }).where("fingerprint_sha256", "=", newCard.fingerprint).execute();
      const flagged = await b.get("/account/jpki?ui_locales=en");
      expect(flagged.body).toMatch(/<tr data-state="renewSoon">[\s\S]*?Valid, renew soon[\s\S]*?Renew it at your municipality/);
      await server.domain.oidc.jpki.unlink(alice.row.id, (await server.domain.oidc.jpki.linksOf(alice.row.id)).find((l) => l.fingerprintSha256 === newCard.fingerprint)!.certificateId);

      // A signature certificate: the 基本4情報 notice first, then a request for that certificate.
      expect(accountPage.body).toContain('href="/account/jpki?ui_locales=en&amp;certificate=signature"');
      const signaturePage = await b.get("/account/jpki?ui_locales=en&certificate=signature");
      expect(signaturePage.body).toContain('id="basic-info-consent"');
      // No application is signed in to here: the notice says the information goes to none, and names none.
      expect(signaturePage.body).toContain("It does not pass them to the applications you sign in to.");
      expect(signaturePage.body).not.toContain('class="client"');
      expect(signaturePage.body).not.toContain('id="sign-request-qr"');
      const agreed = shownOf(await b.post("/account/jpki?ui_locales=en&certificate=signature", { csrf: csrfOf(signaturePage.body), basic_info_consent: "agree" }));
      expect(((await (await fetch(agreed.requestUrl)).json()) as { certificate: string }).certificate).toBe("signature");
      const signatureCard = await mockCard(server, accountId);
      await answer(agreed, signatureCard);
      expect((await continueWith(b, "/account/jpki?ui_locales=en&certificate=signature", agreed)).body).toContain('data-notice="linked"');
      const signatureLink = (await server.domain.oidc.jpki.linksOf(alice.row.id)).find((l) => l.fingerprintSha256 === signatureCard.fingerprint)!;
      expect(signatureLink.type).toBe("jpki_card_digital_signature");
      await server.domain.oidc.jpki.unlink(alice.row.id, signatureLink.certificateId);
    });

    it("refused: a second answer to the same request, and a second continue", async () => {
      const { b, path, shown } = await atCardSignIn();
      // A second tab of the same browser, before anyone is signed in.
      const secondTab = await atCardSignIn(b);
      await answer(shown, aliceCard);
      await expect(answer(shown, aliceCard)).rejects.toMatchObject({ code: "sign_request_used" });
      expect((await pastConsent(b, await continueWith(b, path, shown))).location).toMatch(/^https:\/\/phone-app\.example\/cb\?/);
      expectRefusal(await continueWith(b, secondTab.path, { ...secondTab.shown, requestId: shown.requestId }), "sign_request_invalid", /already answered/);
    });

    it("concurrent answers: exactly one is taken", async () => {
      const { shown } = await atCardSignIn();
      const results = await Promise.allSettled(Array.from({ length: 6 }, () => answer(shown, aliceCard)));
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      for (const r of results.filter((r) => r.status === "rejected")) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: "sign_request_used" });
    });

    it("refused: an expired request, for the app and on the page (in Japanese too)", async () => {
      for (const [locale, words] of [["en", /expired before the app answered/], ["ja", /有効期間が過ぎました/]] as const) {
        const { b, path, shown } = await atCardSignIn(undefined, { ui_locales: locale });
        await server.database.db.updateTable("oidc_jpki_sign_requests").set({ expires_at: Date.now() - 1000 }).where("id_hash", "=", sha256Hex(shown.requestId)).execute();
        const read = await fetch(shown.requestUrl);
        expect(read.status).toBe(410);
        expect(await read.json()).toMatchObject({ error: "sign_request_expired" });
        await expect(answer(shown, aliceCard)).rejects.toMatchObject({ code: "sign_request_expired" });
        expect((await b.get(`/auth/jpki/sign-requests/${shown.requestId}`)).body).toBe('{"state":"expired"}');
        const refused = await continueWith(b, path, shown);
        expectRefusal(refused, "sign_request_invalid", words);
        // A new request is shown to start again.
        expect(shownOf(refused).requestId).not.toBe(shown.requestId);
      }
    });

    it("refused: a wrong binding code ends the request", async () => {
      const { b, path, shown } = await atCardSignIn();
      const wrong = shown.bindingCode === "000000" ? "000001" : "000000";
      await expect(answer(shown, aliceCard, { code: wrong })).rejects.toMatchObject({ code: "binding_code_mismatch" });
      // The right code after a wrong one is too late: guessing gets one try.
      await expect(answer(shown, aliceCard)).rejects.toMatchObject({ code: "sign_request_used" });
      expectRefusal(await continueWith(b, path, shown), "binding_code_mismatch", /binding code typed into the app did not match/);
      expect(b.jar.get(sessionCookie)).toBeUndefined();
    });

    it("refused: a signature by another key, with the page's own check", async () => {
      const { b, path, shown } = await atCardSignIn();
      await answer(shown, aliceCard, { key: otherCard.privateKeyPem });
      expectRefusal(await continueWith(b, path, shown), "signature_mismatch", /does not match/);
      expect(b.jar.get(sessionCookie)).toBeUndefined();
    });

    it("refused: a revoked certificate says it was revoked, not that the PIN was wrong", async () => {
      const bob = await createUser(server);
      const card = await mockCard(server, accountId);
      await server.domain.oidc.jpki.linkByOperator(bob.row.id, derOf(card));
      await mockOf(server.domain).setStatus(accountId, card.certificateId!, { status: "revoked", revokedReason: 1 });
      const { b, path, shown } = await atCardSignIn();
      await answer(shown, card);
      const refused = await continueWith(b, path, shown);
      expect(refused.status).toBe(403);
      expectRefusal(refused, "certificate_revoked", /has been revoked.*Your PIN was not the problem/);
      expect((await server.domain.oidc.jpki.linksOf(bob.row.id))[0]).toMatchObject({ status: "revoked" });
    });

    it("refused: a request created by another browser", async () => {
      const first = await atCardSignIn();
      await answer(first.shown, aliceCard);
      const other = await atCardSignIn(new Browser(server.url));
      expect((await other.b.get(`/auth/jpki/sign-requests/${first.shown.requestId}`)).status).toBe(403);
      expectRefusal(await continueWith(other.b, other.path, { ...other.shown, requestId: first.shown.requestId }), "sign_request_invalid", /started in another browser/);
      // Still there for the browser that asked.
      expect((await pastConsent(first.b, await continueWith(first.b, first.path, first.shown))).location).toMatch(/^https:\/\/phone-app\.example\/cb\?/);
    });

    it("continue before the app answers shows the same request again; the app's stops are told in words", async () => {
      const { b, path, shown } = await atCardSignIn();
      const early = await continueWith(b, path, shown);
      expectRefusal(early, "sign_request_pending", /has not answered yet/);
      expect(shownOf(early)).toMatchObject({ requestId: shown.requestId, bindingCode: shown.bindingCode });
      // A wrong PIN: the app reports the attempts left, the request stays open, the page can warn before the last one.
      expect((await answerSignRequest({ requestUrl: shown.requestUrl, keyPem: "", certificatePem: "", bindingCode: shown.bindingCode, pinAttemptsRemaining: 1 })).state).toBe("pending");
      expect((await b.get(`/auth/jpki/sign-requests/${shown.requestId}`)).body).toBe('{"state":"pending","pin_attempts_remaining":1}');
      expect((await answer(shown, aliceCard, { stop: "pin_locked" })).state).toBe("refused");
      expectRefusal(await continueWith(b, path, shown), "signing_stopped_by_app", /PIN of this certificate is locked.*municipality/);
    });

    it("the app protocol's bad input: clear 4xx in JSON, the request left open", async () => {
      const { shown } = await atCardSignIn();
      const post = (body: string, type = "application/json") => fetch(shown.requestUrl, { method: "POST", headers: { "content-type": type }, body });
      for (const [body, type, status, words] of [
        ["{", "application/json", 400, /not valid JSON/],
        ["[]", "application/json", 400, /JSON object/],
        ['{"certificate":"x","signature":"y"}', "application/json", 400, /binding_code is required/],
        [JSON.stringify({ binding_code: shown.bindingCode, certificate: 1, signature: "y" }), "application/json", 400, /certificate must be a string/],
        [JSON.stringify({ binding_code: shown.bindingCode, stopped: "tired" }), "application/json", 400, /stopped must be one of/],
        [JSON.stringify({ binding_code: shown.bindingCode, pin_attempts_remaining: -1 }), "application/json", 400, /whole number from 0 to 99/],
        [JSON.stringify({ binding_code: shown.bindingCode, pin_attempts_remaining: 2, stopped: "cancelled" }), "application/json", 400, /report of its own/],
        [JSON.stringify({ binding_code: shown.bindingCode }), "text/plain", 415, /application\/json/],
        [JSON.stringify({ binding_code: shown.bindingCode, certificate: "not base64!", signature: "AAAA" }), "application/json", 400, /certificate is missing or is not PEM/],
      ] as const) {
        const reply = await post(body, type);
        expect(reply.status, body).toBe(status);
        expect(((await reply.json()) as { error_description: string }).error_description).toMatch(words);
      }
      expect((await fetch(`${issuer()}/api/jpki/v1/sign-requests/${"A".repeat(43)}`)).status).toBe(404);
      expect((await fetch(`${issuer()}/api/jpki/v1/sign-requests/short`)).status).toBe(404);
      expect((await row(shown)).state).toBe("pending");
      expect((await answer(shown, aliceCard)).state).toBe("answered");
    });

    describe("step-up to very_high (the signature certificate)", () => {
      async function atStepUp(): Promise<{ b: Browser; path: string; body: string }> {
        const b = new Browser(server.url);
        let reply = await b.get(authorizeUrl(params({ acr_values: "very_high", max_age: "0" })));
        reply = await signIn(b, reply, alice.login, alice.password);
        const path = expectPage(reply, "reauth");
        const page = await b.get(path);
        expect(page.status, page.body).toBe(200);
        return { b, path, body: page.body };
      }
      const requestCount = async () => (await server.database.db.selectFrom("oidc_jpki_sign_requests").select("id_hash").execute()).length;

      it("the 基本4情報 notice comes first and no request exists before the consent; the consent is kept with the session", async () => {
        const before = await requestCount();
        const { b, path, body } = await atStepUp();
        expect(body).toContain('id="basic-info-consent"');
        expect(body).toMatch(/name, address, date of birth and gender/);
        expect(body).toMatch(/It does not pass them to <strong class="client">[^<]+<\/strong>, which learns only/);
        expect(body).not.toContain('id="sign-request-qr"');
        expect(await requestCount()).toBe(before);
        const agreed = await b.post(path, { csrf: csrfOf(body), basic_info_consent: "agree" });
        const shown = shownOf(agreed);
        expect(await requestCount()).toBe(before + 1);
        expect(((await (await fetch(shown.requestUrl)).json()) as { certificate: string }).certificate).toBe("signature");
        await answer(shown, aliceCard);
        const code = expectCodeRedirect(await pastConsent(b, await continueWith(b, path, shown)), { redirectUri, issuer: issuer(), state: "s1" });
        expect(await redeem(code)).toMatchObject({ acr: "very_high" });
        const session = await server.database.db.selectFrom("oidc_sessions").select(["basic_info_consent_at", "acr"]).where("id_hash", "=", sha256Hex(b.jar.get(sessionCookie)!)).executeTakeFirstOrThrow();
        expect(session.acr).toBe("very_high");
        expect(Number(session.basic_info_consent_at)).toBeGreaterThan(0);
      });

      it("refused: a certificate of the wrong kind (user authentication where the signature one is needed)", async () => {
        const { b, path, body } = await atStepUp();
        const shown = shownOf(await b.post(path, { csrf: csrfOf(body), basic_info_consent: "agree" }));
        await answer(shown, aliceAuthCard);
        const refused = await continueWith(b, path, shown);
        expectRefusal(refused, "certificate_wrong_type", /needs your signature certificate/);
        // The next request needs the consent again.
        expect(refused.body).toContain('id="basic-info-consent"');
        const session = await server.database.db.selectFrom("oidc_sessions").select(["basic_info_consent_at", "acr"]).where("id_hash", "=", sha256Hex(b.jar.get(sessionCookie)!)).executeTakeFirstOrThrow();
        expect(session).toMatchObject({ acr: "low", basic_info_consent_at: null });
      });
    });

    it("a request without the consent cannot be made for a signature certificate at all", async () => {
      await expect(
        server.domain.oidc.signRequests.create({ purpose: "step_up", binding: { interactionId: "x" }, browserId: "b", certificateKind: "signature", clientName: "c" }),
      ).rejects.toThrow(TypeError);
    });
  });
}
