import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { noTokenChallenge } from "../../src/domain/oidc/dpop/token-binding.ts";
import { authorizeUrl, expectCodeRedirect, expectErrorRedirect, expectPage, pkce, submitPage } from "../support/oidc.ts";
import { databaseTargets, targetTitle } from "../support/databases.ts";
import { paths, clients, paymentDetails, accountDetails, resourceServer } from "../support/oidc-resource-server.ts";

/**
 * The grant management API, through real HTTP on every database target: what a grant holds, who may
 * see it, and what deleting it ends. Tokens come from the real flow.
 */

const targets = await databaseTargets();

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    const provider = resourceServer(target);
    const { call, introspect, refresh, bearer, userinfo, exchange, tokensFor, expectOAuthError, expectInvalidToken, expectInactive } = provider;
    let issuer: string;
    beforeAll(() => {
      issuer = provider.issuer();
    });

    describe("grant management API", () => {
      const grantPath = (grantId: string) => `${paths.grants}/${encodeURIComponent(grantId)}`;
      const getGrant = (grantId: string, token?: string) => call("GET", grantPath(grantId), token ? { headers: bearer(token) } : {});
      const deleteGrant = (grantId: string, token?: string) => call("DELETE", grantPath(grantId), token ? { headers: bearer(token) } : {});

      it("GET returns the grant's scopes and authorization_details, as the token response and introspection say", async () => {
        const issued = await tokensFor("app", "openid offline_access", { authorizationDetails: paymentDetails });
        expect(issued.consentShown).toBe(true);
        expect(issued.body.authorization_details).toEqual(paymentDetails);
        expect(issued.grantId).toMatch(/^[A-Za-z0-9_-]{20,}$/);

        const reply = await getGrant(issued.grantId, issued.access);
        expect(reply.status, reply.text).toBe(200);
        expect(reply.headers.get("cache-control")).toBe("no-store");
        expect(reply.json).toEqual({ scopes: [{ scope: "openid offline_access" }], authorization_details: paymentDetails });

        const introspected = (await introspect("app", { token: issued.access })).json!;
        expect(introspected.grant_id).toBe(issued.grantId);
        expect(introspected.authorization_details).toEqual(paymentDetails);
        // The refresh token's family carries the same grant and details.
        const refreshed = await refresh("app", issued.refresh!);
        expect(refreshed.json).toMatchObject({ grant_id: issued.grantId, authorization_details: paymentDetails });
      });

      it("a grant without authorization_details has none in the answer", async () => {
        const issued = await tokensFor("app", "openid profile");
        expect(issued.body).not.toHaveProperty("authorization_details");
        const reply = await getGrant(issued.grantId, issued.access);
        expect(reply.status, reply.text).toBe(200);
        expect(reply.json).toEqual({ scopes: [{ scope: "openid profile" }] });
      });

      it("no token → 401; another client's token or an unknown grant → 404", async () => {
        const mine = await tokensFor("app", "openid", { authorizationDetails: paymentDetails });
        const theirs = await tokensFor("other", "openid");

        for (const reply of [await getGrant(mine.grantId), await deleteGrant(mine.grantId)]) {
          expect(reply.status, reply.text).toBe(401);
          expect(reply.headers.get("www-authenticate")).toBe(noTokenChallenge);
        }
        expectInvalidToken(await getGrant(mine.grantId, randomBytes(32).toString("base64url")));

        for (const reply of [await getGrant(mine.grantId, theirs.access), await deleteGrant(mine.grantId, theirs.access)]) {
          expect(reply.status, reply.text).toBe(404);
          expect(reply.json).toMatchObject({ error: "invalid_grant_id" });
          expect(reply.text).not.toContain("payment_initiation");
        }
        // The other client's own grant is visible to it.
        expect((await getGrant(theirs.grantId, theirs.access)).status).toBe(200);
        expect((await getGrant(theirs.grantId, mine.access)).status).toBe(404);
        expect((await getGrant(`unknown-${randomBytes(8).toString("hex")}`, mine.access)).status).toBe(404);
        // The refused DELETE changed nothing.
        expect((await getGrant(mine.grantId, mine.access)).json).toMatchObject({ authorization_details: paymentDetails });
        expect((await userinfo(mine.access)).status).toBe(200);
      });

      it("a payment (one-off type) shows the consent page every time, even identical to one approved in this browser", async () => {
        const first = await tokensFor("app", "openid", { authorizationDetails: paymentDetails });
        expect(first.consentShown).toBe(true);
        const again = await tokensFor("app", "openid", { user: first.user, browser: first.browser, authorizationDetails: paymentDetails });
        expect(again.consentShown).toBe(true);
        expect(again.grantId).toBe(first.grantId);
        // prompt=none cannot show it: consent_required, never a code for an unseen payment.
        const silent = await first.browser.get(
          authorizeUrl({
            client_id: clients.app.id,
            redirect_uri: clients.app.redirectUri,
            response_type: "code",
            scope: "openid",
            state: "silent",
            prompt: "none",
            code_challenge: pkce().challenge,
            code_challenge_method: "S256",
            authorization_details: JSON.stringify(paymentDetails),
          }),
        );
        expectErrorRedirect(silent, { redirectUri: clients.app.redirectUri, error: "consent_required", issuer, state: "silent" });
      });

      it("DELETE → 204; the grant is gone with every token under it, and the next authorization asks for consent again", async () => {
        const issued = await tokensFor("app", "openid offline_access", { authorizationDetails: accountDetails });
        expect(issued.consentShown).toBe(true);
        const { user, browser } = issued;

        // Before the deletion, the same request in the same browser skips consent and keeps the grant.
        const again = await tokensFor("app", "openid offline_access", { user, browser, authorizationDetails: accountDetails });
        expect(again.consentShown).toBe(false);
        expect(again.grantId).toBe(issued.grantId);

        // A live token of the same client under another grant (another user), to ask after the deletion.
        const bystander = await tokensFor("app", "openid");
        expect(bystander.grantId).not.toBe(issued.grantId);

        const removed = await deleteGrant(issued.grantId, issued.access);
        expect(removed.status, removed.text).toBe(204);
        expect(removed.text).toBe("");

        // The token used was under the grant: it is dead, so 401; a live token of the client sees no such grant.
        expectInvalidToken(await getGrant(issued.grantId, issued.access));
        const gone = await getGrant(issued.grantId, bystander.access);
        expect(gone.status, gone.text).toBe(404);
        expect(gone.json).toMatchObject({ error: "invalid_grant_id" });
        expect((await deleteGrant(issued.grantId, bystander.access)).status).toBe(404);

        for (const token of [issued, again]) {
          expectOAuthError(await refresh("app", token.refresh!), 400, "invalid_grant");
          expectInvalidToken(await userinfo(token.access));
          expectInactive(await introspect("app", { token: token.access }));
          expectInactive(await introspect("app", { token: token.refresh! }));
        }
        // Other grants are untouched.
        expect((await userinfo(bystander.access)).status).toBe(200);

        // The session is kept (no login page), but consent is asked again, and a new grant is made.
        const { verifier, challenge } = pkce();
        const state = "after-revocation";
        const start = await browser.get(
          authorizeUrl({
            client_id: clients.app.id,
            redirect_uri: clients.app.redirectUri,
            response_type: "code",
            scope: "openid offline_access",
            state,
            code_challenge: challenge,
            code_challenge_method: "S256",
            authorization_details: JSON.stringify(accountDetails),
          }),
        );
        expectPage(start, "consent");
        const done = await submitPage(browser, start, "consent", { decision: "allow" });
        const code = expectCodeRedirect(done, { redirectUri: clients.app.redirectUri, issuer, state });
        const renewed = await exchange("app", code, verifier);
        expect(renewed.grantId).not.toBe(issued.grantId);
        expect((await getGrant(renewed.grantId, renewed.access)).json).toEqual({
          scopes: [{ scope: "openid offline_access" }],
          authorization_details: accountDetails,
        });
        expect((await userinfo(renewed.access)).json).toEqual({ sub: user.row.id, auth_time: expect.any(Number), acr: "low", amr: ["pwd"], sid: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), jpki_verified: false });
      });
    });
  });
}
