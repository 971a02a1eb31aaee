import { generateKeyPairSync } from "node:crypto";
import { exportJWK, generateKeyPair } from "jose";
import { describe, expect, it } from "vitest";
import { registrationFromMetadata } from "../../src/domain/oidc/client-registration.ts";
import { DomainError } from "../../src/domain/errors.ts";
import { isHttpsRedirectUri } from "../../src/domain/oidc/redirect-uri.ts";
import {
  assertServerMeetsFapi2,
  brokenBy,
  brokenRule,
  fapi2ProofRequirements,
  fapi2Rules,
  requestUriLifetime,
  rotatesRefreshTokens,
  type ServerFacts,
} from "../../src/domain/oidc/fapi2-profile.ts";

/** The fapi2 client profile's rule table (src/domain/oidc/fapi2-profile.ts), rule by rule. */

const ecKey = { kty: "EC", crv: "P-256", x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", y: "x_FEzRu9m36HLN_tJ8aN_nTj_Js_5_2dC1Mm4dr0sVc" };

function fapi2Metadata(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    client_id: "bank-app",
    profile: "fapi2",
    token_endpoint_auth_method: "private_key_jwt",
    jwks: { keys: [ecKey] },
    redirect_uris: ["https://bank.example/cb"],
    ...overrides,
  };
}

