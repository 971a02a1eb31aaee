import { createHash, randomBytes } from "node:crypto";
import { createLocalJWKSet, jwtVerify, type JWTPayload } from "jose";
import { describe, expect, it } from "vitest";
import type { OidcClient } from "../../src/domain/oidc/client.ts";
import type { AuthorizationCodePayload } from "../../src/domain/oidc/flow/authorization-code.ts";
import { sha256Hex, storedKeyOf } from "../../src/domain/oidc/flow/secrets.ts";
import type { OidcUserRow, TokenRow } from "../../src/domain/oidc/model.ts";
import type { TokenResponse } from "../../src/domain/oidc/tokens/token-service.ts";
import { client, codeOf, issuer, lifetimes, OidcDomain, pkcePair, publicClient, redirectUri, tokenLifetimes } from "../support/oidc-domain.ts";

/**
 * The token endpoint's rules (TokenService) over in-memory ports: a code is
 * redeemed once, by its client, for its redirect_uri and PKCE verifier; a
 * refresh token rotates, and a replay revokes its family; DPoP bindings hold;
 * the ID token says what the authentication was. The same rules through real
 * requests are test/service/oidc-token-code.test.ts and oidc-token-refresh.test.ts.
 */

/** Two DPoP key thumbprints (RFC 7638: 43 base64url characters); the service only compares them. */
const keyA = createHash("sha256").update("key A").digest("base64url");
const keyB = createHash("sha256").update("key B").digest("base64url");

interface Setup {
  domain: OidcDomain;
  rp: OidcClient;
  user: OidcUserRow;
}

async function setup(registration: OidcClient = client(), userOptions: { totp?: boolean } = {}): Promise<Setup> {
  const domain = new OidcDomain();
  return { domain, rp: await domain.register(registration), user: await domain.user(userOptions) };
}

async function exchange({ domain, rp }: Setup, code: string, extra: Record<string, string> = {}, dpopJkt?: string): Promise<TokenResponse> {
  return (await domain.tokens.grant(rp, { grant_type: "authorization_code", code, redirect_uri: redirectUri, ...extra }, dpopJkt)) as TokenResponse;
}

async function refresh({ domain, rp }: Setup, refreshToken: string, extra: Record<string, string> = {}, dpopJkt?: string): Promise<TokenResponse> {
  return (await domain.tokens.grant(rp, { grant_type: "refresh_token", refresh_token: refreshToken, ...extra }, dpopJkt)) as TokenResponse;
}

/** Tokens from a code of `scope` (with offline_access: a refresh token too). */
async function tokensFor(s: Setup, scope = "openid offline_access"): Promise<TokenResponse> {
  const { code } = await s.domain.code(s.rp, s.user, { scope });
  return exchange(s, code);
}

/** The token as the store reads it back (revoked with its family, too). */
async function stored(s: Setup, token: string): Promise<TokenRow> {
  const row = await s.domain.stores.tokens.find(storedKeyOf(token));
  if (!row) throw new Error("no token stored under the token's key");
  return row;
}

/** Whether the access token would still be accepted: live, unrevoked, its grant live. */
async function accessTokenWorks(s: Setup, accessToken: string): Promise<boolean> {
  const found = await s.domain.stores.tokens.findWithGrant(storedKeyOf(accessToken));
  return !!found && found.token.revokedAt === null && found.token.expiresAt > s.domain.time.now && found.grant !== undefined;
}

/** Verifies the ID token as a relying party registered with `alg` would, against the published JWKS, at the domain's time. */
async function verifiedIdToken(s: Setup, idToken: string | undefined, alg = "ES256"): Promise<JWTPayload> {
  if (!idToken) throw new Error("no ID token");
  const { payload } = await jwtVerify(idToken, createLocalJWKSet(await s.domain.keys.jwks()), {
    issuer,
    audience: s.rp.clientId,
    algorithms: [alg],
    typ: "JWT",
    currentDate: new Date(s.domain.time.now),
  });
  return payload;
}

/** OIDC Core 3.1.3.6, computed here without the provider's code: the left half of SHA-256 of the access token. */
function expectedAtHash(accessToken: string): string {
  return createHash("sha256").update(accessToken, "ascii").digest().subarray(0, 16).toString("base64url");
}

