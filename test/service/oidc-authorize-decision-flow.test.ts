import { describe, expect, it, vi } from "vitest";

import { OidcRepository } from "../../src/storage/oidc-repository.ts";

import { authorizeUrl, browserCookie, createUser, csrfOf, expectPage, expectPageHeaders, findCode, pkce, sessionCookie, signIn, submitPage } from "../support/oidc.ts";

import { redirectUri, queryRedirectUri, challenge, live, params, browser, expectError, expectCode, signedInWithGrant, authorizeServer, wrongOtp } from "../support/oidc-authorize-server.ts";

/**
 * The authorization endpoint's decision flow (spec 3.1) through real HTTP requests on SQLite: the
 * login, re-authentication and consent pages, and the authorization code stored for what it stands for.
 */

authorizeServer();

describe("decision flow (spec 3.1) through real requests", () => {
  it("row 1: no session and prompt=none → login_required, no login page", async () => {
    expectError(await browser().get(authorizeUrl(params({ prompt: "none" }))), "login_required");
  });

  it("row 2: no session → 303 to /auth/login; login → consent page; allow → code stored with everything it stands for", async () => {
    const s = live();
    const user = await createUser(s);
    const b = browser();
    const details = [{ type: "account_information", actions: ["list_accounts"], locations: ["https://bank.example/accounts"] }];
    const start = await b.get(
      authorizeUrl(params({ scope: "openid profile", nonce: "n-0S6_WzA2Mj", authorization_details: JSON.stringify(details) })),
    );
    const loginPath = expectPage(start, "login");
    expect(b.jar.get(browserCookie)).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const loginPage = await b.get(loginPath);
    expect(loginPage.status).toBe(200);
    expect(loginPage.headers.get("content-type")).toMatch(/^text\/html/);
    expectPageHeaders(loginPage);
    expect(loginPage.body).toContain("Web App");
    expect(loginPage.body).toContain('name="login"');
    expect(loginPage.body).toContain('name="password"');

    const before = Date.now();
    const afterLogin = await b.post(loginPath, { csrf: csrfOf(loginPage.body), login: user.login, password: user.password });
    const after = Date.now();
    const consentPath = expectPage(afterLogin, "consent");

    // The session cookie: HttpOnly, SameSite=Lax, for the whole site.
    expect(b.jar.get(sessionCookie)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const attributes = b.jar.attributesOf(sessionCookie)!;
    expect(attributes.has("httponly")).toBe(true);
    expect(attributes.get("samesite")).toBe("Lax");
    expect(attributes.get("path")).toBe("/");
    const browserAttributes = b.jar.attributesOf(browserCookie)!;
    expect(browserAttributes.has("httponly")).toBe(true);
    expect(browserAttributes.get("samesite")).toBe("Lax");

    const consentPage = await b.get(consentPath);
    expect(consentPage.status).toBe(200);
    expectPageHeaders(consentPage);
    expect(consentPage.body).toContain("Web App");
    expect(consentPage.body).toContain(user.login);
    expect(consentPage.body).toContain("Your name and profile");
    expect(consentPage.body).toContain("account_information");
    expect(consentPage.body).toContain("List your accounts");
    expect(consentPage.body).toContain('value="allow"');
    expect(consentPage.body).toContain('value="deny"');

    const done = await b.post(consentPath, { csrf: csrfOf(consentPage.body), decision: "allow" });
    const code = expectCode(done);

    const record = await findCode(s, code);
    expect(record).toBeDefined();
    expect(record!.owner).toBe("web-app");
    expect(record!.consumedAt).toBeNull();
    expect(record!.expiresAt - record!.createdAt).toBe(60_000);
    expect(record!.payload).toEqual({
      clientId: "web-app",
      redirectUri,
      codeChallenge: challenge,
      nonce: "n-0S6_WzA2Mj",
      scopes: ["openid", "profile"],
      authorizationDetails: details,
      grantId: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      userId: user.row.id,
      authTime: expect.any(Number),
      acr: "low",
      amr: ["pwd"],
      sid: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    expect(record!.payload.authTime).toBeGreaterThanOrEqual(before);
    expect(record!.payload.authTime).toBeLessThanOrEqual(after);

    const grant = await new OidcRepository(s.database).findGrant(record!.payload.grantId);
    expect(grant).toMatchObject({ userId: user.row.id, clientId: "web-app", scopes: ["openid", "profile"], authorizationDetails: details, revokedAt: null });

    // The interaction is finished: its pages are gone.
    const again = await b.get(consentPath);
    expect(again.status).toBe(400);
    expect(again.location).toBeUndefined();
  });

  it("a code issued for a PKCE-only request (no state) carries no state and stores the challenge", async () => {
    const s = live();
    const user = await createUser(s);
    const b = browser();
    const { challenge: own } = pkce();
    const afterLogin = await signIn(b, await b.get(authorizeUrl(params({ state: undefined, code_challenge: own }))), user.login, user.password);
    const code = expectCode(await submitPage(b, afterLogin, "consent", { decision: "allow" }), { state: undefined });
    const record = await findCode(s, code);
    expect(record!.payload).toMatchObject({ codeChallenge: own, nonce: null, scopes: ["openid"], authorizationDetails: [] });
  });

  it("a code for a state-only request stores no challenge; a registered redirect_uri with a query keeps it", async () => {
    const s = live();
    const user = await createUser(s);
    const b = browser();
    const start = await b.get(authorizeUrl(params({ redirect_uri: queryRedirectUri, code_challenge: undefined, code_challenge_method: undefined })));
    const afterLogin = await signIn(b, start, user.login, user.password);
    const code = expectCode(await submitPage(b, afterLogin, "consent", { decision: "allow" }), { uri: queryRedirectUri });
    expect((await findCode(s, code))!.payload).toMatchObject({ codeChallenge: null, redirectUri: queryRedirectUri });
  });

  it("row 10: consent denied → access_denied, nothing granted", async () => {
    const user = await createUser(live());
    const b = browser();
    const afterLogin = await signIn(b, await b.get(authorizeUrl(params())), user.login, user.password);
    expectError(await submitPage(b, afterLogin, "consent", { decision: "deny" }), "access_denied");
    expect(await new OidcRepository(live().database).findLatestGrant(user.row.id, "web-app")).toBeUndefined();
    // Nothing was granted, so the next request asks again.
    expectPage(await b.get(authorizeUrl(params())), "consent");
  });

  it("row 6: a second request for already granted scopes skips consent (also under prompt=none, and for a subset)", async () => {
    const s = live();
    const user = await createUser(s);
    const b = browser();
    const first = await signedInWithGrant(b, user, "openid profile");
    const firstGrant = (await findCode(s, first))!.payload.grantId;

    const second = expectCode(await b.get(authorizeUrl(params({ scope: "openid profile", state: "second" }))), { state: "second" });
    expect(second).not.toBe(first);
    expect((await findCode(s, second))!.payload).toMatchObject({ grantId: firstGrant, userId: user.row.id, scopes: ["openid", "profile"] });

    expectCode(await b.get(authorizeUrl(params({ scope: "openid", prompt: "none" }))));
    expectCode(await b.get(authorizeUrl(params({ scope: "profile openid" }))));
  });

  it("a request answered at once writes no interaction; one that needs a page stores exactly one, ended once completed", async () => {
    const s = live();
    const user = await createUser(s);
    const b = browser();
    await signedInWithGrant(b, user, "openid");
    const interactions = async () => Number((await s.database.db.selectFrom("oidc_interactions").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow()).n);
    const before = await interactions();
    const writes = vi.spyOn(OidcRepository.prototype, "insertInteraction");
    try {
      // A code at once (row 6) and an error at once (row 8): no interaction is written for them.
      expectCode(await b.get(authorizeUrl(params({ scope: "openid", state: "at-once" }))), { state: "at-once" });
      expectError(await b.get(authorizeUrl(params({ scope: "openid profile", prompt: "none" }))), "consent_required");
      expect(writes).not.toHaveBeenCalled();
      expect(await interactions()).toBe(before);
      // The consent page: one interaction, which completing puts out of reach (kept only to say it has ended, until swept).
      const page = await b.get(authorizeUrl(params({ scope: "openid profile", state: "page" })));
      const path = expectPage(page, "consent");
      expect(writes).toHaveBeenCalledTimes(1);
      expect(await interactions()).toBe(before + 1);
      expectCode(await submitPage(b, page, "consent", { decision: "allow" }), { state: "page" });
      expect(await interactions()).toBe(before + 1);
      const id = new URL(path, s.url).searchParams.get("interaction")!;
      expect(await s.domain.oidc.flow.load(id, b.jar.get(browserCookie)).catch((error: unknown) => (error as Error).name)).toBe("InteractionEnded");
    } finally {
      writes.mockRestore();
    }
  });

  it("row 7: prompt=consent shows the consent page again; allowing issues a code", async () => {
    const user = await createUser(live());
    const b = browser();
    await signedInWithGrant(b, user);
    const reply = await b.get(authorizeUrl(params({ prompt: "consent" })));
    expectPage(reply, "consent");
    expectCode(await submitPage(b, reply, "consent", { decision: "allow" }));
  });

  it("row 8: prompt=none with a session when consent is needed → consent_required", async () => {
    const user = await createUser(live());
    const b = browser();
    await signedInWithGrant(b, user, "openid");
    expectError(await b.get(authorizeUrl(params({ scope: "openid email", prompt: "none" }))), "consent_required");
    // Without prompt=none the same request shows the consent page (row 9).
    expectPage(await b.get(authorizeUrl(params({ scope: "openid email" }))), "consent");
  });

  it("row 5: prompt=login with a session → re-authentication page; a wrong password stays on it; the right one completes", async () => {
    const s = live();
    const user = await createUser(s);
    const b = browser();
    const first = await signedInWithGrant(b, user);
    const firstAuthTime = (await findCode(s, first))!.payload.authTime;

    const reply = await b.get(authorizeUrl(params({ prompt: "login" })));
    const reauthPath = expectPage(reply, "reauth");
    const page = await b.get(reauthPath);
    expect(page.status).toBe(200);
    expectPageHeaders(page);
    expect(page.body).toContain("the application asked you to sign in again");
    expect(page.body).toContain('name="password"');
    expect(page.body).not.toContain('name="otp"');

    const wrong = await b.post(reauthPath, { csrf: csrfOf(page.body), password: "not-the-password" });
    expect(wrong.status).toBe(401);
    expect(wrong.location).toBeUndefined();
    expect(wrong.body).toContain("The password is not correct.");

    const done = await b.post(reauthPath, { csrf: csrfOf(page.body), password: user.password });
    const code = expectCode(done);
    const payload = (await findCode(s, code))!.payload;
    expect(payload.amr).toEqual(["pwd"]);
    expect(payload.authTime).toBeGreaterThanOrEqual(firstAuthTime);
  });

  it("prompt=login combined with prompt=none is invalid_request, even with a session", async () => {
    const user = await createUser(live());
    const b = browser();
    await signedInWithGrant(b, user);
    expectError(await b.get(authorizeUrl(params({ prompt: "login none" }))), "invalid_request");
  });

  it("max_age=0 with a session → re-authentication page", async () => {
    const user = await createUser(live());
    const b = browser();
    await signedInWithGrant(b, user);
    const reply = await b.get(authorizeUrl(params({ max_age: "0" })));
    const page = await b.get(expectPage(reply, "reauth"));
    expect(page.body).toContain("your last sign-in is older than the application allows");
    expectCode(await submitPage(b, reply, "reauth", { password: user.password }));
  });

  it("row 3: prompt=none and max_age=0 with a session → interaction_required", async () => {
    const user = await createUser(live());
    const b = browser();
    await signedInWithGrant(b, user);
    expectError(await b.get(authorizeUrl(params({ prompt: "none", max_age: "0" }))), "interaction_required");
  });

  it("row 3 comes before row 4: prompt=none and acr_values=high for a user without TOTP → interaction_required", async () => {
    const user = await createUser(live());
    const b = browser();
    await signedInWithGrant(b, user);
    expectError(await b.get(authorizeUrl(params({ prompt: "none", acr_values: "high" }))), "interaction_required");
  });

  it("row 4: acr_values=high for a user without TOTP → a page says why, then unmet_authentication_requirements (after login, and with a session)", async () => {
    const user = await createUser(live());
    const b = browser();
    const afterLogin = await signIn(b, await b.get(authorizeUrl(params({ acr_values: "high" }))), user.login, user.password);
    // Right after a good password: a page says why (a linked card would do), then Return sends the client the error.
    const unreachable = expectPage(afterLogin, "unreachable");
    const page = await b.get(unreachable);
    expect(page.body).toContain('data-reason="no_certificate"');
    expectError(await b.post(unreachable, { csrf: csrfOf(page.body), return: "yes" }), "unmet_authentication_requirements");
    // The login itself succeeded: the session exists, a later request at that level is told the same, a lower one works.
    expect(b.jar.get(sessionCookie)).toBeDefined();
    expectPage(await b.get(authorizeUrl(params({ acr_values: "high" }))), "unreachable");
    expectPage(await b.get(authorizeUrl(params({ acr_values: "low" }))), "consent");
  });

  it("acr_values=high for a user with TOTP: re-authentication asks for the one-time code; a wrong one stays, the right one completes, the same one twice is refused", async () => {
    const s = live();
    const user = await createUser(s, { totp: true });
    const b = browser();
    const afterLogin = await signIn(b, await b.get(authorizeUrl(params({ acr_values: "high" }))), user.login, user.password);
    const reauthPath = expectPage(afterLogin, "reauth");
    const page = await b.get(reauthPath);
    expect(page.status).toBe(200);
    expectPageHeaders(page);
    expect(page.body).toContain('name="otp"');
    expect(page.body).toContain("level: High");
    expect(page.body).toContain("the application needs a stronger sign-in than your current one");
    const csrf = csrfOf(page.body);

    const wrong = await b.post(reauthPath, { csrf, password: user.password, otp: wrongOtp(user.totpSecret!) });
    expect(wrong.status).toBe(401);
    expect(wrong.location).toBeUndefined();
    expect(wrong.body).toContain("The one-time code is not correct or was already used.");

    const otp = s.domain.oidc.users.currentOtp(user.row)!;
    expect(otp).toMatch(/^\d{6}$/);
    const afterOtp = await b.post(reauthPath, { csrf, password: user.password, otp });
    const done = await submitPage(b, afterOtp, "consent", { decision: "allow" });
    const code = expectCode(done);
    expect((await findCode(s, code))!.payload).toMatchObject({ acr: "high", amr: ["pwd", "otp"], userId: user.row.id });

    // The session is now at "high": the same request completes without asking anything.
    expectCode(await b.get(authorizeUrl(params({ acr_values: "high" }))));

    // Forcing a new authentication, the code already used is refused.
    const again = await b.get(authorizeUrl(params({ acr_values: "high", prompt: "login" })));
    const againPath = expectPage(again, "reauth");
    const againPage = await b.get(againPath);
    const replay = await b.post(againPath, { csrf: csrfOf(againPage.body), password: user.password, otp });
    expect(replay.status).toBe(401);
    expect(replay.location).toBeUndefined();
    expect(replay.body).toContain("The one-time code is not correct or was already used.");
  });

  it("replace with a grant_id of another user → invalid_grant_id after login; an unknown grant_id too; the user's own grant works", async () => {
    const s = live();
    const owner = await createUser(s);
    const ownerCode = await signedInWithGrant(browser(), owner);
    const foreignGrant = (await findCode(s, ownerCode))!.payload.grantId;

    const user = await createUser(s);
    const b = browser();
    const request = params({ grant_management_action: "replace", grant_id: foreignGrant });
    const start = await b.get(authorizeUrl(request));
    expectPage(start, "login");
    expectError(await signIn(b, start, user.login, user.password), "invalid_grant_id");

    expectError(await b.get(authorizeUrl(params({ grant_management_action: "merge", grant_id: "no-such-grant" }))), "invalid_grant_id");

    // Signed in now: the user's own grant, then a replace naming it.
    const ownCode = expectCode(await submitPage(b, await b.get(authorizeUrl(params({ scope: "openid profile" }))), "consent", { decision: "allow" }));
    const ownGrant = (await findCode(s, ownCode))!.payload.grantId;
    const replaced = expectCode(await b.get(authorizeUrl(params({ scope: "openid", grant_management_action: "replace", grant_id: ownGrant }))));
    expect((await findCode(s, replaced))!.payload.grantId).toBe(ownGrant);
    expect((await new OidcRepository(s.database).findGrant(ownGrant))!.scopes).toEqual(["openid"]);
  });

  it("replace without grant_id replaces the user's current grant for the client; merge without grant_id adds to it", async () => {
    const s = live();
    const user = await createUser(s);
    const b = browser();
    const firstCode = await signedInWithGrant(b, user, "openid profile");
    const grantId = (await findCode(s, firstCode))!.payload.grantId;
    const repository = new OidcRepository(s.database);

    // replace, narrower than the grant: covered, so no consent page; same grant, now exactly the request.
    const replaced = expectCode(await b.get(authorizeUrl(params({ scope: "openid", grant_management_action: "replace" }))));
    expect((await findCode(s, replaced))!.payload.grantId).toBe(grantId);
    expect((await repository.findGrant(grantId))!.scopes).toEqual(["openid"]);

    // merge, asking for more: the consent page, then the same grant holds both.
    const mergeStart = await b.get(authorizeUrl(params({ scope: "openid email", grant_management_action: "merge" })));
    const merged = expectCode(await submitPage(b, mergeStart, "consent", { decision: "allow" }));
    expect((await findCode(s, merged))!.payload.grantId).toBe(grantId);
    expect((await repository.findGrant(grantId))!.scopes).toEqual(["openid", "email"]);

    // replace, asking for something else: the consent page says so, then the same grant holds only the request.
    const replaceStart = await b.get(authorizeUrl(params({ scope: "openid profile", grant_management_action: "replace" })));
    expect((await b.get(expectPage(replaceStart, "consent"))).body).toContain("Allowing replaces the access you gave");
    const replacedAgain = expectCode(await submitPage(b, replaceStart, "consent", { decision: "allow" }));
    expect((await findCode(s, replacedAgain))!.payload.grantId).toBe(grantId);
    expect((await repository.findGrant(grantId))!.scopes).toEqual(["openid", "profile"]);

    // create still makes a new grant beside it, and from then on that newest grant is the current one.
    const created = expectCode(await submitPage(b, await b.get(authorizeUrl(params({ scope: "openid", grant_management_action: "create" }))), "consent", { decision: "allow" }));
    const newGrant = (await findCode(s, created))!.payload.grantId;
    expect(newGrant).not.toBe(grantId);
    expect((await repository.findGrant(grantId))!.scopes).toEqual(["openid", "profile"]);
  });

  it.each(["replace", "merge"])("%s without grant_id and no grant yet → consent page (not saying it changes a grant), then a new grant holding the request", async (action) => {
    const s = live();
    const user = await createUser(s);
    const b = browser();
    const start = await b.get(authorizeUrl(params({ scope: "openid email", grant_management_action: action })));
    const consent = await signIn(b, start, user.login, user.password);
    const shown = await b.get(expectPage(consent, "consent"));
    expect(shown.status).toBe(200);
    expect(shown.body).not.toContain("Allowing replaces the access you gave");
    expect(shown.body).not.toContain("Allowing adds to the access you already gave");
    const code = expectCode(await submitPage(b, consent, "consent", { decision: "allow" }));
    const grant = await new OidcRepository(s.database).findGrant((await findCode(s, code))!.payload.grantId);
    expect(grant).toMatchObject({ userId: user.row.id, clientId: "web-app", scopes: ["openid", "email"], revokedAt: null });
  });

  it("replace without grant_id under prompt=none and no grant yet → consent_required", async () => {
    const s = live();
    const user = await createUser(s);
    const b = browser();
    // A session for the user, with a grant for another client only.
    const other = await b.get(authorizeUrl(params({ client_id: "other-app", redirect_uri: "https://other.example/cb" })));
    await submitPage(b, await signIn(b, other, user.login, user.password), "consent", { decision: "allow" });
    expectError(await b.get(authorizeUrl(params({ prompt: "none", grant_management_action: "replace" }))), "consent_required");
  });

  it("an interaction continues only in the browser that started it", async () => {
    const reply = await browser().get(authorizeUrl(params()));
    const loginPath = expectPage(reply, "login");
    const stranger = await browser().get(loginPath);
    expect(stranger.status).toBe(400);
    expect(stranger.body).not.toContain('name="csrf"');
  });
});