function registrationError(metadata: Record<string, unknown>): DomainError {
  try {
    registrationFromMetadata(metadata, 0);
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error("the registration was accepted");
}

const goodServer: ServerFacts = {
  codeLifetimeSeconds: 60,
  requestUriLifetimeSeconds: 60,
  futureSkewSeconds: { clientAssertion: 30, dpopProof: 10, requestObject: 30 },
};

describe("the fapi2 rule table", () => {
  it("names every rule once, with a section and a requirement", () => {
    const ids = fapi2Rules.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const rule of fapi2Rules) {
      expect(rule.section, rule.id).toMatch(/^5\.[34]\./);
      expect(rule.requirement, rule.id).toMatch(/\S/);
    }
  });

  it("registers a confidential private_key_jwt client with https redirect URIs, implying PAR and DPoP", () => {
    const { client } = registrationFromMetadata(fapi2Metadata(), 0);
    expect(client.profile).toBe("fapi2");
    expect(client.requirePushedAuthorizationRequests).toBe(true);
    expect(client.dpopBoundAccessTokens).toBe(true);
    expect(client.idTokenSignedResponseAlg).toBe("ES256");
  });

  it("signs a fapi2 client's ID tokens with PS256, ES256 or EdDSA as it registers, never RS256", () => {
    for (const alg of ["PS256", "ES256", "EdDSA"]) {
      expect(registrationFromMetadata(fapi2Metadata({ id_token_signed_response_alg: alg }), 0).client.idTokenSignedResponseAlg).toBe(alg);
    }
    expect(registrationError(fapi2Metadata({ id_token_signed_response_alg: "RS256" })).message).toBe(
      "id_token_signed_response_alg: the fapi2 profile signs ID tokens with PS256, ES256, EdDSA only, never RS256",
    );
    // Without the profile RS256 stays a client's choice.
    expect(registrationFromMetadata(fapi2Metadata({ profile: undefined, id_token_signed_response_alg: "RS256" }), 0).client.idTokenSignedResponseAlg).toBe("RS256");
  });

  it("leaves a client without the profile as its metadata says", () => {
    const { client } = registrationFromMetadata(fapi2Metadata({ profile: undefined }), 0);
    expect(client.profile).toBeNull();
    expect(client.requirePushedAuthorizationRequests).toBe(false);
    expect(client.dpopBoundAccessTokens).toBe(false);
  });

  it.each([
    ["confidential-client", { token_endpoint_auth_method: "none", jwks: undefined }, "token_endpoint_auth_method"],
    ["private-key-jwt", { token_endpoint_auth_method: "client_secret_basic", jwks: undefined }, "token_endpoint_auth_method"],
    ["https-redirect-uris", { redirect_uris: ["http://localhost:8080/cb"] }, "redirect_uris"],
    ["id-token-algorithm", { id_token_signed_response_alg: "RS256" }, "id_token_signed_response_alg"],
  ])("refuses a registration that breaks %s", (id, overrides, field) => {
    const error = registrationError(fapi2Metadata(overrides));
    const rule = fapi2Rules.find((r) => r.id === id)!;
    expect(error.code).toBe("invalid_field");
    expect(error.field).toBe(field);
    expect(error.message).toBe(`${field}: ${rule.requirement}`);
  });

  it("reads a redirect URI's scheme parsed, as client add's own redirect check does, not by its first characters", () => {
    const facts = (uri: string) => ({ tokenEndpointAuthMethod: "private_key_jwt" as const, redirectUris: [uri], idTokenSignedResponseAlg: "ES256", jwksKeys: [ecKey] });
    const fapi2 = { profile: "fapi2" as const };
    // Schemes are case-insensitive, and a browser reads https:/x and https:x as https://x/: each is https.
    for (const uri of ["https://bank.example/cb", "HTTPS://bank.example/cb", "Https://bank.example/cb", "https:/bank.example/cb", "https:bank.example/cb"]) {
      expect(isHttpsRedirectUri(uri), uri).toBe(true);
      expect(brokenBy(fapi2, "registration", facts(uri)), uri).toBeUndefined();
    }
    for (const uri of ["http://localhost:8080/cb", "HTTP://bank.example/cb", "https", "https://", "httpsx://bank.example/cb", "bank.example/cb", "javascript:alert(1)"]) {
      expect(isHttpsRedirectUri(uri), uri).toBe(false);
      expect(brokenBy(fapi2, "registration", facts(uri))?.id, uri).toBe("https-redirect-uris");
    }
    // Upper-case HTTPS passes client add's redirect check; the profile no longer refuses what that check accepts.
    expect(registrationFromMetadata(fapi2Metadata({ redirect_uris: ["HTTPS://bank.example/cb"] }), 0).client.profile).toBe("fapi2");
  });

  it("refuses RSA keys under 2048 bits and accepts 2048", async () => {
    // jose will not make one this small: node:crypto does.
    const small = generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey.export({ format: "jwk" });
    const enough = await exportJWK((await generateKeyPair("PS256", { modulusLength: 2048, extractable: true })).publicKey);
    expect(registrationError(fapi2Metadata({ jwks: { keys: [small] } })).message).toMatch(/^jwks: .*2048 bits/);
    expect(registrationFromMetadata(fapi2Metadata({ jwks: { keys: [enough] } }), 0).client.profile).toBe("fapi2");
  });

  it("holds client assertions to the issuer as a string and to PS256, ES256, EdDSA", () => {
    const fapi2 = { profile: "fapi2" as const };
    const issuer = "https://id.example";
    expect(brokenBy(fapi2, "client_assertion", { issuer, aud: issuer, alg: "ES256" })).toBeUndefined();
    expect(brokenBy(fapi2, "client_assertion", { issuer, aud: [issuer], alg: "ES256" })?.id).toBe("assertion-audience");
    expect(brokenBy(fapi2, "client_assertion", { issuer, aud: `${issuer}/api/oidc/v1/token`, alg: "ES256" })?.id).toBe("assertion-audience");
    expect(brokenBy(fapi2, "client_assertion", { issuer, aud: issuer, alg: "RS256" })?.id).toBe("assertion-algorithm");
    expect(brokenBy({ profile: null }, "client_assertion", { issuer, aud: [issuer], alg: "RS256" })).toBeUndefined();
  });

  it("requires redirect_uri and PKCE S256 in a pushed request", () => {
    const fapi2 = { profile: "fapi2" as const };
    const full = new Map([["redirect_uri", "https://bank.example/cb"], ["code_challenge", "x".repeat(43)], ["code_challenge_method", "S256"]]);
    expect(brokenBy(fapi2, "pushed_request", { params: full })).toBeUndefined();
    const without = (name: string) => new Map([...full].filter(([k]) => k !== name));
    expect(brokenBy(fapi2, "pushed_request", { params: without("redirect_uri") })?.id).toBe("redirect-uri-in-par");
    expect(brokenBy(fapi2, "pushed_request", { params: without("code_challenge") })?.id).toBe("pkce-s256");
    expect(brokenBy(fapi2, "pushed_request", { params: new Map([...full, ["code_challenge_method", "plain"]]) })?.id).toBe("pkce-s256");
    expect(brokenBy({}, "pushed_request", { params: new Map() })).toBeUndefined();
  });

  it("holds the server to 60-second codes, request_uris under 600 seconds and the clock-skew window", () => {
    expect(brokenRule("server", goodServer)).toBeUndefined();
    expect(() => assertServerMeetsFapi2(goodServer)).not.toThrow();
    expect(brokenRule("server", { ...goodServer, codeLifetimeSeconds: 61 })?.id).toBe("code-lifetime");
    expect(brokenRule("server", { ...goodServer, requestUriLifetimeSeconds: 600 })?.id).toBe("request-uri-lifetime");
    expect(brokenRule("server", { ...goodServer, requestUriLifetimeSeconds: 4 })?.id).toBe("request-uri-lifetime");
    expect(brokenRule("server", { ...goodServer, futureSkewSeconds: { ...goodServer.futureSkewSeconds, dpopProof: 5 } })?.id).toBe("jwt-clock-skew");
    expect(brokenRule("server", { ...goodServer, futureSkewSeconds: { ...goodServer.futureSkewSeconds, clientAssertion: 61 } })?.id).toBe("jwt-clock-skew");
    expect(() => assertServerMeetsFapi2({ ...goodServer, codeLifetimeSeconds: 300 })).toThrow(/code-lifetime/);
  });

  it("shortens a fapi2 client's request_uri lifetime below 600 seconds, and no other client's", () => {
    expect(requestUriLifetime({ profile: "fapi2" }, 600)).toBe(599);
    expect(requestUriLifetime({ profile: "fapi2" }, 90)).toBe(90);
    expect(requestUriLifetime({ profile: null }, 600)).toBe(600);
  });

  it("asks DPoP proofs for FAPI algorithms, and for a nonce only when the setting says so", () => {
    expect(fapi2ProofRequirements({ profile: "fapi2" }, { requireDpopNonce: true })).toEqual({ algorithms: ["PS256", "ES256", "EdDSA"], requireNonce: true });
    expect(fapi2ProofRequirements({ profile: "fapi2" }, { requireDpopNonce: false }).requireNonce).toBe(false);
    expect(fapi2ProofRequirements({ profile: null }, { requireDpopNonce: true })).toEqual({});
  });

  it("does not rotate a fapi2 client's refresh tokens, and rotates every other client's", () => {
    expect(rotatesRefreshTokens({ profile: "fapi2" })).toBe(false);
    expect(rotatesRefreshTokens({ profile: null })).toBe(true);
    expect(rotatesRefreshTokens({})).toBe(true);
  });
});