/** A value no other row has. */
function fresh(): string {
  return randomBytes(16).toString("hex");
}

describe("authorization code exchange", () => {
  it("answers every member; only the tokens' keys are stored", async () => {
    const s = await setup();
    const response = await tokensFor(s, "openid profile offline_access");
    expect(response).toMatchObject({ token_type: "Bearer", expires_in: tokenLifetimes.accessTokenLifetimeSeconds, scope: "openid profile offline_access" });
    expect(response.grant_id).toBe((await s.domain.stores.oidc.findLatestGrant(s.user.id, s.rp.clientId))!.id);
    expect(response.authorization_details).toBeUndefined();
    expect(await stored(s, response.access_token)).toMatchObject({ kind: "access", userId: s.user.id, dpopJkt: null });
    expect(await stored(s, response.refresh_token!)).toMatchObject({ kind: "refresh", consumedAt: null });
    const keys = [...s.domain.stores.tables.tokens.keys()];
    expect(keys).not.toContain(response.access_token);
    expect(keys).not.toContain(response.refresh_token);
  });

  it("works once: a second use is invalid_grant and revokes every token the first issued, refreshed ones too", async () => {
    const s = await setup();
    const { code } = await s.domain.code(s.rp, s.user, { scope: "openid offline_access" });
    const first = await exchange(s, code);
    const refreshed = await refresh(s, first.refresh_token!);
    await expect(exchange(s, code)).rejects.toMatchObject({ error: "invalid_grant", description: expect.stringMatching(/already used/) });
    for (const token of [first.access_token, first.refresh_token!, refreshed.access_token, refreshed.refresh_token!]) {
      expect((await stored(s, token)).revokedAt).toBe(s.domain.time.now);
    }
    expect(await accessTokenWorks(s, refreshed.access_token)).toBe(false);
    await expect(refresh(s, refreshed.refresh_token!)).rejects.toMatchObject({ error: "invalid_grant" });
  });

  it("the same code twice at once: never two successes, one issuance stored, and it ends revoked", async () => {
    const s = await setup();
    const { code } = await s.domain.code(s.rp, s.user, { scope: "openid offline_access" });
    const results = await Promise.allSettled([exchange(s, code), exchange(s, code)]);
    expect(results.filter((r) => r.status === "fulfilled").length).toBeLessThanOrEqual(1);
    for (const r of results) if (r.status === "rejected") expect(r.reason).toMatchObject({ error: "invalid_grant" });
    const family = [...s.domain.stores.tables.tokens.values()].filter((t) => t.family === storedKeyOf(code));
    expect(family.map((t) => t.kind).sort()).toEqual(["access", "refresh"]);
    const read = await Promise.all(family.map((t) => s.domain.stores.tokens.find(t.tokenHash)));
    expect(read.every((t) => t?.revokedAt !== null)).toBe(true);
  });

  it("only by its client: another client's attempt is invalid_grant, and the code still works for its own client", async () => {
    const s = await setup();
    const other = await s.domain.register(client({ client_id: "rp-2" }));
    const { code } = await s.domain.code(s.rp, s.user);
    await expect(exchange({ ...s, rp: other }, code)).rejects.toMatchObject({ error: "invalid_grant", description: "the authorization code is not valid" });
    await exchange(s, code);
  });

  it("a replay by another client after the rightful use neither succeeds nor revokes the rightful client's tokens", async () => {
    const s = await setup();
    const other = await s.domain.register(client({ client_id: "rp-2" }));
    const { code } = await s.domain.code(s.rp, s.user);
    const tokens = await exchange(s, code);
    await expect(exchange({ ...s, rp: other }, code)).rejects.toMatchObject({ error: "invalid_grant" });
    expect(await accessTokenWorks(s, tokens.access_token)).toBe(true);
  });

  it("only for the redirect_uri of its request; the failed check burns the code", async () => {
    const s = await setup();
    const { code } = await s.domain.code(s.rp, s.user);
    await expect(exchange(s, code, { redirect_uri: `${redirectUri}/other` })).rejects.toMatchObject({
      error: "invalid_grant",
      description: "redirect_uri does not match the authorization request",
    });
    await expect(exchange(s, code)).rejects.toMatchObject({ error: "invalid_grant", description: expect.stringMatching(/already used/) });
  });

  describe("PKCE", () => {
    it("the verifier of the request's challenge redeems the code", async () => {
      const s = await setup();
      const { verifier, challenge } = pkcePair();
      const { code } = await s.domain.code(s.rp, s.user, { code_challenge: challenge, code_challenge_method: "S256" });
      await exchange(s, code, { code_verifier: verifier });
    });

    it.each([
      ["another verifier", (_challenge: string): Record<string, string> => ({ code_verifier: pkcePair().verifier }), "code_verifier does not match the code_challenge"],
      ["no verifier", (_challenge: string): Record<string, string> => ({}), "code_verifier is required for this code"],
      ["the challenge sent as verifier", (challenge: string): Record<string, string> => ({ code_verifier: challenge }), "code_verifier does not match the code_challenge"],
    ])("%s → invalid_grant, and the code is used up", async (_title, form, description) => {
      const s = await setup();
      const { verifier, challenge } = pkcePair();
      const { code } = await s.domain.code(s.rp, s.user, { code_challenge: challenge, code_challenge_method: "S256" });
      await expect(exchange(s, code, form(challenge))).rejects.toMatchObject({ error: "invalid_grant", description });
      await expect(exchange(s, code, { code_verifier: verifier })).rejects.toMatchObject({ error: "invalid_grant" });
    });

    it("a verifier for a code issued without a challenge → invalid_grant", async () => {
      const s = await setup();
      const { code } = await s.domain.code(s.rp, s.user);
      await expect(exchange(s, code, { code_verifier: pkcePair().verifier })).rejects.toMatchObject({
        error: "invalid_grant",
        description: "code_verifier sent for a code issued without code_challenge",
      });
    });

    it("a public client's code issued without a challenge cannot be redeemed", async () => {
      const s = await setup(publicClient());
      const sessionId = await s.domain.flow.startSession(s.user);
      await s.domain.stores.oidc.saveGrant({ id: "g-1", userId: s.user.id, clientId: s.rp.clientId, scopes: ["openid"], authorizationDetails: [], createdAt: 0, updatedAt: 0, revokedAt: null });
      // Validation refuses such a request; the rule at the token endpoint holds without it.
      const request = { ...s.domain.request(s.rp, { code_challenge: pkcePair().challenge, code_challenge_method: "S256" }), codeChallenge: undefined, codeChallengeMethod: undefined };
      const code = codeOf(await s.domain.flow.start(s.rp, request, "browser-1", sessionId));
      await expect(exchange(s, code)).rejects.toMatchObject({ error: "invalid_grant", description: "public clients must use PKCE" });
    });
  });

  it("expires: a minute after it was issued it is invalid_grant", async () => {
    const s = await setup();
    const { code } = await s.domain.code(s.rp, s.user);
    const second = (await s.domain.code(s.rp, s.user)).code;
    s.domain.time.advance(lifetimes.codeMs - 1);
    await exchange(s, code);
    s.domain.time.advance(1);
    await expect(exchange(s, second)).rejects.toMatchObject({ error: "invalid_grant", description: "the authorization code has expired" });
  });

  it("needs its grant: a code whose grant was revoked meanwhile is invalid_grant", async () => {
    const s = await setup();
    const { code } = await s.domain.code(s.rp, s.user);
    await s.domain.stores.oidc.revokeGrant((await payloadOf(s, code)).grantId, s.domain.time.now);
    await expect(exchange(s, code)).rejects.toMatchObject({ error: "invalid_grant", description: "the grant behind this code was revoked" });
  });
});

