import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { decodeJwt } from "jose";
import { noTokenChallenge } from "../../src/domain/oidc/dpop/token-binding.ts";
import { basicAuthorization, type TestUser } from "../support/oidc.ts";
import { databaseTargets, targetTitle } from "../support/databases.ts";
import { paths, clients, resourceServer } from "../support/oidc-resource-server.ts";

/**
 * What a token opens and what ends it, through real HTTP on every database target: userinfo, RFC 7009
 * revocation and RFC 7662 introspection. Tokens come from the real flow.
 */

const targets = await databaseTargets();

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    const provider = resourceServer(target);
    const { call, revoke, introspect, refresh, userinfo, tokensFor, expectInvalidClient, expectOAuthError, expectInvalidToken, expectInactive } = provider;
    let issuer: string;
    beforeAll(() => {
      issuer = provider.issuer();
    });

    describe("userinfo", () => {
      it.each(["GET", "POST"] as const)("%s without a token → 401 with bare Bearer and DPoP challenges", async (method) => {
        const reply = await call(method, paths.userinfo);
        expect(reply.status, reply.text).toBe(401);
        expect(reply.headers.get("www-authenticate")).toBe(noTokenChallenge);
        expect(reply.headers.get("cache-control")).toBe("no-store");
      });

      it.each(["GET", "POST"] as const)("%s with a malformed or unknown token → 401 invalid_token", async (method) => {
        for (const authorization of ["Bearer a b", "Bearer !!!", `Bearer ${randomBytes(32).toString("base64url")}`]) {
          const reply = await call(method, paths.userinfo, { headers: { authorization } });
          expectInvalidToken(reply);
        }
      });

      it.each(["GET", "POST"] as const)("%s with another scheme or an empty Bearer or DPoP → 401 with the bare challenges, as without a token (RFC 6750 §3.1)", async (method) => {
        for (const authorization of ["Bearer", "Bearer ", `Basic ${Buffer.from("a:b").toString("base64")}`, "DPoP", "DPoP "]) {
          const reply = await call(method, paths.userinfo, { headers: { authorization } });
          expect(reply.status, authorization).toBe(401);
          expect(reply.headers.get("www-authenticate")).toBe(noTokenChallenge);
        }
      });

      it.each(["GET", "POST"] as const)("%s: claims follow the granted scopes; sub, auth_time, acr, amr and sid are the ID token's", async (method) => {
        const cases: Array<[string, (user: TestUser) => Record<string, unknown>]> = [
          ["openid", () => ({})],
          ["openid profile", (u) => ({ name: "Test User", preferred_username: u.login })],
          ["openid email", (u) => ({ email: `${u.login}@example.com`, email_verified: false })],
          ["openid profile email", (u) => ({ name: "Test User", preferred_username: u.login, email: `${u.login}@example.com`, email_verified: false })],
        ];
        for (const [scope, claims] of cases) {
          const issued = await tokensFor("app", scope);
          expect(issued.body.scope).toBe(scope);
          const reply = await userinfo(issued.access, method);
          expect(reply.status, reply.text).toBe(200);
          expect(reply.headers.get("cache-control")).toBe("no-store");
          const { sub, auth_time, acr, amr, sid, jpki_verified } = decodeJwt(issued.idToken!);
          expect(jpki_verified).toBe(false);
          expect(amr).toEqual(["pwd"]);
          expect(sub).toBe(issued.user.row.id);
          // The authentication the token stems from is always there, the same as in the ID token.
          expect(sid).toMatch(/^[A-Za-z0-9_-]{43}$/);
          expect(reply.json, scope).toEqual({ sub, auth_time, acr, amr, sid, jpki_verified, ...claims(issued.user) });
          expect(acr).toBe("low");
        }
      });

      it("a refresh token is not an access token → 401 invalid_token", async () => {
        const issued = await tokensFor("app", "openid offline_access");
        expect(issued.refresh).toEqual(expect.any(String));
        expectInvalidToken(await userinfo(issued.refresh!));
        expectInvalidToken(await userinfo(issued.refresh!, "POST"));
        // The access token of the same response works.
        expect((await userinfo(issued.access)).status).toBe(200);
      });

      it("an access token revoked at /revoke stops working at once", async () => {
        const issued = await tokensFor("app", "openid profile");
        expect((await userinfo(issued.access)).status).toBe(200);
        expect((await revoke("app", { token: issued.access })).status).toBe(200);
        expectInvalidToken(await userinfo(issued.access));
        expectInvalidToken(await userinfo(issued.access, "POST"));
      });
    });

    describe("revocation (RFC 7009)", () => {
      it("requires client authentication", async () => {
        const issued = await tokensFor("app", "openid");
        expectInvalidClient(await revoke(undefined, { token: issued.access }));
        expectInvalidClient(
          await call("POST", paths.revoke, {
            headers: { authorization: basicAuthorization(clients.app.id, "wrong-secret-0123456789abcdef") },
            form: { token: issued.access },
          }),
        );
        // The public client cannot revoke either.
        expectInvalidClient(await revoke("pub", { token: issued.access }));
        // None of these touched the token.
        expect((await userinfo(issued.access)).status).toBe(200);
      });

      it("a missing or empty token → 400 invalid_request", async () => {
        for (const form of [{}, { token: "" }, { token_type_hint: "access_token" }]) {
          const reply = await revoke("app", form);
          expectOAuthError(reply, 400, "invalid_request");
          expect(reply.headers.get("cache-control")).toBe("no-store");
        }
      });

      it("revoking an access token → 200; userinfo and introspection then refuse it, the refresh token lives on", async () => {
        const issued = await tokensFor("app", "openid offline_access");
        const reply = await revoke("app", { token: issued.access });
        expect(reply.status, reply.text).toBe(200);
        expect(reply.text).toBe("");
        expectInvalidToken(await userinfo(issued.access));
        expectInactive(await introspect("app", { token: issued.access }));
        // Revoking it again is still 200.
        expect((await revoke("app", { token: issued.access })).status).toBe(200);
        // Only that token was revoked.
        expect((await introspect("app", { token: issued.refresh! })).json?.active).toBe(true);
        const refreshed = await refresh("app", issued.refresh!);
        expect(refreshed.status, refreshed.text).toBe(200);
        expect((await userinfo(refreshed.json!.access_token as string)).status).toBe(200);
      });

      it("revoking a refresh token → 200; it no longer refreshes and the access tokens of its family stop working", async () => {
        const issued = await tokensFor("app", "openid offline_access");
        // One rotation first, so the family holds two access tokens and a consumed refresh token.
        const rotated = await refresh("app", issued.refresh!);
        expect(rotated.status, rotated.text).toBe(200);
        const secondAccess = rotated.json!.access_token as string;
        const secondRefresh = rotated.json!.refresh_token as string;
        expect((await userinfo(issued.access)).status).toBe(200);
        expect((await userinfo(secondAccess)).status).toBe(200);

        const reply = await revoke("app", { token: secondRefresh });
        expect(reply.status, reply.text).toBe(200);
        expect(reply.text).toBe("");
        expectOAuthError(await refresh("app", secondRefresh), 400, "invalid_grant");
        expectInvalidToken(await userinfo(issued.access));
        expectInvalidToken(await userinfo(secondAccess));
        expectInactive(await introspect("app", { token: secondRefresh }));
        expectInactive(await introspect("app", { token: secondAccess }));
      });

      it("an unknown token → 200", async () => {
        const reply = await revoke("app", { token: randomBytes(32).toString("base64url") });
        expect(reply.status, reply.text).toBe(200);
        expect(reply.text).toBe("");
      });

      it("another client's tokens → 200, and they keep working", async () => {
        const theirs = await tokensFor("other", "openid offline_access");
        expect((await revoke("app", { token: theirs.access })).status).toBe(200);
        expect((await revoke("app", { token: theirs.refresh!, token_type_hint: "refresh_token" })).status).toBe(200);
        expect((await userinfo(theirs.access)).status).toBe(200);
        expect((await introspect("other", { token: theirs.access })).json?.active).toBe(true);
        expect((await introspect("other", { token: theirs.refresh! })).json?.active).toBe(true);
        const refreshed = await refresh("other", theirs.refresh!);
        expect(refreshed.status, refreshed.text).toBe(200);
      });

      it("token_type_hint is accepted, matching or not", async () => {
        const a = await tokensFor("app", "openid offline_access");
        expect((await revoke("app", { token: a.access, token_type_hint: "access_token" })).status).toBe(200);
        expectInvalidToken(await userinfo(a.access));
        expect((await revoke("app", { token: a.refresh!, token_type_hint: "refresh_token" })).status).toBe(200);
        expectOAuthError(await refresh("app", a.refresh!), 400, "invalid_grant");

        // A hint naming the other type does not stop the server from finding the token (RFC 7009 §2.1).
        const b = await tokensFor("app", "openid offline_access");
        expect((await revoke("app", { token: b.access, token_type_hint: "refresh_token" })).status).toBe(200);
        expectInvalidToken(await userinfo(b.access));
        expect((await revoke("app", { token: b.refresh!, token_type_hint: "access_token" })).status).toBe(200);
        expectOAuthError(await refresh("app", b.refresh!), 400, "invalid_grant");
      });
    });

    describe("introspection (RFC 7662)", () => {
      it("an active access token: every member, matching the token response", async () => {
        const before = Math.floor(Date.now() / 1000);
        const issued = await tokensFor("app", "openid profile");
        const after = Math.floor(Date.now() / 1000);
        const reply = await introspect("app", { token: issued.access });
        expect(reply.status, reply.text).toBe(200);
        expect(reply.headers.get("cache-control")).toBe("no-store");
        const body = reply.json!;
        expect(body).toEqual({
          active: true,
          token_type: "Bearer",
          client_id: clients.app.id,
          sub: issued.user.row.id,
          scope: "openid profile",
          exp: expect.any(Number),
          iat: expect.any(Number),
          iss: issuer,
          grant_id: issued.grantId,
        });
        expect(body.iat as number).toBeGreaterThanOrEqual(before);
        expect(body.iat as number).toBeLessThanOrEqual(after);
        expect((body.exp as number) - (body.iat as number)).toBe(issued.body.expires_in);
        expect(body.sub).toBe(decodeJwt(issued.idToken!).sub);
      });

      it("a refresh token → active, without token_type (RFC 7662: the RFC 6749 type, which only access tokens have); once rotated it is inactive", async () => {
        const issued = await tokensFor("app", "openid offline_access");
        const reply = await introspect("app", { token: issued.refresh!, token_type_hint: "refresh_token" });
        expect(reply.status, reply.text).toBe(200);
        expect(reply.json).toEqual({
          active: true,
          client_id: clients.app.id,
          sub: issued.user.row.id,
          scope: "openid offline_access",
          exp: expect.any(Number),
          iat: expect.any(Number),
          iss: issuer,
          grant_id: issued.grantId,
        });
        // Refresh tokens outlive access tokens.
        const access = (await introspect("app", { token: issued.access })).json!;
        expect((reply.json!.exp as number) - (reply.json!.iat as number)).toBeGreaterThan((access.exp as number) - (access.iat as number));

        expect((await refresh("app", issued.refresh!)).status).toBe(200);
        expectInactive(await introspect("app", { token: issued.refresh! }));
      });

      it("revoked, unknown and another client's tokens → exactly {\"active\":false}", async () => {
        const mine = await tokensFor("app", "openid offline_access");
        const theirs = await tokensFor("other", "openid offline_access");
        expect((await revoke("app", { token: mine.access })).status).toBe(200);
        expectInactive(await introspect("app", { token: mine.access }));
        expectInactive(await introspect("app", { token: randomBytes(32).toString("base64url") }));
        expectInactive(await introspect("app", { token: "not a token at all" }));
        expectInactive(await introspect("app", { token: theirs.access }));
        expectInactive(await introspect("app", { token: theirs.refresh! }));
        // To their own client they are active.
        expect((await introspect("other", { token: theirs.access })).json?.active).toBe(true);
      });

      it("requires client authentication; a public client is refused", async () => {
        const issued = await tokensFor("pub", "openid offline_access");
        expect(issued.refresh).toEqual(expect.any(String));
        expectInvalidClient(await introspect(undefined, { token: issued.access }));
        expectInvalidClient(await introspect("pub", { token: issued.access }));
        expectInvalidClient(await introspect("pub", { token: issued.refresh! }));
        expectInvalidClient(
          await call("POST", paths.introspect, {
            headers: { authorization: basicAuthorization(clients.app.id, "wrong-secret-0123456789abcdef") },
            form: { token: issued.access },
          }),
        );
        // The public client's token itself is fine.
        expect((await userinfo(issued.access)).status).toBe(200);
      });

      it("a missing token → 400 invalid_request", async () => {
        expectOAuthError(await introspect("app", {}), 400, "invalid_request");
        expectOAuthError(await introspect("app", { token: "" }), 400, "invalid_request");
      });
    });
  });
}
