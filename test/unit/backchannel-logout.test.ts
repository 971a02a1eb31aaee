import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.ts";
import { backchannelLogoutEvent, logoutTokenClaims, signLogoutToken } from "../../src/domain/oidc/backchannel-logout/logout-token.ts";
import { checkServerCalledUris } from "../../src/domain/oidc/server-called-uris.ts";
import { sha256Hex } from "../../src/domain/oidc/flow/secrets.ts";
import { signingAlgs } from "../../src/domain/oidc/keys/signing-algorithms.ts";
import { client, codeOf, issuer, OidcDomain } from "../support/oidc-domain.ts";

/** Back-Channel Logout 1.0: the registration's rules, the logout token's claims, and who the flow remembers. */
describe("backchannel_logout_uri in client metadata", () => {
  it("is kept with backchannel_logout_session_required; absent, the client is not told", () => {
    expect(client()).not.toHaveProperty("backchannelLogoutUri");
    const listening = client({ backchannel_logout_uri: "https://rp.example/bcl?tenant=1", backchannel_logout_session_required: true });
    expect(listening).toMatchObject({ backchannelLogoutUri: "https://rp.example/bcl?tenant=1", backchannelLogoutSessionRequired: true });
  });

  it.each([
    ["a fragment", "https://rp.example/bcl#x"],
    ["plain http away from loopback", "http://rp.example/bcl"],
    ["a relative reference", "/bcl"],
    ["another scheme", "ftp://rp.example/bcl"],
  ])("refuses %s, naming the field", (_, uri) => {
    expect(() => client({ backchannel_logout_uri: uri })).toThrow(expect.objectContaining({ code: "invalid_field", field: "backchannel_logout_uri" }));
  });

  it("takes http on loopback, as redirect URIs do; production mode then refuses it (and any private address) by name", () => {
    const local = client({ backchannel_logout_uri: "http://127.0.0.1:8081/bcl" });
    expect(() => checkServerCalledUris(local, true)).not.toThrow();
    for (const uri of ["http://127.0.0.1:8081/bcl", "https://localhost/bcl", "https://10.0.0.8/bcl"]) {
      const refused = (() => {
        try {
          checkServerCalledUris(client({ backchannel_logout_uri: uri }), false);
        } catch (error) {
          return error;
        }
      })();
      expect(refused, uri).toBeInstanceOf(DomainError);
      expect(refused).toMatchObject({ code: "invalid_field", field: "backchannel_logout_uri", message: expect.stringMatching(/^backchannel_logout_uri: must /) });
    }
    expect(() => checkServerCalledUris(client({ backchannel_logout_uri: "https://rp.example/bcl" }), false)).not.toThrow();
    expect(() => checkServerCalledUris(client(), false)).not.toThrow();
  });
});

describe("the logout token", () => {
  it("carries iss, aud, iat, a short exp, jti, sub, sid and the event; never a nonce", () => {
    const claims = logoutTokenClaims({ issuer, clientId: "rp", userId: "user-1", sid: "sid-1", jti: "jti-1", now: 1_700_000_000_500 });
    expect(claims).toStrictEqual({
      iss: issuer,
      aud: "rp",
      iat: 1_700_000_000,
      exp: 1_700_000_120,
      jti: "jti-1",
      sub: "user-1",
      sid: "sid-1",
      events: { [backchannelLogoutEvent]: {} },
    });
  });

  it("is signed with the client's ID token algorithm (each of ES256, RS256, PS256, EdDSA), typ logout+jwt, and verifies against the JWKS", async () => {
    const domain = new OidcDomain();
    for (const alg of signingAlgs) {
      const claims = logoutTokenClaims({ issuer, clientId: "rp", userId: "user-1", sid: "sid-1", jti: `jti-${alg}`, now: Date.now() });
      const token = await signLogoutToken(domain.keys, alg, claims);
      expect(decodeProtectedHeader(token)).toEqual({ alg, typ: "logout+jwt", kid: (await domain.keys.active(alg)).kid });
      const { payload } = await jwtVerify(token, createLocalJWKSet(await domain.keys.jwks()), { issuer, audience: "rp", typ: "logout+jwt", algorithms: [alg] });
      expect(payload).toEqual(claims);
    }
  });
});

describe("the clients of a session", () => {
  it("a client with a backchannel_logout_uri is remembered with the session's sid when it is issued a code; others are not", async () => {
    const domain = new OidcDomain();
    const listening = await domain.register(client({ client_id: "listening", backchannel_logout_uri: "https://listening.example/bcl" }));
    const quiet = await domain.register(client({ client_id: "quiet" }));
    const user = await domain.user();
    const { sessionId } = await domain.code(listening, user);
    codeOf(await domain.start(listening, {}, sessionId));
    await domain.code(quiet, user);
    const records = domain.stores.oidc.sessionClients;
    expect([...records.values()]).toEqual([
      { sessionIdHash: sha256Hex(sessionId), clientId: "listening", sid: expect.stringMatching(/^[\w-]{43}$/), userId: user.id, createdAt: domain.time.now },
    ]);
  });
});