async function payloadOf(s: Setup, code: string): Promise<AuthorizationCodePayload> {
  return (await s.domain.stores.oneTime.find("authorization_code", storedKeyOf(code)))!.payload as AuthorizationCodePayload;
}

describe("secrets of the older shape (43 characters, stored under their whole SHA-256)", () => {
  it("a code and a refresh token issued so still work", async () => {
    const s = await setup();
    const { code } = await s.domain.code(s.rp, s.user, { scope: "openid offline_access" });
    const record = (await s.domain.stores.oneTime.find("authorization_code", storedKeyOf(code)))!;
    const olderCode = randomBytes(32).toString("base64url");
    await s.domain.stores.oneTime.issue({ kind: "authorization_code", keyHash: sha256Hex(olderCode), owner: s.rp.clientId, payload: record.payload, now: s.domain.time.now, ttlMs: lifetimes.codeMs });
    const tokens = await exchange(s, olderCode);
    const olderRefresh = randomBytes(32).toString("base64url");
    await s.domain.stores.tokens.insert([{ ...(await stored(s, tokens.refresh_token!)), tokenHash: sha256Hex(olderRefresh), family: fresh() }]);
    expect((await refresh(s, olderRefresh)).refresh_token).toHaveLength(51);
  });
});

describe("offline_access", () => {
  it("a refresh token only when offline_access was granted", async () => {
    const s = await setup();
    expect((await tokensFor(s, "openid")).refresh_token).toBeUndefined();
    expect((await tokensFor(s, "openid offline_access")).refresh_token).toBeTruthy();
  });

  it("none for a client not registered for refresh_token, even with offline_access", async () => {
    const s = await setup(client({ grant_types: ["authorization_code"] }));
    const response = await tokensFor(s, "openid offline_access");
    expect(response.refresh_token).toBeUndefined();
    expect([...s.domain.stores.tables.tokens.values()].map((t) => t.kind)).toEqual(["access"]);
  });
});

