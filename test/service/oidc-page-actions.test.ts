import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { challengeOf, derOf, mockCard, signChallenge } from "../support/jpki.ts";
import {
  authorizeUrl,
  Browser,
  createUser,
  csrfOf,
  expectErrorRedirect,
  expectPage,
  registerClient,
  sessionCookie,
  signIn,
  type TestUser,
} from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * The pages' own actions besides their main forms, through real requests on
 * each database: cancelling an interaction, the account pages' sign-in, and
 * removing a linked certificate. Each refused attempt changes nothing.
 */
const redirectUri = "https://actions-app.example/cb";

for (const target of await databaseTargets()) {
  describe.skipIf(target.unavailable !== undefined)(`page actions on ${targetTitle(target)}`, () => {
    let database: ScratchDatabase;
    let dataDir: string;
    let server: TestServer;
    let accountId: string;

    beforeAll(async () => {
      database = await target.create();
      dataDir = mkdtempSync(path.join(tmpdir(), "shomei-actions-"));
      server = await startTestServer(database.url, { dataDir });
      await registerClient(server, { client_id: "actions-app", client_secret: "actions-app-secret-0123456789", redirect_uris: [redirectUri], scope: "openid profile" });
      accountId = (await server.domain.accounts.create("action-cards", "active")).id;
    });

    afterAll(async () => {
      await server?.close();
      await database?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    const request = (state: string) =>
      authorizeUrl({ client_id: "actions-app", redirect_uri: redirectUri, response_type: "code", scope: "openid", state });

    async function signedIn(user: TestUser): Promise<Browser> {
      const b = new Browser(server.url);
      const page = await b.get("/account/login");
      const reply = await b.post("/account/login?ui_locales=en", { csrf: csrfOf(page.body), login: user.login, password: user.password });
      expect(reply.status, reply.body).toBe(303);
      return b;
    }

    describe("cancel", () => {
      it("returns access_denied to the application and ends the interaction", async () => {
        const b = new Browser(server.url);
        const login = expectPage(await b.get(request("cancelled")), "login");
        const page = await b.get(login);
        const interaction = new URL(login, server.url).searchParams.get("interaction")!;
        const cancelled = await b.post(`/auth/cancel?interaction=${interaction}`, { csrf: csrfOf(page.body) });
        expectErrorRedirect(cancelled, { redirectUri, error: "access_denied", issuer: server.domain.oidc.issuer, state: "cancelled" });
        expect(new URL(cancelled.location!).searchParams.get("error_description")).toBe("the user cancelled the request");
        expect(await server.domain.oidc.flow.load(interaction, b.jar.get("shomei_browser")).catch((e: Error) => e.message)).toMatch(/already been completed/);
      });

      it("without the interaction's CSRF token: 403, and the interaction goes on", async () => {
        const b = new Browser(server.url);
        const login = expectPage(await b.get(request("kept")), "login");
        const interaction = new URL(login, server.url).searchParams.get("interaction")!;
        const forged = await b.post(`/auth/cancel?interaction=${interaction}`, { csrf: "forged" });
        expect(forged.status).toBe(403);
        expect(forged.location).toBeUndefined();
        expect((await b.get(login)).status).toBe(200);
      });
    });

    describe("account sign-in", () => {
      it("signs in without an application and lands on the account page", async () => {
        const user = await createUser(server);
        const b = new Browser(server.url);
        const signedOut = await b.get("/account/jpki?ui_locales=en");
        expect(signedOut.status).toBe(401);
        expect(signedOut.body).toContain('href="/account/login?ui_locales=en"');
        const page = await b.get("/account/login?ui_locales=en");
        expect(page.status).toBe(200);
        expect(page.body).toContain("Sign in to manage your account.");
        const wrong = await b.post("/account/login?ui_locales=en", { csrf: csrfOf(page.body), login: user.login, password: "wrong" });
        expect(wrong.status).toBe(401);
        expect(wrong.body).toContain("The username or password is not correct.");
        expect(b.jar.get(sessionCookie)).toBeUndefined();
        const right = await b.post("/account/login?ui_locales=en", { csrf: csrfOf(page.body), login: user.login, password: user.password });
        expect(right.status).toBe(303);
        expect(right.location).toBe("/account/jpki?ui_locales=en");
        expect(await server.domain.oidc.flow.session(b.jar.get(sessionCookie))).toMatchObject({ userId: user.row.id, acr: "low", amr: ["pwd"] });
        expect((await b.get(right.location!)).status).toBe(200);
        // Signed in, the sign-in page goes straight to the account page.
        expect((await b.get("/account/login")).location).toBe("/account/jpki?ui_locales=en");
      });

      it("a form from another browser, or none, is refused: 403 and no session", async () => {
        const user = await createUser(server);
        const other = new Browser(server.url);
        const page = await other.get("/account/login");
        const b = new Browser(server.url);
        await b.get("/account/login");
        for (const csrf of [csrfOf(page.body), "forged"]) {
          const reply = await b.post("/account/login", { csrf, login: user.login, password: user.password });
          expect(reply.status).toBe(403);
          expect(b.jar.get(sessionCookie)).toBeUndefined();
        }
      });
    });

    describe("removing a linked certificate", () => {
      it("removes the user's own link; another user's or an unknown id is 404 and removes nothing", async () => {
        const alice = await createUser(server);
        const bob = await createUser(server);
        const aliceCard = await mockCard(server, accountId);
        const bobCard = await mockCard(server, accountId);
        await server.domain.oidc.jpki.linkByOperator(alice.row.id, derOf(aliceCard));
        await server.domain.oidc.jpki.linkByOperator(bob.row.id, derOf(bobCard));
        const [aliceLink] = await server.domain.oidc.jpki.linksOf(alice.row.id);
        const [bobLink] = await server.domain.oidc.jpki.linksOf(bob.row.id);
        const b = await signedIn(alice);
        const page = await b.get("/account/jpki?ui_locales=en");
        expect(page.body).toContain(`name="certificate_id" value="${aliceLink!.certificateId}"`);
        expect(page.body).toContain("Expires: ");
        expect(page.body).not.toContain(bobLink!.certificateId);
        const csrf = csrfOf(page.body);

        for (const certificateId of [bobLink!.certificateId, "no-such-certificate", ""]) {
          const refused = await b.post("/account/jpki/remove?ui_locales=en", { csrf, certificate_id: certificateId });
          expect(refused.status, certificateId).toBe(404);
        }
        expect(await server.domain.oidc.jpki.linksOf(bob.row.id)).toHaveLength(1);
        expect(await server.domain.oidc.jpki.linksOf(alice.row.id)).toHaveLength(1);
        expect((await b.post("/account/jpki/remove", { csrf: "forged", certificate_id: aliceLink!.certificateId })).status).toBe(403);
        expect(await server.domain.oidc.jpki.linksOf(alice.row.id)).toHaveLength(1);

        const removed = await b.post("/account/jpki/remove?ui_locales=en", { csrf, certificate_id: aliceLink!.certificateId });
        expect(removed.status).toBe(200);
        expect(removed.body).toContain("The certificate is no longer linked to your account.");
        expect(await server.domain.oidc.jpki.linksOf(alice.row.id)).toEqual([]);
        expect(await server.domain.oidc.jpki.isVerified(alice.row.id)).toBe(false);
        expect(await server.domain.oidc.jpki.isVerified(bob.row.id)).toBe(true);
      });

      it("signed out, removing is refused with the sign-in page and removes nothing", async () => {
        const carol = await createUser(server);
        const card = await mockCard(server, accountId);
        await server.domain.oidc.jpki.linkByOperator(carol.row.id, derOf(card));
        const [link] = await server.domain.oidc.jpki.linksOf(carol.row.id);
        const reply = await new Browser(server.url).post("/account/jpki/remove", { csrf: "x", certificate_id: link!.certificateId });
        expect(reply.status).toBe(401);
        expect(await server.domain.oidc.jpki.linksOf(carol.row.id)).toHaveLength(1);
      });

      it("linking a certificate already linked says so, and links nothing new", async () => {
        const dave = await createUser(server);
        const card = await mockCard(server, accountId);
        await server.domain.oidc.jpki.linkByOperator(dave.row.id, derOf(card));
        const b = new Browser(server.url);
        await signIn(b, await b.get(request("dave")), dave.login, dave.password);
        const page = await b.get("/account/jpki?ui_locales=en");
        const challenge = challengeOf(page.body);
        const again = await b.post("/account/jpki?ui_locales=en", {
          csrf: csrfOf(page.body),
          challenge,
          certificate: card.certificatePem,
          signature: signChallenge(card, challenge),
        });
        expect(again.status, again.body).toBe(200);
        expect(again.body).toContain("This certificate was already linked to your account.");
        expect(again.body).not.toContain("The certificate is linked to your account.");
        expect(await server.domain.oidc.jpki.linksOf(dave.row.id)).toHaveLength(1);
      });
    });
  });
}
