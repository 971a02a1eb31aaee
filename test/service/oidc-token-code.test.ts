import { randomBytes, randomUUID } from "node:crypto";
import { SignJWT, type CryptoKey } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { sha256Hex, storedKeyOf } from "../../src/domain/oidc/flow/secrets.ts";
import { OneTimeRecords } from "../../src/storage/one-time-records.ts";
import { databaseTargets, targetTitle } from "../support/databases.ts";
import {
  basicAuthorization,
  clientAssertion,
  findCode,
  getUserinfo,
  jwtBearer,
  pkce,
  postToken,
  type TestUser,
} from "../support/oidc.ts";
import { accessTokenLifetime, base64urlJson, clientIds, redirects, secrets, useTokenEndpoint } from "../support/token-endpoint.ts";

/**
 * The token endpoint, the authorization_code grant (RFC 6749 §3.2, §4.1.3, §5, §6; RFC 7636; RFC 7523;
 * OIDC Core 3.1.3) through real HTTP requests, on every database target.
 * Codes come from the real authorization flow (authorize → login → consent).
 *
 * "Nothing issued" is checked on the oidc_tokens table: a refused request adds
 * no row. Tests in this file run one after another, so the row count of the
 * whole table is a reliable measure.
 */

const targets = await databaseTargets();

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    const { live, codeFor, token, exchange, refresh, expectIssued, expectTokenError, expectInvalidClient, tokenCount, tokenRow, familyRows, expectIdToken, state } = useTokenEndpoint(target);
    let issuer: string;
    let tokenEndpoint: string;
    let parEndpoint: string;
    let privateKey: CryptoKey;
    let strangerKey: CryptoKey;
    let user: TestUser;
    beforeAll(() => {
      ({ issuer, tokenEndpoint, parEndpoint, privateKey, strangerKey, user } = state());
    });

    describe("successful code exchange", () => {
      it("client_secret_basic with PKCE, nonce and authorization_details: every response member, and the ID token's claims", async () => {
        const { verifier, challenge } = pkce();
        const details = [{ type: "account_information", actions: ["list_accounts"], locations: ["https://bank.example/accounts"] }];
        const code = await codeFor("basic", {
          scope: "openid profile offline_access",
          nonce: "n-0S6_WzA2Mj",
          codeChallenge: challenge,
          authorizationDetails: details,
        });
        const grantId = (await findCode(live(), code))!.payload.grantId;
        const before = await tokenCount();
        const from = Date.now();
        const tokens = expectIssued(await exchange("basic", code, { code_verifier: verifier }));
        const until = Date.now();

        expect(Object.keys(tokens).sort()).toEqual(
          ["access_token", "token_type", "expires_in", "scope", "id_token", "refresh_token", "grant_id", "authorization_details"].sort(),
        );
        expect(tokens.scope.split(" ").sort()).toEqual(["offline_access", "openid", "profile"]);
        expect(tokens.grant_id).toBe(grantId);
        expect(tokens.authorization_details).toEqual(details);
        expect(tokens.refresh_token).toBeDefined();
        await expectIdToken(tokens, { clientId: clientIds.basic, code, nonce: "n-0S6_WzA2Mj", issuedFrom: from, issuedUntil: until });

        // One access and one refresh token stored, by hash only, bound to the client, user and grant.
        expect(await tokenCount()).toBe(before + 2);
        const access = await tokenRow(tokens.access_token);
        const refreshRow = await tokenRow(tokens.refresh_token!);
        expect(access).toMatchObject({ kind: "access", client_id: clientIds.basic, user_id: user.row.id, grant_id: grantId, revoked_at: null });
        expect(refreshRow).toMatchObject({ kind: "refresh", client_id: clientIds.basic, user_id: user.row.id, grant_id: grantId, consumed_at: null });
        expect(Number(access!.expires_at) - Number(access!.created_at)).toBe(accessTokenLifetime * 1000);

        // The access token works at userinfo, with the claims of the granted scopes.
        const info = await getUserinfo(live(), tokens.access_token);
        expect(info.status).toBe(200);
        expect(info.json).toMatchObject({ sub: user.row.id, name: "Test User", preferred_username: user.login });
        // The code is now used.
        expect((await findCode(live(), code))!.consumedAt).not.toBeNull();
      });

      it("client_secret_post without nonce or PKCE: the ID token has no nonce; no authorization_details member", async () => {
        const code = await codeFor("post", { scope: "openid" });
        const from = Date.now();
        const tokens = expectIssued(await exchange("post", code));
        const until = Date.now();
        expect(Object.keys(tokens).sort()).toEqual(["access_token", "expires_in", "grant_id", "id_token", "scope", "token_type"]);
        expect(tokens.scope).toBe("openid");
        await expectIdToken(tokens, { clientId: clientIds.post, code, nonce: undefined, issuedFrom: from, issuedUntil: until });
      });

      it("private_key_jwt with the issuer as audience, as a string and as a one-element array", async () => {
        for (const audience of [issuer, [issuer]]) {
          const code = await codeFor("jwt", { nonce: `n-${audience.length}` });
          const from = Date.now();
          const reply = await postToken(live(), {
            grant_type: "authorization_code",
            code,
            redirect_uri: redirects.jwt,
            client_id: clientIds.jwt,
            client_assertion_type: jwtBearer,
            client_assertion: await clientAssertion(privateKey, clientIds.jwt, audience),
          });
          const until = Date.now();
          const tokens = expectIssued(reply);
          await expectIdToken(tokens, { clientId: clientIds.jwt, code, nonce: `n-${audience.length}`, issuedFrom: from, issuedUntil: until });
        }
      });

      it("private_key_jwt without client_id in the body (the client named by the assertion's sub)", async () => {
        const code = await codeFor("jwt");
        const reply = await postToken(live(), {
          grant_type: "authorization_code",
          code,
          redirect_uri: redirects.jwt,
          client_assertion_type: jwtBearer,
          client_assertion: await clientAssertion(privateKey, clientIds.jwt, issuer),
        });
        expect(expectIssued(reply).scope).toBe("openid");
      });

      it("a public client (token_endpoint_auth_method none) with PKCE, identified by client_id alone; it can refresh too", async () => {
        const { verifier, challenge } = pkce();
        const code = await codeFor("public", { scope: "openid offline_access", nonce: "public-nonce", codeChallenge: challenge });
        const from = Date.now();
        const tokens = expectIssued(await exchange("public", code, { code_verifier: verifier }));
        const until = Date.now();
        expect(tokens.refresh_token).toBeDefined();
        await expectIdToken(tokens, { clientId: clientIds.public, code, nonce: "public-nonce", issuedFrom: from, issuedUntil: until });

        const refreshed = expectIssued(await refresh("public", tokens.refresh_token!));
        expect(refreshed.refresh_token).toBeDefined();
        expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
      });

      it("a code without the openid scope yields an access token but no ID token", async () => {
        const code = await codeFor("basic", { scope: "profile" });
        const tokens = expectIssued(await exchange("basic", code));
        expect(tokens.scope).toBe("profile");
        expect(tokens).not.toHaveProperty("id_token");
        expect(tokens).not.toHaveProperty("refresh_token");
        // Userinfo is for OpenID requests only.
        expect((await getUserinfo(live(), tokens.access_token)).status).toBe(403);
      });
    });

    describe("invalid_request (400)", () => {
      it("each malformed request is refused without touching the code, which still works afterwards", async () => {
        const code = await codeFor("basic");
        const before = await tokenCount();
        const basic = { authorization: basicAuthorization(clientIds.basic, secrets.basic) };
        const valid = { grant_type: "authorization_code", code, redirect_uri: redirects.basic };
        const repeated = (name: string, second: string) => {
          const form = new URLSearchParams(valid);
          form.append(name, second);
          return form;
        };

        const twice = repeated("client_id", clientIds.basic);
        twice.append("client_id", clientIds.basic);
        const assertion = await clientAssertion(privateKey, clientIds.jwt, issuer);

        const cases: Array<[string, Record<string, string | undefined> | URLSearchParams | string, Record<string, string>]> = [
          ["grant_type missing", { ...valid, grant_type: undefined }, basic],
          ["grant_type empty (counts as missing)", { ...valid, grant_type: "" }, basic],
          ["code missing", { ...valid, code: undefined }, basic],
          ["code empty", { ...valid, code: "" }, basic],
          ["redirect_uri missing", { ...valid, redirect_uri: undefined }, basic],
          ["code repeated", repeated("code", code), basic],
          ["grant_type repeated", repeated("grant_type", "authorization_code"), basic],
          ["redirect_uri repeated", repeated("redirect_uri", redirects.basic), basic],
          ["client_id repeated", twice, basic],
          ["a JSON body", JSON.stringify(valid), { ...basic, "content-type": "application/json" }],
          ["a text/plain body", new URLSearchParams(valid).toString(), { ...basic, "content-type": "text/plain" }],
          ["two client authentication methods (Basic and client_secret)", { ...valid, client_id: clientIds.basic, client_secret: secrets.basic }, basic],
          ["client_assertion without client_assertion_type", { ...valid, client_id: clientIds.jwt, client_assertion: assertion }, {}],
          ["client_secret without client_id", { ...valid, client_secret: secrets.post }, {}],
        ];
        for (const [name, body, headers] of cases) {
          const reply = await postToken(live(), body, headers);
          expect(reply.json?.error, `${name}: ${reply.text}`).toBe("invalid_request");
          expectTokenError(reply, 400, "invalid_request");
        }
        expect(await tokenCount()).toBe(before);
        expect((await findCode(live(), code))!.consumedAt).toBeNull();
        expectIssued(await exchange("basic", code));
      });

      it("refresh_token missing (or empty) for grant_type=refresh_token", async () => {
        const before = await tokenCount();
        expectTokenError(await token("basic", { grant_type: "refresh_token" }), 400, "invalid_request");
        expectTokenError(await token("basic", { grant_type: "refresh_token", refresh_token: "" }), 400, "invalid_request");
        expect(await tokenCount()).toBe(before);
      });
    });

    describe("invalid_client (401 with WWW-Authenticate)", () => {
      it("every failed client authentication is refused before the code is looked at", async () => {
        const code = await codeFor("basic");
        const before = await tokenCount();
        const valid = { grant_type: "authorization_code", code, redirect_uri: redirects.basic };
        const cases: Array<[string, Record<string, string | undefined>, Record<string, string>]> = [
          ["wrong secret, client_secret_basic", valid, { authorization: basicAuthorization(clientIds.basic, "wrong-secret-0123456789") }],
          ["wrong secret, client_secret_post", { ...valid, client_id: clientIds.post, client_secret: "wrong-secret-0123456789" }, {}],
          ["unknown client, client_secret_basic", valid, { authorization: basicAuthorization("no-such-client", secrets.basic) }],
          ["unknown client, client_secret_post", { ...valid, client_id: "no-such-client", client_secret: secrets.post }, {}],
          ["unknown client, client_id alone", { ...valid, client_id: "no-such-client" }, {}],
          ["no credentials and no client_id", valid, {}],
          ["a confidential client with its client_id alone", { ...valid, client_id: clientIds.basic }, {}],
          ["client_secret_post for a client_secret_basic client", { ...valid, client_id: clientIds.basic, client_secret: secrets.basic }, {}],
          ["client_secret_basic for a client_secret_post client", valid, { authorization: basicAuthorization(clientIds.post, secrets.post) }],
          ["a secret for a public client", { ...valid, client_id: clientIds.public, client_secret: "any-secret-0123456789" }, {}],
          ["a secret for a private_key_jwt client", { ...valid, client_id: clientIds.jwt, client_secret: "any-secret-0123456789" }, {}],
          ["another client's secret", valid, { authorization: basicAuthorization(clientIds.basic, secrets.post) }],
          ["an empty secret", valid, { authorization: basicAuthorization(clientIds.basic, "") }],
          ["a Bearer Authorization header", valid, { authorization: "Bearer abcdef" }],
          ["malformed Basic credentials", valid, { authorization: "Basic !!!not-base64!!!" }],
          ["Basic credentials without a colon", valid, { authorization: `Basic ${Buffer.from(clientIds.basic).toString("base64")}` }],
        ];
        for (const [name, form, headers] of cases) {
          const reply = await postToken(live(), form, headers);
          expect(reply.json?.error, `${name}: ${reply.text}`).toBe("invalid_client");
          expectInvalidClient(reply);
          // The secrets presented or registered never appear in the answer.
          expect(reply.text).not.toContain("wrong-secret");
          expect(reply.text).not.toContain(secrets.basic);
        }
        expect(await tokenCount()).toBe(before);
        expect((await findCode(live(), code))!.consumedAt).toBeNull();
        expectIssued(await exchange("basic", code));
      });
    });

    describe("private_key_jwt at the token endpoint", () => {
      const hand = (header: Record<string, unknown>, claims: Record<string, unknown>, signature = "") =>
        `${base64urlJson(header)}.${base64urlJson(claims)}.${signature}`;

      it("every bad assertion → 401 invalid_client, nothing issued, the code untouched; then a good one redeems it", async () => {
        const code = await codeFor("jwt");
        const before = await tokenCount();
        const now = Math.floor(Date.now() / 1000);
        const claims = { iss: clientIds.jwt, sub: clientIds.jwt, aud: issuer, iat: now, exp: now + 60, jti: randomUUID() };
        const signed = (overrides: { aud?: string | string[]; iat?: number; exp?: number }, key: CryptoKey = privateKey) =>
          new SignJWT({})
            .setProtectedHeader({ alg: "ES256", kid: "k1" })
            .setIssuer(clientIds.jwt)
            .setSubject(clientIds.jwt)
            .setAudience(overrides.aud ?? issuer)
            .setIssuedAt(overrides.iat ?? now)
            .setExpirationTime(overrides.exp ?? now + 60)
            .setJti(randomUUID())
            .sign(key);

        // A valid assertion whose claims are changed after signing.
        const [header, , signature] = (await signed({})).split(".");
        const tampered = `${header}.${base64urlJson({ ...claims, exp: now + 240 })}.${signature}`;
        const hs256 = await new SignJWT({ ...claims, jti: randomUUID() })
          .setProtectedHeader({ alg: "HS256" })
          .sign(new TextEncoder().encode("a-shared-secret-of-32-bytes-long!"));

        const cases: Array<[string, string, string]> = [
          ["audience of another endpoint (PAR)", await signed({ aud: parEndpoint }), jwtBearer],
          ["audience of the token endpoint URL (only the issuer identifier is accepted)", await signed({ aud: tokenEndpoint }), jwtBearer],
          ["audience of the issuer and another server at once", await signed({ aud: [issuer, "https://other-as.example"] }), jwtBearer],
          ["audience of another server", await signed({ aud: "https://evil.example/token" }), jwtBearer],
          ["expired two minutes ago", await signed({ iat: now - 180, exp: now - 120 }), jwtBearer],
          ["signed with a key not in the client's JWKS", await signed({}, strangerKey), jwtBearer],
          ["alg none, unsigned", hand({ alg: "none", typ: "JWT" }, claims), jwtBearer],
          ["alg none with the signature of a valid assertion", hand({ alg: "none" }, claims, (await signed({})).split(".")[2]), jwtBearer],
          ["HS256 (client_secret_jwt is not accepted)", hs256, jwtBearer],
          ["a valid signature over altered claims (exp pushed back)", tampered, jwtBearer],
          ["not a JWT at all", "not-a-jwt", jwtBearer],
          ["three segments of garbage", "a.b.c", jwtBearer],
          ["a header that is not JSON", `${Buffer.from("{alg").toString("base64url")}.${base64urlJson(claims)}.sig`, jwtBearer],
          ["client_assertion_type saml2-bearer", await signed({}), "urn:ietf:params:oauth:client-assertion-type:saml2-bearer"],
          ["client_assertion_type misspelled", await signed({}), `${jwtBearer}x`],
        ];

        for (const [name, assertion, type] of cases) {
          const reply = await postToken(live(), {
            grant_type: "authorization_code",
            code,
            redirect_uri: redirects.jwt,
            client_id: clientIds.jwt,
            client_assertion_type: type,
            client_assertion: assertion,
          });
          expect(reply.json?.error, `${name}: ${reply.text}`).toBe("invalid_client");
          expectInvalidClient(reply);
        }
        expect(await tokenCount()).toBe(before);
        expect((await findCode(live(), code))!.consumedAt).toBeNull();

        expectIssued(
          await postToken(live(), {
            grant_type: "authorization_code",
            code,
            redirect_uri: redirects.jwt,
            client_id: clientIds.jwt,
            client_assertion_type: jwtBearer,
            client_assertion: await signed({}),
          }),
        );
      });

      it("a replayed assertion (same jti) → invalid_client, even with another code; the code stays usable", async () => {
        const assertion = await clientAssertion(privateKey, clientIds.jwt, issuer);
        const form = (code: string) => ({
          grant_type: "authorization_code",
          code,
          redirect_uri: redirects.jwt,
          client_id: clientIds.jwt,
          client_assertion_type: jwtBearer,
          client_assertion: assertion,
        });
        expectIssued(await postToken(live(), form(await codeFor("jwt"))));

        const second = await codeFor("jwt");
        const before = await tokenCount();
        expectInvalidClient(await postToken(live(), form(second)));
        // Also as a refresh request.
        expectInvalidClient(
          await postToken(live(), { grant_type: "refresh_token", refresh_token: "x".repeat(43), client_assertion_type: jwtBearer, client_assertion: assertion }),
        );
        expect(await tokenCount()).toBe(before);
        expect((await findCode(live(), second))!.consumedAt).toBeNull();
        expectIssued(await exchange("jwt", second));
      });

      it("the same jti in a new assertion is a replay too", async () => {
        const jti = randomUUID();
        expectIssued(
          await postToken(live(), {
            grant_type: "authorization_code",
            code: await codeFor("jwt"),
            redirect_uri: redirects.jwt,
            client_id: clientIds.jwt,
            client_assertion_type: jwtBearer,
            client_assertion: await clientAssertion(privateKey, clientIds.jwt, issuer, jti),
          }),
        );
        expectInvalidClient(
          await postToken(live(), {
            grant_type: "authorization_code",
            code: await codeFor("jwt"),
            redirect_uri: redirects.jwt,
            client_id: clientIds.jwt,
            client_assertion_type: jwtBearer,
            client_assertion: await clientAssertion(privateKey, clientIds.jwt, issuer, jti),
          }),
        );
      });
    });

    describe("invalid_grant (400)", () => {
      it("an unknown code", async () => {
        const before = await tokenCount();
        expectTokenError(await exchange("basic", "A".repeat(43)), 400, "invalid_grant");
        expectTokenError(await exchange("basic", "not-a-code"), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);
      });

      it("an expired code", async () => {
        const code = await codeFor("basic");
        await live()
          .database.db.updateTable("one_time_records")
          .set({ expires_at: Date.now() - 1000 })
          .where("kind", "=", "authorization_code")
          .where("key_hash", "=", storedKeyOf(code))
          .execute();
        const before = await tokenCount();
        expectTokenError(await exchange("basic", code), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);
      });

      it("a code issued to another client; the code is left to its client, which can still redeem it", async () => {
        const code = await codeFor("basic");
        const before = await tokenCount();
        // With the other client's own redirect_uri, and with the one the code was issued for.
        expectTokenError(await exchange("post", code), 400, "invalid_grant");
        expectTokenError(await exchange("post", code, { redirect_uri: redirects.basic }), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);
        expect((await findCode(live(), code))!.consumedAt).toBeNull();
        expectIssued(await exchange("basic", code));
      });

      it("a redirect_uri that differs from the authorization request's; the failed check burns the code", async () => {
        const code = await codeFor("basic");
        const before = await tokenCount();
        for (const redirectUri of [`${redirects.basic}/`, "https://basic.example/CB", redirects.post]) {
          // Only the first attempt gets as far as the redirect_uri check; the code is used up by it.
          expectTokenError(await exchange("basic", code, { redirect_uri: redirectUri }), 400, "invalid_grant");
        }
        expectTokenError(await exchange("basic", code), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);
      });

      it("a wrong code_verifier; the failed check burns the code", async () => {
        const { verifier, challenge } = pkce();
        const code = await codeFor("basic", { codeChallenge: challenge });
        const before = await tokenCount();
        expectTokenError(await exchange("basic", code, { code_verifier: pkce().verifier }), 400, "invalid_grant");
        expectTokenError(await exchange("basic", code, { code_verifier: verifier }), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);
      });

      it.each([
        ["the challenge itself", (p: { verifier: string; challenge: string }) => p.challenge],
        ["a verifier too short (42 characters)", (p: { verifier: string; challenge: string }) => p.verifier.slice(0, 42)],
        ["the verifier with an extra character", (p: { verifier: string; challenge: string }) => `${p.verifier}a`],
      ])("code_verifier: %s → invalid_grant", async (_name, pick) => {
        const pair = pkce();
        const code = await codeFor("basic", { codeChallenge: pair.challenge });
        expectTokenError(await exchange("basic", code, { code_verifier: pick(pair) }), 400, "invalid_grant");
      });

      it("no code_verifier for a code issued with a code_challenge", async () => {
        const { verifier, challenge } = pkce();
        const code = await codeFor("basic", { codeChallenge: challenge });
        const before = await tokenCount();
        expectTokenError(await exchange("basic", code), 400, "invalid_grant");
        expectTokenError(await exchange("basic", code, { code_verifier: verifier }), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);
      });

      it("a code_verifier for a code issued without a code_challenge", async () => {
        const code = await codeFor("basic");
        const before = await tokenCount();
        expectTokenError(await exchange("basic", code, { code_verifier: pkce().verifier }), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);
      });

      it("a public client's code issued without PKCE cannot be redeemed", async () => {
        // The authorization endpoint no longer issues one (public clients must send code_challenge); a code stored
        // before that rule is still refused here.
        const code = randomUUID();
        const now = Date.now();
        await new OneTimeRecords(live().database).issue({
          kind: "authorization_code",
          keyHash: storedKeyOf(code),
          owner: clientIds.public,
          payload: { clientId: clientIds.public, redirectUri: redirects.public, codeChallenge: null, nonce: null, scopes: ["openid"], authorizationDetails: [], grantId: "g", userId: user.row.id, authTime: now, acr: "low", amr: ["pwd"] },
          now,
          ttlMs: 60_000,
        });
        const before = await tokenCount();
        expectTokenError(await exchange("public", code), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);
      });

      it("an unknown refresh token, and an access token presented as a refresh token", async () => {
        const tokens = expectIssued(await exchange("basic", await codeFor("basic", { scope: "openid offline_access" })));
        const before = await tokenCount();
        expectTokenError(await refresh("basic", "B".repeat(43)), 400, "invalid_grant");
        expectTokenError(await refresh("basic", tokens.access_token), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);
        // Neither attempt harmed the real tokens.
        expect((await getUserinfo(live(), tokens.access_token)).status).toBe(200);
        expectIssued(await refresh("basic", tokens.refresh_token!));
      });

      it("codes and tokens stored before ordered secrets (43 characters, keyed by their whole SHA-256) still work", async () => {
        const db = live().database.db;
        const legacy = () => randomBytes(32).toString("base64url");
        // A code as the previous version stored it: its record keyed by the SHA-256 of a 43-character value.
        const code = await codeFor("basic", { scope: "openid offline_access" });
        const oldCode = legacy();
        await db.updateTable("one_time_records").set({ key_hash: sha256Hex(oldCode) }).where("key_hash", "=", storedKeyOf(code)).executeTakeFirstOrThrow();
        expect(oldCode).toHaveLength(43);
        expect(storedKeyOf(oldCode)).toBe(sha256Hex(oldCode));
        expectTokenError(await exchange("basic", code), 400, "invalid_grant");
        const tokens = expectIssued(await exchange("basic", oldCode));
        // Tokens as the previous version stored them.
        const oldAccess = legacy();
        const oldRefresh = legacy();
        for (const [value, old] of [[tokens.access_token, oldAccess], [tokens.refresh_token!, oldRefresh]] as const) {
          await db.updateTable("oidc_tokens").set({ token_hash: sha256Hex(old) }).where("token_hash", "=", storedKeyOf(value)).executeTakeFirstOrThrow();
        }
        expect((await getUserinfo(live(), oldAccess)).status).toBe(200);
        expect((await getUserinfo(live(), tokens.access_token)).status).toBe(401);
        const refreshed = expectIssued(await refresh("basic", oldRefresh));
        expect(refreshed.refresh_token).toMatch(/^[A-Za-z0-9_-]{51}$/);
        // Rotation used the old token up: presenting it again is a replay.
        expectTokenError(await refresh("basic", oldRefresh), 400, "invalid_grant");
      });

      it("a rotated refresh token", async () => {
        const first = expectIssued(await exchange("basic", await codeFor("basic", { scope: "openid offline_access" })));
        expectIssued(await refresh("basic", first.refresh_token!));
        const before = await tokenCount();
        expectTokenError(await refresh("basic", first.refresh_token!), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);
      });

      it("a refresh token of another client; the owner's token is left intact", async () => {
        const tokens = expectIssued(await exchange("post", await codeFor("post", { scope: "openid offline_access" })));
        const before = await tokenCount();
        expectTokenError(await refresh("basic", tokens.refresh_token!), 400, "invalid_grant");
        expectTokenError(await refresh("public", tokens.refresh_token!), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);
        expect((await tokenRow(tokens.refresh_token!))).toMatchObject({ consumed_at: null, revoked_at: null });
        expect((await getUserinfo(live(), tokens.access_token)).status).toBe(200);
        expectIssued(await refresh("post", tokens.refresh_token!));
      });
    });

    describe("unsupported_grant_type and unauthorized_client (400)", () => {
      it.each([
        ["password", { username: "someone", password: "secret" }],
        ["implicit", {}],
        ["urn:ietf:params:oauth:grant-type:jwt-bearer", { assertion: "a.b.c" }],
        ["urn:ietf:params:oauth:grant-type:device_code", { device_code: "x" }],
        ["AUTHORIZATION_CODE", {}],
      ] as Array<[string, Record<string, string>]>)("grant_type=%s → unsupported_grant_type", async (grantType, extra) => {
        const before = await tokenCount();
        expectTokenError(await token("basic", { grant_type: grantType, ...extra }), 400, "unsupported_grant_type");
        expect(await tokenCount()).toBe(before);
      });

      it("grant_type=client_credentials from a relying party (not an API account's client) → unauthorized_client, nothing issued", async () => {
        const before = await tokenCount();
        expectTokenError(await token("basic", { grant_type: "client_credentials", scope: "openid" }), 400, "unauthorized_client");
        expect(await tokenCount()).toBe(before);
      });

      it("a client registered for authorization_code only gets no refresh token even with offline_access, and refresh_token is unauthorized_client", async () => {
        const code = await codeFor("codeOnly", { scope: "openid offline_access" });
        const before = await tokenCount();
        const tokens = expectIssued(await exchange("codeOnly", code));
        expect(tokens.scope.split(" ").sort()).toEqual(["offline_access", "openid"]);
        expect(tokens).not.toHaveProperty("refresh_token");
        expect(tokens.id_token).toBeDefined();
        expect(await tokenCount()).toBe(before + 1);

        // Refresh is refused for what the client is, whatever token it presents: an unknown one or another client's live one.
        const foreign = expectIssued(await exchange("basic", await codeFor("basic", { scope: "openid offline_access" })));
        const afterForeign = await tokenCount();
        expectTokenError(await refresh("codeOnly", "C".repeat(43)), 400, "unauthorized_client");
        expectTokenError(await refresh("codeOnly", foreign.refresh_token!), 400, "unauthorized_client");
        expect(await tokenCount()).toBe(afterForeign);
        expectIssued(await refresh("basic", foreign.refresh_token!));
      });
    });

    describe("invalid_scope (400)", () => {
      it("a refresh asking for a scope that was not granted; nothing is issued and the refresh token stays usable", async () => {
        const tokens = expectIssued(await exchange("basic", await codeFor("basic", { scope: "openid profile offline_access" })));
        const before = await tokenCount();
        for (const scope of ["openid email", "openid profile offline_access email", "payments"]) {
          expectTokenError(await refresh("basic", tokens.refresh_token!, { scope }), 400, "invalid_scope");
        }
        expect(await tokenCount()).toBe(before);
        // The refused requests did not use up the token: it still refreshes, and nothing was revoked.
        const refreshed = expectIssued(await refresh("basic", tokens.refresh_token!));
        expect(refreshed.scope.split(" ").sort()).toEqual(["offline_access", "openid", "profile"]);
        expect((await getUserinfo(live(), tokens.access_token)).status).toBe(200);
      });
    });

    describe("code replay", () => {
      it("a second use → invalid_grant, and every token from the first use (and its refreshes) is revoked", async () => {
        const code = await codeFor("basic", { scope: "openid profile offline_access" });
        const first = expectIssued(await exchange("basic", code));
        const rotated = expectIssued(await refresh("basic", first.refresh_token!));
        expect((await getUserinfo(live(), first.access_token)).status).toBe(200);
        expect((await getUserinfo(live(), rotated.access_token)).status).toBe(200);

        const before = await tokenCount();
        expectTokenError(await exchange("basic", code), 400, "invalid_grant");
        expect(await tokenCount()).toBe(before);

        for (const accessToken of [first.access_token, rotated.access_token]) {
          const info = await getUserinfo(live(), accessToken);
          expect(info.status).toBe(401);
          expect(info.headers.get("www-authenticate")).toContain('error="invalid_token"');
        }
        expectTokenError(await refresh("basic", rotated.refresh_token!), 400, "invalid_grant");
        expectTokenError(await refresh("basic", first.refresh_token!), 400, "invalid_grant");
        for (const value of [first.access_token, first.refresh_token!, rotated.access_token, rotated.refresh_token!]) {
          expect((await tokenRow(value))!.revoked_at).not.toBeNull();
        }
      });

      it("a replay by another client neither succeeds nor revokes the rightful client's tokens", async () => {
        const code = await codeFor("basic", { scope: "openid offline_access" });
        const tokens = expectIssued(await exchange("basic", code));
        expectTokenError(await exchange("post", code, { redirect_uri: redirects.basic }), 400, "invalid_grant");
        expect((await getUserinfo(live(), tokens.access_token)).status).toBe(200);
        expectIssued(await refresh("basic", tokens.refresh_token!));
      });

      it("the same code redeemed by 10 concurrent requests: one redemption stores tokens, and the replays revoke them", async () => {
        const code = await codeFor("basic");
        const before = await tokenCount();
        const replies = await Promise.all(Array.from({ length: 10 }, () => exchange("basic", code)));
        // The one redemption that won may already have answered before any replay arrived, or may learn of
        // the replays once its tokens are stored and answer invalid_grant: either way, never two successes.
        const won = replies.filter((r) => r.status === 200);
        expect(won.length).toBeLessThanOrEqual(1);
        for (const reply of won) expectIssued(reply);
        for (const reply of replies.filter((r) => r.status !== 200)) expectTokenError(reply, 400, "invalid_grant");
        // Exactly one access token was stored (scope openid: no refresh token), and the replays revoked it.
        expect(await tokenCount()).toBe(before + 1);
        const stored = await familyRows(storedKeyOf(code));
        expect(stored).toHaveLength(1);
        expect(stored[0]!.revoked_at).not.toBeNull();
      });
    });

  });
}