describe("refresh", () => {
  it("rotates: new tokens, the presented refresh token used up, the family kept", async () => {
    const s = await setup();
    const first = await tokensFor(s);
    s.domain.time.advance(1000);
    const second = await refresh(s, first.refresh_token!);
    expect(second.refresh_token).toBeTruthy();
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    expect((await stored(s, first.refresh_token!)).consumedAt).toBe(s.domain.time.now);
    expect((await stored(s, second.refresh_token!)).family).toBe((await stored(s, first.refresh_token!)).family);
    await refresh(s, second.refresh_token!);
  });

  it("a replayed (rotated) refresh token is invalid_grant and revokes the whole family", async () => {
    const s = await setup();
    const first = await tokensFor(s);
    const second = await refresh(s, first.refresh_token!);
    await expect(refresh(s, first.refresh_token!)).rejects.toMatchObject({ error: "invalid_grant", description: expect.stringMatching(/already used/) });
    expect(await accessTokenWorks(s, first.access_token)).toBe(false);
    expect(await accessTokenWorks(s, second.access_token)).toBe(false);
    await expect(refresh(s, second.refresh_token!)).rejects.toMatchObject({ error: "invalid_grant", description: "the refresh token is not valid" });
  });

  it("the same refresh token twice at once: never two successes, one rotation stored, and the whole family revoked", async () => {
    const s = await setup();
    const first = await tokensFor(s);
    const before = s.domain.stores.tables.tokens.size;
    const results = await Promise.allSettled([refresh(s, first.refresh_token!), refresh(s, first.refresh_token!)]);
    expect(results.filter((r) => r.status === "fulfilled").length).toBeLessThanOrEqual(1);
    for (const r of results) if (r.status === "rejected") expect(r.reason).toMatchObject({ error: "invalid_grant" });
    expect(s.domain.stores.tables.tokens.size).toBe(before + 2);
    const read = await Promise.all([...s.domain.stores.tables.tokens.keys()].map((key) => s.domain.stores.tokens.find(key)));
    expect(read.every((t) => t?.revokedAt !== null)).toBe(true);
  });

  it("only by its client: another client's attempt fails and leaves the token usable", async () => {
    const s = await setup();
    const other = await s.domain.register(client({ client_id: "rp-2" }));
    const tokens = await tokensFor(s);
    await expect(refresh({ ...s, rp: other }, tokens.refresh_token!)).rejects.toMatchObject({ error: "invalid_grant" });
    await refresh(s, tokens.refresh_token!);
  });

  it("an access token presented as a refresh token, and an expired refresh token, are invalid_grant", async () => {
    const s = await setup();
    const tokens = await tokensFor(s);
    await expect(refresh(s, tokens.access_token)).rejects.toMatchObject({ error: "invalid_grant" });
    s.domain.time.advance(tokenLifetimes.refreshTokenLifetimeSeconds * 1000);
    await expect(refresh(s, tokens.refresh_token!)).rejects.toMatchObject({ error: "invalid_grant", description: "the refresh token is not valid" });
  });

  it("a revoked grant ends its refresh tokens: invalid_grant", async () => {
    const s = await setup();
    const tokens = await tokensFor(s);
    await s.domain.stores.oidc.revokeGrant(tokens.grant_id, s.domain.time.now);
    await expect(refresh(s, tokens.refresh_token!)).rejects.toMatchObject({ error: "invalid_grant" });
    expect(await accessTokenWorks(s, tokens.access_token)).toBe(false);
  });

  it("a grant replaced with fewer rights ends the refresh tokens it no longer covers: invalid_grant", async () => {
    const s = await setup();
    const tokens = await tokensFor(s, "openid profile offline_access");
    const grant = (await s.domain.stores.oidc.findGrant(tokens.grant_id))!;
    await s.domain.stores.oidc.saveGrant({ ...grant, scopes: ["openid", "offline_access"], updatedAt: s.domain.time.now + 1 });
    await expect(refresh(s, tokens.refresh_token!)).rejects.toMatchObject({ error: "invalid_grant", description: expect.stringMatching(/replaced with fewer rights/) });
  });

  it("a narrower scope narrows the access token; the new refresh token keeps the original scope (RFC 6749 §6)", async () => {
    const s = await setup();
    const tokens = await tokensFor(s, "openid profile offline_access");
    const narrowed = await refresh(s, tokens.refresh_token!, { scope: "openid" });
    expect(narrowed.scope).toBe("openid");
    expect((await stored(s, narrowed.refresh_token!)).scopes).toEqual(["openid", "profile", "offline_access"]);
  });

  it("a scope that was not granted is invalid_scope, and the refresh token stays usable", async () => {
    const s = await setup();
    const tokens = await tokensFor(s);
    await expect(refresh(s, tokens.refresh_token!, { scope: "openid email" })).rejects.toMatchObject({ error: "invalid_scope" });
    await refresh(s, tokens.refresh_token!);
  });
});

