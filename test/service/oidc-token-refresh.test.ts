import { beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/domain/oidc/flow/secrets.ts";
import { databaseTargets, targetTitle } from "../support/databases.ts";
import {
  Browser,
  getUserinfo,
  obtainCode,
  pkce,
  sessionCookie,
  type TestUser,
} from "../support/oidc.ts";
import { clientIds, expectedAtHash, idTokenLifetime, redirects, secrets, useTokenEndpoint } from "../support/token-endpoint.ts";

/**
 * The token endpoint, the refresh_token grant (RFC 6749 §6; rotation, scope
 * narrowing, replay of a rotated token) through real HTTP requests, on every
 * database target, and what never reaches the logs. Codes come from the real
 * authorization flow (authorize → login → consent).
 *
 * "Nothing issued" is checked on the oidc_tokens table: a refused request adds
 * no row. Tests in this file run one after another, so the row count of the
 * whole table is a reliable measure.
 */

const targets = await databaseTargets();

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    const { live, codeFor, token, exchange, refresh, expectIssued, expectTokenError, tokenCount, tokenRow, familyRows, verifiedIdToken, publishedKids, state } = useTokenEndpoint(target);
    let user: TestUser;
    beforeAll(() => {
      ({ user } = state());
    });

    describe("refresh tokens", () => {
      it("are issued only when offline_access was granted", async () => {
        const code = await codeFor("post", { scope: "openid profile" });
        const before = await tokenCount();
        const tokens = expectIssued(await exchange("post", code));
        expect(tokens).not.toHaveProperty("refresh_token");
        expect(await tokenCount()).toBe(before + 1);
        expect((await tokenRow(tokens.access_token))!.kind).toBe("access");
      });

      it("rotate: each refresh returns new tokens and uses up the old refresh token; the refresh answer has every member", async () => {
        const details = [{ type: "account_information", actions: ["read_balances"] }];
        const code = await codeFor("basic", { scope: "openid profile offline_access", authorizationDetails: details });
        const first = expectIssued(await exchange("basic", code));
        const seen = new Set([first.access_token, first.refresh_token!]);
        let current = first;
        for (let i = 0; i < 3; i++) {
          const before = await tokenCount();
          const next = expectIssued(await refresh("basic", current.refresh_token!));
          expect(Object.keys(next).sort()).toEqual(
            ["access_token", "token_type", "expires_in", "scope", "id_token", "refresh_token", "grant_id", "authorization_details"].sort(),
          );
          expect(next.grant_id).toBe(first.grant_id);
          expect(next.scope).toBe(first.scope);
          expect(next.authorization_details).toEqual(details);
          expect(seen.has(next.access_token)).toBe(false);
          expect(seen.has(next.refresh_token!)).toBe(false);
          seen.add(next.access_token).add(next.refresh_token!);
          expect(await tokenCount()).toBe(before + 2);
          expect((await tokenRow(current.refresh_token!))!.consumed_at).not.toBeNull();
          expect((await getUserinfo(live(), next.access_token)).status).toBe(200);
          current = next;
        }
      });

      it("replaying a rotated refresh token revokes the whole family: the newest refresh token and the access tokens stop working", async () => {
        const first = expectIssued(await exchange("basic", await codeFor("basic", { scope: "openid offline_access" })));
        const second = expectIssued(await refresh("basic", first.refresh_token!));
        const third = expectIssued(await refresh("basic", second.refresh_token!));
        expect((await getUserinfo(live(), third.access_token)).status).toBe(200);

        const before = await tokenCount();
        expectTokenError(await refresh("basic", second.refresh_token!), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);

        expectTokenError(await refresh("basic", third.refresh_token!), 400, "invalid_grant");
        for (const tokens of [first, second, third]) {
          expect((await getUserinfo(live(), tokens.access_token)).status).toBe(401);
          expect((await tokenRow(tokens.access_token))!.revoked_at).not.toBeNull();
          expect((await tokenRow(tokens.refresh_token!))!.revoked_at).not.toBeNull();
        }

        // Another family of the same user and client is not affected.
        const other = expectIssued(await exchange("basic", await codeFor("basic", { scope: "openid offline_access" })));
        expectIssued(await refresh("basic", other.refresh_token!));
      });

      it("sid: one per session, stable across its codes, neither the cookie nor its stored hash; userinfo says the same", async () => {
        const b = new Browser(live().url);
        const request = { clientId: clientIds.basic, redirectUri: redirects.basic, scope: "openid" };
        const first = expectIssued(await exchange("basic", await obtainCode(live(), b, user, request)));
        const cookie = b.jar.get(sessionCookie);
        expect(cookie).toMatch(/^[A-Za-z0-9_-]{43}$/);
        const sid = (await verifiedIdToken(first.id_token!, clientIds.basic)).payload.sid;
        expect(sid).toMatch(/^[A-Za-z0-9_-]{43}$/);
        expect(sid).not.toBe(cookie);
        expect(sid).not.toBe(sha256Hex(cookie!));
        expect(sid).not.toBe(Buffer.from(sha256Hex(cookie!), "hex").toString("base64url"));

        // The same session, later: the same sid; in the ID token and at userinfo.
        const second = expectIssued(await exchange("basic", await obtainCode(live(), b, user, request)));
        expect((await verifiedIdToken(second.id_token!, clientIds.basic)).payload.sid).toBe(sid);
        const info = await getUserinfo(live(), second.access_token);
        expect(info.status).toBe(200);
        expect(info.json).toMatchObject({ sid, acr: "low", amr: ["pwd"] });
        expect(info.json.auth_time).toBe((await verifiedIdToken(second.id_token!, clientIds.basic)).payload.auth_time);

        // Another session of the same user: another sid.
        const other = expectIssued(await exchange("basic", await obtainCode(live(), new Browser(live().url), user, request)));
        expect((await verifiedIdToken(other.id_token!, clientIds.basic)).payload.sid).not.toBe(sid);
      });

      it("the refreshed ID token keeps sub, auth_time, acr, amr and sid, has no nonce, and its at_hash matches the new access token", async () => {
        const code = await codeFor("basic", { scope: "openid offline_access", nonce: "original-nonce" });
        const first = expectIssued(await exchange("basic", code));
        const original = (await verifiedIdToken(first.id_token!, clientIds.basic)).payload;
        expect(original.nonce).toBe("original-nonce");

        const refreshed = expectIssued(await refresh("basic", first.refresh_token!));
        expect(refreshed.id_token).toBeDefined();
        expect(refreshed.id_token).not.toBe(first.id_token);
        const { payload, kid } = await verifiedIdToken(refreshed.id_token!, clientIds.basic);
        expect(await publishedKids()).toContain(kid);
        expect(Object.keys(payload).sort()).toEqual(["acr", "amr", "at_hash", "aud", "auth_time", "azp", "exp", "iat", "iss", "jpki_verified", "sid", "sub"]);
        expect(payload.sid).toBe(original.sid);
        expect(payload).not.toHaveProperty("nonce");
        expect(payload.sub).toBe(original.sub);
        expect(payload.sub).toBe(user.row.id);
        expect(payload.auth_time).toBe(original.auth_time);
        expect(payload.acr).toBe(original.acr);
        expect(payload.amr).toEqual(original.amr);
        expect(payload.aud).toBe(clientIds.basic);
        expect(payload.azp).toBe(clientIds.basic);
        expect(payload.iat).toBeGreaterThanOrEqual(original.iat!);
        expect(payload.exp).toBe(payload.iat! + idTokenLifetime);
        expect(payload.at_hash).toBe(expectedAtHash(refreshed.access_token));
        expect(payload.at_hash).not.toBe(original.at_hash);
      });

      it("scope narrowing: the access token gets the narrower scope; the refresh token keeps the original one (RFC 6749 §6)", async () => {
        const tokens = expectIssued(await exchange("basic", await codeFor("basic", { scope: "openid profile email offline_access" })));
        expect(tokens.scope.split(" ").sort()).toEqual(["email", "offline_access", "openid", "profile"]);

        const narrowed = expectIssued(await refresh("basic", tokens.refresh_token!, { scope: "openid offline_access" }));
        expect(narrowed.scope).toBe("openid offline_access");
        const narrowInfo = await getUserinfo(live(), narrowed.access_token);
        expect(narrowInfo.status).toBe(200);
        expect(narrowInfo.json).toEqual({ sub: user.row.id, auth_time: expect.any(Number), acr: "low", amr: ["pwd"], sid: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), jpki_verified: false });
        expect(JSON.parse((await tokenRow(narrowed.access_token))!.scopes)).toEqual(["openid", "offline_access"]);

        // Narrower still, without offline_access: the client keeps a refresh token.
        const openidOnly = expectIssued(await refresh("basic", narrowed.refresh_token!, { scope: "openid" }));
        expect(openidOnly.scope).toBe("openid");
        expect(openidOnly.refresh_token).toBeDefined();
        expect(openidOnly.id_token).toBeDefined();

        // Omitted, the scope is the one originally granted, and it can be asked for in full again.
        const full = expectIssued(await refresh("basic", openidOnly.refresh_token!));
        expect(full.scope.split(" ").sort()).toEqual(["email", "offline_access", "openid", "profile"]);
        const fullInfo = await getUserinfo(live(), full.access_token);
        expect(fullInfo.json).toMatchObject({ sub: user.row.id, name: "Test User", email: `${user.login}@example.com` });
        const again = expectIssued(await refresh("basic", full.refresh_token!, { scope: "profile openid" }));
        expect(again.scope).toBe("profile openid");

        // Narrowing to a scope without openid: no ID token.
        const profileOnly = expectIssued(await refresh("basic", again.refresh_token!, { scope: "profile" }));
        expect(profileOnly.scope).toBe("profile");
        expect(profileOnly).not.toHaveProperty("id_token");
      });

      it("the same refresh token presented by 10 concurrent requests: one use rotates it, and the replays revoke the family", async () => {
        const tokens = expectIssued(await exchange("basic", await codeFor("basic", { scope: "openid offline_access" })));
        const family = (await tokenRow(tokens.refresh_token!))!.family;
        const before = await tokenCount();
        const replies = await Promise.all(Array.from({ length: 10 }, () => refresh("basic", tokens.refresh_token!)));
        const won = replies.filter((r) => r.status === 200);
        expect(won.length).toBeLessThanOrEqual(1);
        for (const reply of won) expectIssued(reply);
        for (const reply of replies.filter((r) => r.status !== 200)) expectTokenError(reply, 400, "invalid_grant");
        // One rotation stored one access and one refresh token; every token of the family ends revoked.
        expect(await tokenCount()).toBe(before + 2);
        const stored = await familyRows(family);
        expect(stored).toHaveLength(4);
        expect(stored.every((row) => row.revoked_at !== null)).toBe(true);
      });
    });

    it("no code, token, secret, verifier or password ever reaches the logs", async () => {
      const { verifier, challenge } = pkce();
      const code = await codeFor("basic", { scope: "openid profile offline_access", codeChallenge: challenge });
      const issued = expectIssued(await exchange("basic", code, { code_verifier: verifier }));
      const refreshed = expectIssued(await refresh("basic", issued.refresh_token!));
      await getUserinfo(live(), refreshed.access_token);
      await token("post", { grant_type: "authorization_code", code: "not-a-code", redirect_uri: redirects.post });
      const logs = live().rawLogs();
      expect(logs).toContain("/api/oidc/v1/token");
      for (const value of [code, verifier, issued.access_token, issued.refresh_token!, issued.id_token!, refreshed.access_token, refreshed.refresh_token!, secrets.basic, secrets.post, user.password]) {
        expect(logs).not.toContain(value);
      }
    });
  });
}
