import { describe, expect, it } from "vitest";
import { OAuthError } from "../../src/domain/oidc/oauth-error.ts";
import { requireOpenidScope, userinfoClaims, type UserinfoToken } from "../../src/domain/oidc/userinfo.ts";
import { providerMetadata } from "../../src/domain/oidc/discovery.ts";
import { confirmsLogout, logoutConfirmationToken, signedOutRedirect } from "../../src/domain/oidc/logout.ts";
import { defaultAcrPolicy } from "../../src/domain/oidc/acr.ts";

const token = (over: Partial<UserinfoToken> = {}): UserinfoToken => ({
  scopes: ["openid"],
  dpopJkt: null,
  authTime: 1_700_000_000_999,
  acr: "low",
  amr: ["pwd"],
  sid: "s-1",
  claimsLocales: null,
  ...over,
});
const user = { id: "u-1", login: "taro", email: "taro@example.jp", name: "見本 太郎", localizedNames: [{ tag: "en", value: "Taro Mihon" }] };

describe("UserInfo claims (OIDC Core 5.3)", () => {
  it("answers the authentication always, and names and email only with their scopes", () => {
    expect(userinfoClaims(token(), user, false)).toEqual({
      sub: "u-1", auth_time: 1_700_000_000, acr: "low", amr: ["pwd"], sid: "s-1", jpki_verified: false,
    });
    const full = userinfoClaims(token({ scopes: ["openid", "profile", "email"] }), user, true);
    expect(full).toMatchObject({ name: "見本 太郎", preferred_username: "taro", email: "taro@example.jp", email_verified: false, jpki_verified: true });
  });

  it("follows claims_locales for the name and leaves out an absent sid or email", () => {
    const claims = userinfoClaims(token({ scopes: ["openid", "profile", "email"], sid: null, claimsLocales: ["en"] }), { ...user, email: null }, false);
    expect(claims.name).toBe("Taro Mihon");
    expect(claims).not.toHaveProperty("sid");
    expect(claims).not.toHaveProperty("email");
  });

  it("refuses a token without openid with 403 and the scheme of the token", () => {
    expect(() => requireOpenidScope({ scopes: ["openid"], dpopJkt: null })).not.toThrow();
    for (const [dpopJkt, scheme] of [[null, "Bearer"], ["jkt", "DPoP"]] as const) {
      try {
        requireOpenidScope({ scopes: ["profile"], dpopJkt });
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(OAuthError);
        const error = e as OAuthError;
        expect(error.error).toBe("insufficient_scope");
        expect(error.status).toBe(403);
        expect(error.wwwAuthenticate).toMatch(new RegExp(`^${scheme} realm="shomei", error="insufficient_scope"`));
      }
    }
  });
});

describe("provider metadata", () => {
  const endpoints = { authorization: "https://id.example/a", par: "https://id.example/p", token: "https://id.example/t", userinfo: "https://id.example/u", jwks: "https://id.example/j", revocation: "https://id.example/r", introspection: "https://id.example/i", grants: "https://id.example/g", registration: "https://id.example/reg" };
  const metadata = providerMetadata({
    issuer: "https://id.example", endpoints, policy: defaultAcrPolicy, advertiseAuthorizationResponseIss: true,
    authorizationDetailsTypes: ["payment_initiation"], uiLocales: ["ja", "en"],
  });

  it("names the endpoints and the inputs it was given", () => {
    expect(metadata).toMatchObject({
      issuer: "https://id.example", token_endpoint: "https://id.example/t", end_session_endpoint: "https://id.example/auth/logout",
      authorization_details_types_supported: ["payment_initiation"], ui_locales_supported: ["ja", "en"],
      authorization_response_iss_parameter_supported: true,
    });
  });

  it("offers only what the rules accept: code flow, S256, no none or HS signing", () => {
    expect(metadata.response_types_supported).toEqual(["code"]);
    expect(metadata.code_challenge_methods_supported).toEqual(["S256"]);
    expect(metadata.id_token_signing_alg_values_supported).not.toContain("none");
    expect((metadata.id_token_signing_alg_values_supported as string[]).some((alg) => alg.startsWith("HS"))).toBe(false);
    expect(metadata.revocation_endpoint_auth_methods_supported).not.toContain("none");
    expect(metadata.token_endpoint_auth_methods_supported).toContain("none");
  });
});

describe("end-session rules", () => {
  it("returns to the registered target with state appended to its own query", () => {
    expect(signedOutRedirect({ postLogoutRedirectUri: "https://rp.example/bye?from=idp", state: "x y" })).toBe("https://rp.example/bye?from=idp&state=x+y");
    expect(signedOutRedirect({ postLogoutRedirectUri: "https://rp.example/bye" })).toBe("https://rp.example/bye");
    expect(signedOutRedirect({})).toBeUndefined();
  });

  it("binds the confirmation token to one session and one server key", () => {
    const key = Buffer.alloc(32, 7);
    const token = logoutConfirmationToken(key, "session-a");
    expect(confirmsLogout(key, "session-a", token)).toBe(true);
    expect(confirmsLogout(key, "session-b", token)).toBe(false);
    expect(confirmsLogout(Buffer.alloc(32, 8), "session-a", token)).toBe(false);
    expect(confirmsLogout(key, "session-a", undefined)).toBe(false);
    expect(confirmsLogout(key, "session-a", token.slice(0, -1))).toBe(false);
  });
});