describe("DPoP", () => {
  async function publicTokens(key: string | undefined) {
    const s = await setup(publicClient());
    const { verifier, challenge } = pkcePair();
    const { code } = await s.domain.code(s.rp, s.user, { scope: "openid offline_access", code_challenge: challenge, code_challenge_method: "S256" });
    return { s, tokens: await exchange(s, code, { code_verifier: verifier }, key) };
  }

  it("a public client's tokens are bound to the proof's key, and the binding is kept on refresh", async () => {
    const { s, tokens } = await publicTokens(keyA);
    expect(tokens.token_type).toBe("DPoP");
    expect((await stored(s, tokens.access_token)).dpopJkt).toBe(keyA);
    expect((await stored(s, tokens.refresh_token!)).dpopJkt).toBe(keyA);
    const refreshed = await refresh(s, tokens.refresh_token!, {}, keyA);
    expect(refreshed.token_type).toBe("DPoP");
    expect((await stored(s, refreshed.access_token)).dpopJkt).toBe(keyA);
    expect((await stored(s, refreshed.refresh_token!)).dpopJkt).toBe(keyA);
  });

  it("a bound refresh token with another key or without a proof is invalid_grant, and stays usable with its key", async () => {
    const { s, tokens } = await publicTokens(keyA);
    await expect(refresh(s, tokens.refresh_token!, {}, keyB)).rejects.toMatchObject({ error: "invalid_grant", description: expect.stringMatching(/bound to another DPoP key/) });
    await expect(refresh(s, tokens.refresh_token!)).rejects.toMatchObject({ error: "invalid_grant" });
    expect((await stored(s, tokens.refresh_token!)).consumedAt).toBeNull();
    await refresh(s, tokens.refresh_token!, {}, keyA);
  });

  it("a public client's tokens without a proof are Bearer, and its refresh token is not bound", async () => {
    const { s, tokens } = await publicTokens(undefined);
    expect(tokens.token_type).toBe("Bearer");
    expect((await stored(s, tokens.refresh_token!)).dpopJkt).toBeNull();
  });

  it("a confidential client's refresh token is not bound: each refresh may bind its access token to a new key", async () => {
    const s = await setup();
    const { code } = await s.domain.code(s.rp, s.user, { scope: "openid offline_access" });
    const tokens = await exchange(s, code, {}, keyA);
    expect((await stored(s, tokens.refresh_token!)).dpopJkt).toBeNull();
    const refreshed = await refresh(s, tokens.refresh_token!, {}, keyB);
    expect((await stored(s, refreshed.access_token)).dpopJkt).toBe(keyB);
  });

  it("a code bound with dpop_jkt is refused with another key or none, without being used up", async () => {
    const s = await setup();
    const { code } = await s.domain.code(s.rp, s.user, { dpop_jkt: keyA });
    await expect(exchange(s, code, {}, keyB)).rejects.toMatchObject({ error: "invalid_grant", description: expect.stringMatching(/bound to another DPoP key/) });
    await expect(exchange(s, code)).rejects.toMatchObject({ error: "invalid_grant" });
    expect((await exchange(s, code, {}, keyA)).token_type).toBe("DPoP");
  });

  it("a client that must use DPoP is refused without a proof, and its code is not used up", async () => {
    const s = await setup(client({ dpop_bound_access_tokens: true }));
    const { code } = await s.domain.code(s.rp, s.user);
    await expect(exchange(s, code)).rejects.toMatchObject({ error: "invalid_dpop_proof" });
    await exchange(s, code, {}, keyA);
  });
});

describe("the ID token", () => {
  it("verifies against the published keys and says who, how and when: acr, amr, auth_time, sid, nonce, at_hash", async () => {
    const s = await setup(client(), { totp: true });
    const { code } = await s.domain.code(s.rp, s.user, { nonce: "n-0S6_WzA2Mj", scope: "openid offline_access" }, ["pwd", "otp"]);
    const payload = await payloadOf(s, code);
    const tokens = await exchange(s, code);
    const claims = await verifiedIdToken(s, tokens.id_token);
    const iat = Math.floor(s.domain.time.now / 1000);
    expect(claims).toEqual({
      iss: issuer,
      sub: s.user.id,
      aud: s.rp.clientId,
      azp: s.rp.clientId,
      iat,
      exp: iat + tokenLifetimes.idTokenLifetimeSeconds,
      auth_time: Math.floor(payload.authTime / 1000),
      nonce: "n-0S6_WzA2Mj",
      acr: "high",
      amr: ["pwd", "otp"],
      sid: payload.sid,
      at_hash: expectedAtHash(tokens.access_token),
      jpki_verified: false,
    });
  });

  it("on refresh keeps sub, auth_time, acr, amr and sid, has no nonce, and its at_hash is the new access token's", async () => {
    const s = await setup();
    const { code } = await s.domain.code(s.rp, s.user, { nonce: "n-1", scope: "openid offline_access" });
    const issued = await exchange(s, code);
    const first = await verifiedIdToken(s, issued.id_token);
    s.domain.time.advance(60_000);
    const tokens = await refresh(s, issued.refresh_token!);
    const refreshed = await verifiedIdToken(s, tokens.id_token);
    expect(first.nonce).toBe("n-1");
    expect(refreshed.nonce).toBeUndefined();
    expect(refreshed.iat).toBe((first.iat as number) + 60);
    expect(refreshed.at_hash).toBe(expectedAtHash(tokens.access_token));
    for (const claim of ["sub", "auth_time", "acr", "amr", "sid"] as const) expect(refreshed[claim]).toEqual(first[claim]);
  });

  it("jpki_verified says what the JPKI side says of the user at each issuance, refreshes included", async () => {
    const s = await setup();
    const tokens = await tokensFor(s);
    expect((await verifiedIdToken(s, tokens.id_token)).jpki_verified).toBe(false);
    s.domain.jpkiVerified.add(s.user.id);
    expect((await verifiedIdToken(s, (await refresh(s, tokens.refresh_token!)).id_token)).jpki_verified).toBe(true);
  });

  it("is signed with the client's registered alg (RS256)", async () => {
    const s = await setup(client({ id_token_signed_response_alg: "RS256" }));
    const tokens = await tokensFor(s, "openid");
    expect((await verifiedIdToken(s, tokens.id_token, "RS256")).at_hash).toBe(expectedAtHash(tokens.access_token));
  });

  it("is not issued without the openid scope", async () => {
    const s = await setup(client({ scope: "profile offline_access" }));
    const tokens = await tokensFor(s, "profile");
    expect(tokens.id_token).toBeUndefined();
  });
});
